#include "connectors/email/reply.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/gmail/base64url.h"

using dispatchd::email::build_reply;
using dispatchd::email::message_id_for;
using dispatchd::email::reply_subject;
using dispatchd::email::ReplyErrorKind;
using dispatchd::email::ReplySpec;

namespace {

ReplySpec sample_spec() {
  return ReplySpec{.from_address = "support@example.com",
                   .from_name = "Soporte",
                   .to_address = "ana@example.org",
                   .to_name = "Ana",
                   .original_subject = "Pedido 42",
                   .original_message_id = "orig-1@mail.example.org",
                   .original_references = {"root@mail.example.org"},
                   .body = "Hola Ana,\nsu pedido va en camino.\n",
                   .message_id = message_id_for("outbox-7", "example.com"),
                   // 2025-12-01 14:40:00 UTC
                   .date = std::chrono::sys_seconds(std::chrono::seconds(1764600000))};
}

// The unfolded value of the first header `name` (case-insensitive), or "" when absent.
std::string header(const std::string& message, std::string_view name) {
  const std::string head = message.substr(0, message.find("\r\n\r\n") + 2);
  std::size_t pos = 0;
  while (pos < head.size()) {
    std::size_t end = head.find("\r\n", pos);
    while (end + 2 < head.size() && (head[end + 2] == ' ' || head[end + 2] == '\t')) end = head.find("\r\n", end + 2);
    const std::string line = head.substr(pos, end - pos);
    const std::size_t colon = line.find(':');
    if (colon == name.size() && std::equal(name.begin(), name.end(), line.begin(),
                                           [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      std::string value;
      for (const char c : line.substr(colon + 1))
        if (c != '\r' && c != '\n') value.push_back(c == '\t' ? ' ' : c);
      return value.substr(value.find_first_not_of(' '));
    }
    pos = end + 2;
  }
  return "";
}

std::string body_of(const std::string& message) { return message.substr(message.find("\r\n\r\n") + 4); }

// Quoted-printable (RFC 2045 §6.7) undone by hand, so the test does not trust GMime to check GMime.
std::string decode_qp(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') {
      out.push_back(text[i]);
    } else if (text.substr(i + 1, 2) == "\r\n") {
      i += 2;
    } else {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    }
  }
  return out;
}

std::string decode_base64(std::string_view text) {
  std::string url;
  for (const char c : text) {
    if (c == '+')
      url.push_back('-');
    else if (c == '/')
      url.push_back('_');
    else if (c != '\r' && c != '\n')
      url.push_back(c);
  }
  return dispatchd::gmail::base64url_decode(url).value_or("<not base64>");
}

}  // namespace

TEST_CASE("gmail reply_subject: Re: once, whitespace normalized", "[gmail]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"Pedido 42", "Re: Pedido 42"},
      {"", "Re: "},
      {"   ", "Re: "},
      {"Re: Pedido", "Re: Pedido"},
      {"RE: Pedido", "RE: Pedido"},
      {"re:Pedido", "re:Pedido"},
      {"Re[2]: Pedido", "Re[2]: Pedido"},
      {"Re (3) : Pedido", "Re (3) : Pedido"},
      {"AW: Bestellung", "AW: Bestellung"},
      {"SV: Ordre", "SV: Ordre"},
      {"RV: Pedido", "RV: Pedido"},
      {"R: Ordine", "R: Ordine"},
      {"Antw: Bestelling", "Antw: Bestelling"},
      {"Re\xEF\xBC\x9A \xE6\xB3\xA8\xE6\x96\x87", "Re\xEF\xBC\x9A \xE6\xB3\xA8\xE6\x96\x87"},  // full-width colon
      {"  Pedido \t 42\r\n  urgente ", "Re: Pedido 42 urgente"},
      {"Fwd: Pedido", "Re: Fwd: Pedido"},
      {"Reunion: martes", "Re: Reunion: martes"},  // a word that starts with "Re" is not a prefix
      {"Re[]: x", "Re: Re[]: x"},
      {"Pedido \xff 42", "Re: Pedido \xEF\xBF\xBD 42"},  // invalid UTF-8 replaced, never passed on
      {"a\x01\x7f"
       "b",
       "Re: a b"},
  };
  for (const auto& [original, expected] : table) {
    INFO(original);
    CHECK(reply_subject(original) == expected);
  }
  const std::string long_subject(1000, 'x');
  CHECK(reply_subject(long_subject) == "Re: " + std::string(dispatchd::email::k_max_subject_points, 'x'));
}

