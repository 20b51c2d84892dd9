#include "connectors/imap/smtp.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <optional>
#include <utility>

#include "connectors/imap/internal/curl.h"
#include "connectors/imap/protocol.h"

namespace dispatchd::imap {
namespace {

// Server words kept for an error message.
constexpr std::size_t k_smtp_max_words = 300;

struct SmtpSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using SmtpSlist = std::unique_ptr<curl_slist, SmtpSlistDeleter>;

// The message as curl reads it; `handed_over` once curl has had its last byte.
struct SmtpUpload {
  std::string_view data;
  std::size_t offset = 0;
  bool handed_over = false;
};

std::size_t smtp_read_message(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* upload = static_cast<SmtpUpload*>(user);
  std::size_t n = std::min(size * count, upload->data.size() - upload->offset);
  std::memcpy(buffer, upload->data.data() + upload->offset, n);
  upload->offset += n;
  if (upload->offset == upload->data.size()) upload->handed_over = true;
  return n;
}

// The server's replies, as curl hands them to the header callback: the last one, and the
// first one after the message was handed over (the answer to the end of data).
struct SmtpReplies {
  const SmtpUpload* upload = nullptr;
  int last_code = 0;
  std::string last_line;
  int after_data_code = 0;
  std::string after_data_line;
};

std::size_t smtp_reply_line(char* data, std::size_t size, std::size_t count, void* user) {
  auto* replies = static_cast<SmtpReplies*>(user);
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  int code = 0;
  if (line.size() >= 3 && std::all_of(line.begin(), line.begin() + 3, [](char c) { return c >= '0' && c <= '9'; })) {
    code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
  }
  std::string kept(line.substr(0, k_smtp_max_words));
  for (char& c : kept) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  replies->last_code = code;
  replies->last_line = kept;
  if (replies->upload->handed_over && replies->after_data_code == 0 && code != 0) {
    replies->after_data_code = code;
    replies->after_data_line = std::move(kept);
  }
  return size * count;
}

bool smtp_address_ok(std::string_view address) {
  if (address.empty() || address.size() > 254 || address.find('@') == std::string_view::npos) return false;
  return std::all_of(address.begin(), address.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte < 0x7f && c != '<' && c != '>';
  });
}

bool smtp_domain_ok(std::string_view domain) {
  return std::all_of(domain.begin(), domain.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
  });
}

SmtpError smtp_invalid(std::string message) {
  return SmtpError{SmtpErrorKind::invalid_argument, 0, std::move(message)};
}

SmtpErrorKind smtp_refusal_kind(int code) { return code >= 500 ? SmtpErrorKind::rejected : SmtpErrorKind::temporary; }

SmtpError smtp_error(CURLcode code, long response_code, const SmtpUpload& upload, const SmtpReplies& replies,
                     const char* error_buffer) {
  std::string words = detail::curl_words(code, error_buffer);
  auto with_reply = [&](const std::string& line) {
    return line.empty() ? words : std::string(words + ": " + line).substr(0, k_smtp_max_words);
  };
  int reply = static_cast<int>(response_code);
  if (code == CURLE_LOGIN_DENIED) {
    if (reply >= 400 && reply < 500) return SmtpError{SmtpErrorKind::temporary, reply, with_reply(replies.last_line)};
    // An XOAUTH2 error challenge (334, its JSON in base64) ends the exchange in curl too.
    return SmtpError{SmtpErrorKind::auth_refused, reply >= 500 ? reply : 0, with_reply(replies.last_line)};
  }
  if (detail::is_tls_refusal(code)) return SmtpError{SmtpErrorKind::tls_refused, 0, words};
  switch (code) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_UNKNOWN_OPTION: return smtp_invalid(words);
    default: break;
  }
  if (upload.handed_over) {
    // The server has the message, or all but its final "."; only its answer says no.
    if (replies.after_data_code >= 400) {
      return SmtpError{smtp_refusal_kind(replies.after_data_code), replies.after_data_code,
                       with_reply(replies.after_data_line)};
    }
    return SmtpError{SmtpErrorKind::unknown, 0, with_reply("no answer after the message's end")};
  }
  if (reply >= 400 && reply < 600) return SmtpError{smtp_refusal_kind(reply), reply, with_reply(replies.last_line)};
  return SmtpError{SmtpErrorKind::temporary, 0, words};
}

}  // namespace

std::string_view to_string(SmtpErrorKind kind) {
  switch (kind) {
    case SmtpErrorKind::temporary: return "temporary";
    case SmtpErrorKind::rejected: return "rejected";
    case SmtpErrorKind::auth_refused: return "auth_refused";
    case SmtpErrorKind::tls_refused: return "tls_refused";
    case SmtpErrorKind::invalid_argument: return "invalid_argument";
    case SmtpErrorKind::unknown: return "unknown";
  }
  return "unknown";
}

