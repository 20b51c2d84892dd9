// The Gmail MIME decoder: the corpus in tests/data/mail/ (each NAME.eml or NAME.gmail.json with
// NAME.expected.json; see generate.py there for the keys), messages generated here that are too
// big to check in (a 10 MB attachment, 200 levels of nesting, thousands of parts), and the small
// pure functions.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "common/json_access.h"
#include "common/utf8.h"
#include "connectors/email/email.h"
#include "connectors/gmail/base64url.h"
#include "connectors/gmail/raw_message.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace dispatchd;
using email::DecodeErrorKind;

namespace {

const std::vector<std::string> k_none;

bool undecodable(const std::expected<email::Email, email::DecodeError>& result) {
  return !result || (result->text.empty() && !result->defects.empty());
}

bool contains_all(std::string_view text, const rapidjson::Value& needles, std::vector<std::string>& problems,
                  std::string_view what) {
  bool ok = true;
  for (const auto& needle : needles.GetArray()) {
    if (text.find(json::string_of(needle)) == std::string_view::npos) {
      problems.push_back(std::string(what) + " lacks " + json::to_string(needle) + ": " + std::string(text));
      ok = false;
    }
  }
  return ok;
}

// Every way `result` differs from `expected` (an object from NAME.expected.json).
std::vector<std::string> compare(const std::expected<email::Email, email::DecodeError>& result,
                                 const rapidjson::Value& expected) {
  std::vector<std::string> problems;
  if (const auto flag = json::bool_member(expected, "undecodable"); flag && *flag != undecodable(result))
    problems.push_back(*flag ? "expected undecodable" : "expected decodable");
  if (const auto error = json::string_member(expected, "error")) {
    if (result)
      problems.push_back("expected error " + *error);
    else if (*error != email::to_string(result.error().kind))
      problems.push_back("error " + std::string(email::to_string(result.error().kind)) + ", expected " + *error);
    return problems;
  }
  if (!result) {
    if (!json::bool_member(expected, "undecodable").value_or(false))
      problems.push_back("decode failed: " + result.error().message);
    return problems;
  }
  const email::Email& email = *result;
  const rapidjson::Document actual = test::parse_json(email::to_json(email));
  for (const auto& member : expected.GetObject()) {
    const std::string key = member.name.GetString();
    const rapidjson::Value& want = member.value;
    if (key == "text_contains") {
      contains_all(email.text, want, problems, "text");
    } else if (key == "full_text_contains") {
      contains_all(email.full_text, want, problems, "full_text");
    } else if (key == "subject_contains") {
      contains_all(email.subject, want, problems, "subject");
    } else if (key == "text_not_contains") {
      for (const auto& needle : want.GetArray())
        if (email.text.find(json::string_of(needle)) != std::string::npos)
          problems.push_back("text holds " + json::to_string(needle));
    } else if (key == "defects_contain") {
      for (const auto& phrase : want.GetArray())
        if (std::find(email.defects.begin(), email.defects.end(), json::string_of(phrase)) == email.defects.end())
          problems.push_back("no defect " + json::to_string(phrase) + " in " + json::to_string(actual["defects"]));
    } else if (key == "defects_nonempty") {
      if (want.GetBool() == email.defects.empty()) problems.push_back("defects: " + json::to_string(actual["defects"]));
    } else if (key == "counterpart") {
      if (email::counterpart(email) != json::string_of(want))
        problems.push_back("counterpart " + email::counterpart(email));
    } else if (key == "own" || key == "undecodable") {
      continue;
    } else if (!actual.HasMember(member.name)) {
      problems.push_back("unknown expected key " + key);
    } else if (actual[member.name] != want) {
      problems.push_back(key + ": got " + json::to_string(actual[member.name]) + ", expected " + json::to_string(want));
    }
  }
  return problems;
}

std::expected<email::Email, email::DecodeError> decode_file(const fs::path& path, const std::vector<std::string>& own) {
  const std::string bytes = test::read_file(path.string());
  if (path.string().ends_with(".gmail.json")) {
    auto raw = gmail::parse_raw_response(bytes);
    if (!raw) return std::unexpected(email::DecodeError{DecodeErrorKind::not_a_message, raw.error()});
    return email::decode(raw->bytes, own);
  }
  return email::decode(bytes, own);
}

std::string stem_of(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.substr(0, name.find('.'));
}

// A multipart/mixed message with `parts` small text/plain parts after a first body part.
std::string many_parts(int parts) {
  std::string raw = "From: a@example.com\r\nSubject: parts\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n";
  raw += "--b\r\nContent-Type: text/plain\r\n\r\nThe body.\r\n";
  for (int i = 0; i < parts; ++i)
    raw += "--b\r\nContent-Type: application/octet-stream; name=p" + std::to_string(i) + ".bin\r\n\r\nx\r\n";
  return raw + "--b--\r\n";
}

// `levels` multipart/mixed nested inside each other, the text at the bottom.
std::string deep_nesting(int levels) {
  std::string raw = "From: a@example.com\r\nSubject: deep\r\n";
  for (int i = 0; i < levels; ++i)
    raw += "Content-Type: multipart/mixed; boundary=b" + std::to_string(i) + "\r\n\r\n--b" + std::to_string(i) + "\r\n";
  raw += "Content-Type: text/plain\r\n\r\nBottom.\r\n";
  for (int i = levels; i-- > 0;) raw += "--b" + std::to_string(i) + "--\r\n";
  return raw;
}

template <typename F>
auto timed(F f) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  return std::pair{std::move(result), std::chrono::steady_clock::now() - start};
}

}  // namespace

