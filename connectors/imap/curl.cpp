#include <sys/socket.h>

#include <mutex>
#include <new>
#include <stdexcept>

#include "connectors/imap/internal/curl.h"

namespace dispatchd::imap::detail {

void curl_init_once() {
  static std::once_flag once;
  static CURLcode result = CURLE_OK;
  std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (result != CURLE_OK) throw std::runtime_error(std::string("curl_global_init: ") + curl_easy_strerror(result));
}

Easy new_easy() {
  curl_init_once();
  Easy easy(curl_easy_init());
  if (!easy) throw std::bad_alloc();
  return easy;
}

std::string server_url(const ServerSettings& settings, Scheme scheme) {
  bool implicit = settings.tls == TlsMode::implicit;
  std::uint16_t port = settings.port;
  if (port == 0) {
    if (scheme == Scheme::imap) {
      port = implicit ? 993 : 143;
    } else {
      port = implicit ? 465 : 587;
    }
  }
  std::string url = scheme == Scheme::imap ? (implicit ? "imaps://" : "imap://") : (implicit ? "smtps://" : "smtp://");
  if (settings.host.find(':') != std::string::npos) {
    url += "[" + settings.host + "]";
  } else {
    url += settings.host;
  }
  url += ":" + std::to_string(port);
  return url;
}

void apply_settings(CURL* easy, const ServerSettings& settings, char* error) {
  auto ms = [](std::chrono::milliseconds d) { return static_cast<long>(d.count()); };
  auto whole_seconds = [](std::chrono::milliseconds d) {
    return static_cast<long>(std::chrono::ceil<std::chrono::seconds>(d).count());
  };
  error[0] = '\0';
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "imap,imaps,smtp,smtps");
  // STARTTLS is required on the plain port; implicit TLS has it from the first byte.
  curl_easy_setopt(easy, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(easy, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  if (!settings.ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, settings.ca_file.c_str());
  curl_easy_setopt(easy, CURLOPT_USERNAME, settings.user.c_str());
  if (!settings.oauth_token.empty()) {
    curl_easy_setopt(easy, CURLOPT_XOAUTH2_BEARER, settings.oauth_token.c_str());
  } else {
    curl_easy_setopt(easy, CURLOPT_PASSWORD, settings.password.c_str());
  }
  if (!settings.sasl_mechanism.empty()) {
    std::string options = "AUTH=" + settings.sasl_mechanism;
    curl_easy_setopt(easy, CURLOPT_LOGIN_OPTIONS, options.c_str());  // curl copies it
  }
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, ms(settings.connect_timeout));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, ms(settings.operation_timeout));
  curl_easy_setopt(easy, CURLOPT_SERVER_RESPONSE_TIMEOUT, whole_seconds(settings.io_timeout));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, whole_seconds(settings.io_timeout));
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
}

namespace {

std::size_t curl_discard(char* /*data*/, std::size_t size, std::size_t count, void* /*user*/) { return size * count; }

int curl_stop_requested(void* stop, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(stop)->load() ? 1 : 0;
}

}  // namespace

void drop_quietly(Easy& easy) {
  if (!easy) return;
  curl_socket_t socket = CURL_SOCKET_BAD;
  if (curl_easy_getinfo(easy.get(), CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK && socket != CURL_SOCKET_BAD)
    ::shutdown(socket, SHUT_RDWR);
  easy.reset();
}

void abort_when(CURL* easy, const std::atomic<bool>* stop) {
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, curl_stop_requested);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(stop));
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
}

void detach_callbacks(CURL* easy) {
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, nullptr);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, nullptr);
  curl_easy_setopt(easy, CURLOPT_VERBOSE, 0L);
  curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, nullptr);
  curl_easy_setopt(easy, CURLOPT_DEBUGDATA, nullptr);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, curl_discard);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, curl_discard);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, nullptr);
  curl_easy_setopt(easy, CURLOPT_READDATA, nullptr);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
}

std::string curl_words(CURLcode code, const char* error) {
  if (error != nullptr && error[0] != '\0') return error;
  return curl_easy_strerror(code);
}

bool is_tls_refusal(CURLcode code) {
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE: return true;
    default: return false;
  }
}

}  // namespace dispatchd::imap::detail