TEST_CASE("gmail message_id_for: stable, injective, a valid dot-atom", "[gmail]") {
  CHECK(message_id_for("outbox-7", "example.com") == "dispatchd.outbox-2D7@example.com");
  CHECK(message_id_for("outbox-7", "example.com") == message_id_for("outbox-7", "example.com"));
  CHECK(message_id_for("a/b", "example.com") != message_id_for("a_b", "example.com"));
  CHECK(message_id_for("a-2F", "example.com") != message_id_for("a/", "example.com"));
  CHECK(message_id_for("k <x>\r\n@y", "Example.COM") == "dispatchd.k-20-3Cx-3E-0D-0A-40y@example.com");
  CHECK(message_id_for("", "example.com") == "dispatchd.-@example.com");
  CHECK(message_id_for("k", "ex ample>.com") == "dispatchd.k@example.com");
  CHECK(message_id_for("k", "") == "dispatchd.k@invalid");
  CHECK(message_id_for("\xc3\xb1", "example.com") == "dispatchd.-C3-B1@example.com");
}

TEST_CASE("gmail build_reply: the headers of a threaded, auto-submitted reply", "[gmail]") {
  const auto message = build_reply(sample_spec());
  REQUIRE(message.has_value());
  CHECK(header(*message, "From") == "Soporte <support@example.com>");
  CHECK(header(*message, "To") == "Ana <ana@example.org>");
  CHECK(header(*message, "Subject") == "Re: Pedido 42");
  CHECK(header(*message, "Date") == "Mon, 01 Dec 2025 14:40:00 +0000");
  CHECK(header(*message, "Message-ID") == "<dispatchd.outbox-2D7@example.com>");
  CHECK(header(*message, "In-Reply-To") == "<orig-1@mail.example.org>");
  CHECK(header(*message, "References") == "<root@mail.example.org> <orig-1@mail.example.org>");
  CHECK(header(*message, "Auto-Submitted") == "auto-replied");
  CHECK(header(*message, "MIME-Version") == "1.0");
  CHECK(header(*message, "Content-Type") == "text/plain; charset=utf-8");
  // Every line ends in CRLF: no bare LF and no bare CR anywhere.
  for (std::size_t i = 0; i < message->size(); ++i) {
    if ((*message)[i] == '\n') REQUIRE((i > 0 && (*message)[i - 1] == '\r'));
    if ((*message)[i] == '\r') REQUIRE((i + 1 < message->size() && (*message)[i + 1] == '\n'));
  }
}

TEST_CASE("gmail build_reply: non-ASCII subject, names and body are encoded and decode back", "[gmail]") {
  ReplySpec spec = sample_spec();
  spec.original_subject = "Pedido n\xC3\xBAmero 42";
  spec.to_name = "Jos\xC3\xA9 P\xC3\xA9rez";
  SECTION("mostly ASCII text goes quoted-printable") {
    spec.body = "Hola Jos\xC3\xA9,\nsu pedido est\xC3\xA1 en camino.\r\n\nSaludos";
    const auto message = build_reply(spec);
    REQUIRE(message.has_value());
    CHECK(header(*message, "Content-Transfer-Encoding") == "quoted-printable");
    CHECK(decode_qp(body_of(*message)) == "Hola Jos\xC3\xA9,\r\nsu pedido est\xC3\xA1 en camino.\r\n\r\nSaludos\r\n");
    CHECK(header(*message, "Subject").find("=?UTF-8?") != std::string::npos);
    CHECK(header(*message, "To").find("=?UTF-8?") != std::string::npos);
    CHECK(header(*message, "To").ends_with("<ana@example.org>"));
  }
  SECTION("mostly non-ASCII text goes base64, with CRLF inside") {
    spec.body =
        "\xE3\x81\x94\xE6\xB3\xA8\xE6\x96\x87\xE3\x81\x82\xE3\x82\x8A\xE3\x81\x8C\xE3\x81\xA8\xE3\x81\x86\n"
        "\xE4\xBA\x8C\xE8\xA1\x8C\xE7\x9B\xAE";
    const auto message = build_reply(spec);
    REQUIRE(message.has_value());
    CHECK(header(*message, "Content-Transfer-Encoding") == "base64");
    CHECK(decode_base64(body_of(*message)) ==
          "\xE3\x81\x94\xE6\xB3\xA8\xE6\x96\x87\xE3\x81\x82\xE3\x82\x8A\xE3\x81\x8C\xE3\x81\xA8\xE3\x81\x86\r\n"
          "\xE4\xBA\x8C\xE8\xA1\x8C\xE7\x9B\xAE\r\n");
  }
}