TEST_CASE("every message of the mail corpus decodes to its expected fields", "[gmail][decode][corpus]") {
  const fs::path dir = test::source_path("tests/data/mail");
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path path = entry.path();
    const std::string name = path.filename().string();
    if (!name.ends_with(".eml") && !name.ends_with(".gmail.json")) continue;
    const fs::path expected_path = dir / (stem_of(path) + ".expected.json");
    INFO(name);
    REQUIRE(fs::exists(expected_path));
    const rapidjson::Document expected = test::parse_json(test::read_file(expected_path.string()));
    std::vector<std::string> own;
    if (const auto address = json::string_member(expected, "own")) own.push_back(*address);
    const auto result = decode_file(path, own);
    const auto problems = compare(result, expected);
    for (const auto& problem : problems) UNSCOPED_INFO(problem);
    CHECK(problems.empty());
    if (result) CHECK(utf8::is_valid(result->text));
    ++checked;
  }
  CHECK(checked >= 40);
}

TEST_CASE("mutated corpus messages decode or fail cleanly, with valid UTF-8 text", "[gmail][decode]") {
  // Deterministic mutations (a byte flipped, a span cut out, the tail dropped) of every
  // message: under ASan and UBSan this is a small fuzz run over the shapes the corpus covers.
  std::minstd_rand random(12);
  int decoded = 0;
  for (const auto& entry : fs::directory_iterator(test::source_path("tests/data/mail"))) {
    if (entry.path().extension() != ".eml") continue;
    const std::string original = test::read_file(entry.path().string());
    if (original.size() < 8) continue;
    for (int round = 0; round < 20; ++round) {
      std::string raw = original;
      const std::size_t at = random() % raw.size();
      switch (round % 3) {
        case 0: raw[at] = static_cast<char>(random() % 256); break;
        case 1: raw.erase(at, random() % 64); break;
        default: raw.resize(at); break;
      }
      const auto result = email::decode(raw, k_none, {.max_text_bytes = 512});
      if (!result) continue;
      ++decoded;
      INFO(entry.path().filename().string() << " round " << round);
      CHECK(utf8::is_valid(result->text));
      CHECK(utf8::is_valid(result->subject));
      CHECK(result->text.size() <= 512);
      CHECK(utf8::is_valid(email::to_json(*result)));
    }
  }
  CHECK(decoded > 500);
}

TEST_CASE("a 10 MB attachment is sized, not read into the text, and decodes quickly", "[gmail][decode][limits]") {
  std::string payload(10u << 20, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 7919u) >> 3);
  std::string encoded = gmail::base64url_encode(payload);
  for (char& c : encoded) c = c == '-' ? '+' : c == '_' ? '/' : c;  // standard base64 for MIME
  while (encoded.size() % 4) encoded += '=';
  std::string raw =
      "From: a@example.com\r\nSubject: big\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
      "--b\r\nContent-Type: text/plain\r\n\r\nSee the attachment.\r\n"
      "--b\r\nContent-Type: application/zip\r\nContent-Disposition: attachment; filename=big.zip\r\n"
      "Content-Transfer-Encoding: base64\r\n\r\n";
  for (std::size_t i = 0; i < encoded.size(); i += 76) raw += encoded.substr(i, 76) + "\r\n";
  raw += "--b--\r\n";
  const auto [result, elapsed] = timed([&] { return email::decode(raw); });
  REQUIRE(result);
  CHECK(result->text == "See the attachment.");
  REQUIRE(result->attachments.size() == 1);
  CHECK(result->attachments[0].name == "big.zip");
  CHECK(result->attachments[0].size == payload.size());
  CHECK(elapsed < std::chrono::seconds(10));
}