bool certainly_not_sent(const SmtpError& error) { return error.kind != SmtpErrorKind::unknown; }

struct SmtpClient::Impl {
  Impl(ServerSettings s, std::string domain)
      : settings(std::move(s)), ehlo_domain(std::move(domain)), problem(check_settings(settings)) {
    if (!problem && !smtp_domain_ok(ehlo_domain)) problem = "the EHLO domain must be letters, digits, '.' and '-'";
    if (!problem) url = detail::server_url(settings, detail::Scheme::smtp) + "/" + ehlo_domain;
  }

  ServerSettings settings;
  std::string ehlo_domain;
  std::optional<std::string> problem;
  std::string url;
  char error[CURL_ERROR_SIZE] = {};
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  detail::Easy easy;  // after what its options point at during a transfer
};

SmtpClient::SmtpClient(ServerSettings settings, std::string ehlo_domain)
    : m_impl(std::make_unique<Impl>(std::move(settings), std::move(ehlo_domain))) {}
SmtpClient::~SmtpClient() = default;
SmtpClient::SmtpClient(SmtpClient&&) noexcept = default;
SmtpClient& SmtpClient::operator=(SmtpClient&&) noexcept = default;

std::expected<SmtpAccepted, SmtpError> SmtpClient::send(std::string_view from, std::span<const std::string> recipients,
                                                        std::string_view raw) {
  Impl& impl = *m_impl;
  if (impl.problem) return std::unexpected(smtp_invalid("settings: " + *impl.problem));
  if (impl.stop->load()) return std::unexpected(SmtpError{SmtpErrorKind::temporary, 0, "the client was interrupted"});
  if (!smtp_address_ok(from)) return std::unexpected(smtp_invalid("the sender is not an ASCII address"));
  if (recipients.empty()) return std::unexpected(smtp_invalid("no recipient"));
  SmtpSlist rcpt;
  for (const std::string& to : recipients) {
    if (!smtp_address_ok(to)) return std::unexpected(smtp_invalid("a recipient is not an ASCII address"));
    curl_slist* appended = curl_slist_append(rcpt.get(), ("<" + to + ">").c_str());
    if (appended == nullptr) throw std::bad_alloc();
    if (!rcpt) rcpt.reset(appended);  // the first node is the list; later ones are appended to it
  }
  if (raw.empty()) return std::unexpected(smtp_invalid("an empty message"));
  if (raw.find('\0') != std::string_view::npos) return std::unexpected(smtp_invalid("a NUL byte in the message"));
  std::string data = to_crlf(raw);

  if (!impl.easy) impl.easy = detail::new_easy();
  CURL* easy = impl.easy.get();
  curl_easy_reset(easy);  // keeps the connection
  detail::apply_settings(easy, impl.settings, impl.error);
  curl_easy_setopt(easy, CURLOPT_URL, impl.url.c_str());
  std::string mail_from = "<" + std::string(from) + ">";
  curl_easy_setopt(easy, CURLOPT_MAIL_FROM, mail_from.c_str());
  curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, rcpt.get());
  SmtpUpload upload{data};
  SmtpReplies replies;
  replies.upload = &upload;
  curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(easy, CURLOPT_READFUNCTION, smtp_read_message);
  curl_easy_setopt(easy, CURLOPT_READDATA, &upload);
  curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(data.size()));
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, smtp_reply_line);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &replies);
  detail::abort_when(easy, impl.stop.get());
  CURLcode code = curl_easy_perform(easy);
  long response_code = 0;
  if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response_code) != CURLE_OK) response_code = 0;
  // The options point at this call's locals: none may outlive it (curl says QUIT on the kept
  // connection when it closes it, and reads the answer through the header callback).
  detail::detach_callbacks(easy);
  curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, static_cast<curl_slist*>(nullptr));
  if (code != CURLE_OK) {
    auto error = smtp_error(code, response_code, upload, replies, impl.error);
    detail::drop_quietly(impl.easy);  // a fresh connection for the next send
    return std::unexpected(std::move(error));
  }
  return SmtpAccepted{replies.last_code != 0 ? replies.last_code : static_cast<int>(response_code), replies.last_line};
}

void SmtpClient::disconnect() { m_impl->easy.reset(); }

std::function<void()> SmtpClient::interrupter() {
  return [stop = m_impl->stop] { stop->store(true); };
}

}  // namespace dispatchd::imap