TEST_CASE("gmail build_reply: References bounded, root kept, strangers' bad ids left out", "[gmail]") {
  ReplySpec spec = sample_spec();
  spec.original_references.clear();
  for (int i = 0; i < 30; ++i) spec.original_references.push_back("r" + std::to_string(i) + "@x");
  spec.original_references.push_back("bad id@x");
  spec.original_references.push_back("r5@x");  // a duplicate
  spec.original_references.push_back("evil>\r\nBcc: a@b");
  const auto message = build_reply(spec);
  REQUIRE(message.has_value());
  std::string expected = "<r0@x>";
  for (int i = 12; i < 30; ++i) expected += " <r" + std::to_string(i) + "@x>";
  CHECK(header(*message, "References") == expected + " <orig-1@mail.example.org>");
  CHECK(header(*message, "Bcc").empty());

  spec.original_message_id = "no <good>";
  spec.original_references.clear();
  const auto without = build_reply(spec);
  REQUIRE(without.has_value());
  CHECK(header(*without, "In-Reply-To").empty());
  CHECK(header(*without, "References").empty());
}

TEST_CASE("gmail build_reply: refuses what it cannot send", "[gmail]") {
  const std::vector<std::pair<void (*)(ReplySpec&), ReplyErrorKind>> table = {
      {[](ReplySpec& s) { s.to_address = "ana@example.org\r\nBcc: x@y"; }, ReplyErrorKind::bad_address},
      {[](ReplySpec& s) { s.to_address = "ana.example.org"; }, ReplyErrorKind::bad_address},
      {[](ReplySpec& s) { s.to_address = "ana@"; }, ReplyErrorKind::bad_address},
      {[](ReplySpec& s) { s.to_address = ""; }, ReplyErrorKind::bad_address},
      {[](ReplySpec& s) { s.from_address = "Soporte <support@example.com>"; }, ReplyErrorKind::bad_address},
      {[](ReplySpec& s) { s.body = ""; }, ReplyErrorKind::empty_body},
      {[](ReplySpec& s) { s.body = " \r\n\t"; }, ReplyErrorKind::empty_body},
      {[](ReplySpec& s) { s.body = "Hola \xC3"; }, ReplyErrorKind::body_not_utf8},
      {[](ReplySpec& s) { s.body = std::string(dispatchd::email::k_max_reply_body_bytes + 1, 'a'); },
       ReplyErrorKind::body_too_large},
      {[](ReplySpec& s) { s.message_id = "no-at-sign"; }, ReplyErrorKind::bad_message_id},
  };
  for (const auto& [change, kind] : table) {
    ReplySpec spec = sample_spec();
    change(spec);
    const auto message = build_reply(spec);
    REQUIRE_FALSE(message.has_value());
    CHECK(message.error().kind == kind);
    CHECK_FALSE(message.error().message.empty());
  }
}

TEST_CASE("gmail build_reply: a display name cannot add a header", "[gmail]") {
  ReplySpec spec = sample_spec();
  spec.to_name = "Ana\r\nBcc: victim@example.net";
  const auto message = build_reply(spec);
  REQUIRE(message.has_value());
  CHECK(header(*message, "Bcc").empty());
  CHECK(header(*message, "To").ends_with("<ana@example.org>"));
}

TEST_CASE("gmail build_reply: whatever a stranger's names, subject and ids hold, the headers stay ours", "[gmail]") {
  const std::vector<std::string> allowed = {"Date",
                                            "From",
                                            "To",
                                            "Subject",
                                            "Message-Id",
                                            "In-Reply-To",
                                            "References",
                                            "Auto-Submitted",
                                            "MIME-Version",
                                            "Content-Type",
                                            "Content-Transfer-Encoding"};
  const std::string alphabet = std::string("aZ09 :;<>\"\\()@.,=?\t\r\n\x01\x7f\xc3\xa9\xff\xe2\x80") + "Bcc";
  std::mt19937 random(12);  // fixed: a failure must replay
  const auto noise = [&] {
    std::string out;
    for (std::size_t n = random() % 60; n > 0; --n) out.push_back(alphabet[random() % alphabet.size()]);
    return out;
  };
  for (int round = 0; round < 300; ++round) {
    ReplySpec spec = sample_spec();
    spec.from_name = noise();
    spec.to_name = noise();
    spec.original_subject = noise();
    spec.original_message_id = noise();
    spec.original_references = {noise(), noise()};
    const auto message = build_reply(spec);
    REQUIRE(message.has_value());
    const std::string head = message->substr(0, message->find("\r\n\r\n") + 2);
    std::vector<std::string> names;
    for (std::size_t pos = 0; pos < head.size(); pos = head.find("\r\n", pos) + 2) {
      if (head[pos] == ' ' || head[pos] == '\t') continue;  // a folded continuation
      names.push_back(head.substr(pos, head.find(':', pos) - pos));
    }
    INFO(*message);
    for (const std::string& name : names) CHECK(std::count(allowed.begin(), allowed.end(), name) == 1);
    std::sort(names.begin(), names.end());
    CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
    const std::string to = header(*message, "To");
    CHECK((to.ends_with(" <ana@example.org>") || to == "ana@example.org"));  // no name when it cleans to nothing
  }
}