TEST_CASE("nesting and part counts are bounded", "[gmail][decode][limits]") {
  SECTION("200 levels of multipart: parts below max_depth are not walked, with a defect") {
    const auto [result, elapsed] = timed([] { return email::decode(deep_nesting(200)); });
    REQUIRE(result);
    CHECK(result->text.empty());
    CHECK_FALSE(result->defects.empty());
    CHECK(elapsed < std::chrono::seconds(5));
  }
  SECTION("within max_depth the bottom text is read") {
    const auto result = email::decode(deep_nesting(10));
    REQUIRE(result);
    CHECK(result->text == "Bottom.");
    CHECK(result->defects.empty());
  }
  SECTION("a lower max_depth stops sooner") {
    const auto result = email::decode(deep_nesting(10), k_none, {.max_depth = 4});
    REQUIRE(result);
    CHECK(result->text.empty());
    CHECK(std::find(result->defects.begin(), result->defects.end(), "nesting deeper than 4") != result->defects.end());
  }
  SECTION("20000 parts: the first max_parts are walked") {
    const auto [result, elapsed] = timed([] { return email::decode(many_parts(20000)); });
    REQUIRE(result);
    CHECK(result->text == "The body.");
    CHECK(result->attachments.size() == 254);  // 256 parts: the multipart, the body, 254 attachments
    CHECK(std::find(result->defects.begin(), result->defects.end(), "more than 256 parts") != result->defects.end());
    CHECK(elapsed < std::chrono::seconds(10));
  }
}

TEST_CASE("hostile shapes finish quickly and say what they lost", "[gmail][decode][limits]") {
  const auto has = [](const email::Email& email, std::string_view phrase) {
    return std::find(email.defects.begin(), email.defects.end(), phrase) != email.defects.end();
  };
  SECTION("100000 message/rfc822 inside each other: GMime's nesting guard") {
    std::string raw = "From: a@example.com\r\nSubject: deep\r\n";
    for (int i = 0; i < 100000; ++i) raw += "Content-Type: message/rfc822\r\n\r\nSubject: x\r\n";
    const auto [result, elapsed] = timed([&] { return email::decode(raw); });
    REQUIRE(result);
    CHECK(has(*result, "nesting overflow"));
    CHECK(elapsed < std::chrono::seconds(5));
  }
  SECTION("two million delimiter lines: cut before GMime builds them") {
    std::string raw = "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=\"\"\r\n\r\n";
    for (int i = 0; i < 2000000; ++i) raw += "--\r\n";
    const auto [result, elapsed] = timed([&] { return email::decode(raw); });
    REQUIRE(result);
    CHECK(has(*result, "more than 256 parts"));
    CHECK(elapsed < std::chrono::seconds(5));
  }
  SECTION("HTML nested past libxml2's depth limit: no text, and a defect that says so") {
    std::string raw = "From: a@example.com\r\nContent-Type: text/html\r\n\r\n";
    for (int i = 0; i < 100000; ++i) raw += "<div><b>";
    raw += "Bottom.";
    for (int i = 0; i < 100000; ++i) raw += "</b></div>";
    const auto [result, elapsed] = timed([&] { return email::decode(raw); });
    REQUIRE(result);
    CHECK(elapsed < std::chrono::seconds(5));
    if (result->text.empty())
      CHECK(has(*result, "no text in HTML body"));
    else
      CHECK(result->text == "Bottom.");
  }
}

TEST_CASE("size limits: the raw message and the text", "[gmail][decode][limits]") {
  SECTION("larger than max_bytes is too_large") {
    const auto result = email::decode(std::string(2000, 'a'), k_none, {.max_bytes = 1000});
    REQUIRE_FALSE(result);
    CHECK(result.error().kind == DecodeErrorKind::too_large);
  }
  SECTION("text beyond max_text_bytes is cut at a character boundary; full_text keeps it") {
    std::string body;
    for (int i = 0; i < 3000; ++i) body += "é€";  // 5 bytes per pair
    const std::string raw = "From: a@example.com\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n";
    const auto result = email::decode(raw, k_none, {.max_text_bytes = 1001});
    REQUIRE(result);
    CHECK(result->text.size() <= 1001);
    CHECK(result->text.size() >= 998);
    CHECK(utf8::is_valid(result->text));
    CHECK(result->full_text == body);
    CHECK(std::find(result->defects.begin(), result->defects.end(), "text cut at 1001 bytes") != result->defects.end());
  }
}

TEST_CASE("decode runs on several threads at once", "[gmail][decode]") {
  const std::string raw = test::read_file(test::source_path("tests/data/mail/charset_koi8r.eml"));
  std::vector<std::string> texts(4);
  std::vector<std::thread> threads;
  for (auto& text : texts)
    threads.emplace_back([&raw, &text] {
      for (int i = 0; i < 50; ++i) {
        auto result = email::decode(raw);
        text = result ? result->text : "error";
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& text : texts) CHECK(text == "Привет! Когда будет доставка?");
}

TEST_CASE("counterpart and is_automatic", "[gmail]") {
  email::Email email;
  CHECK(email::counterpart(email).empty());
  email.from = email::Address{"Ana", "Ana@Example.COM"};
  CHECK(email::counterpart(email) == "ana@example.com");
  email.reply_to = email::Address{"", "Help@Example.com"};
  CHECK(email::counterpart(email) == "help@example.com");

  CHECK_FALSE(email::is_automatic({}));
  CHECK(email::is_automatic({.auto_reply = true}));
  CHECK(email::is_automatic({.list = true}));
  CHECK(email::is_automatic({.bounce = true}));
  CHECK(email::is_automatic({.own = true}));
  CHECK(email::is_automatic({.no_reply = true}));
}

TEST_CASE("to_json writes every key, null for what is absent", "[gmail]") {
  email::Email email;
  email.subject = "Hi \"you\"";
  email.date = std::chrono::sys_seconds(std::chrono::seconds(1796040000));  // 2026-11-30T12:00:00Z
  email.attachments.push_back({"a.pdf", "application/pdf", 42});
  email.flags.list = true;
  const auto doc = test::parse_json(email::to_json(email));
  CHECK(doc["from"].IsNull());
  CHECK(doc["reply_to"].IsNull());
  CHECK(doc["to"].IsArray());
  CHECK(json::string_of(doc["subject"]) == "Hi \"you\"");
  CHECK(json::string_of(doc["date"]) == "2026-11-30T12:00:00Z");
  CHECK(doc["attachments"][0]["size"].GetInt() == 42);
  CHECK(doc["flags"]["list"].GetBool());
  CHECK_FALSE(doc["flags"]["no_reply"].GetBool());
  CHECK(doc["defects"].IsArray());
  CHECK_FALSE(doc.HasMember("full_text"));
}

TEST_CASE("parse_raw_response reads a messages.get?format=raw answer", "[gmail]") {
  const std::string raw = gmail::base64url_encode("Subject: x\r\n\r\nbody\r\n");
  SECTION("all fields") {
    const auto parsed =
        gmail::parse_raw_response(R"({"id":"m1","threadId":"t1","labelIds":["INBOX","UNREAD"],)"
                                  R"("historyId":"991","internalDate":"1796040000000","sizeEstimate":20,)"
                                  R"("raw":")" +
                                  raw + R"("})");
    REQUIRE(parsed);
    CHECK(parsed->id == "m1");
    CHECK(parsed->thread_id == "t1");
    CHECK(parsed->label_ids == std::vector<std::string>{"INBOX", "UNREAD"});
    CHECK(parsed->history_id == "991");
    CHECK(parsed->internal_date_ms == 1796040000000);
    CHECK(parsed->bytes == "Subject: x\r\n\r\nbody\r\n");
  }
  SECTION("errors") {
    CHECK_FALSE(gmail::parse_raw_response("not json"));
    CHECK_FALSE(gmail::parse_raw_response("[1]"));
    CHECK_FALSE(gmail::parse_raw_response(R"({"id":"m1","payload":{}})"));
    CHECK_FALSE(gmail::parse_raw_response(R"({"raw":"a+b/"})"));
    CHECK_FALSE(gmail::parse_raw_response(R"({"raw":1})"));
  }
}
