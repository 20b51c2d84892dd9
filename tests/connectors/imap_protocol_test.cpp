#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "connectors/imap/protocol.h"
#include "connectors/imap/settings.h"

using namespace dispatchd::imap;

namespace {

// What Dovecot 2.3 answered to EXAMINE INBOX (tests/mail/servers.sh's pair).
constexpr std::string_view k_dovecot_examine =
    "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
    "* OK [PERMANENTFLAGS ()] Read-only mailbox.\r\n"
    "* 2 EXISTS\r\n"
    "* 1 RECENT\r\n"
    "* OK [UNSEEN 1] First unseen.\r\n"
    "* OK [UIDVALIDITY 1796632886] UIDs valid\r\n"
    "* OK [UIDNEXT 3] Predicted next UID\r\n";

// RFC 3501 6.3.1's example of SELECT.
constexpr std::string_view k_rfc_select =
    "* 172 EXISTS\r\n"
    "* 1 RECENT\r\n"
    "* OK [UNSEEN 12] Message 12 is first unseen\r\n"
    "* OK [UIDVALIDITY 3857529045] UIDs valid\r\n"
    "* OK [UIDNEXT 4392] Predicted next UID\r\n"
    "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n"
    "* OK [PERMANENTFLAGS (\\Deleted \\Seen \\*)] Limited\r\n";

std::vector<std::string> imap_test_flags(std::initializer_list<const char*> flags) {
  return std::vector<std::string>(flags.begin(), flags.end());
}

}  // namespace

TEST_CASE("imap protocol: EXAMINE and SELECT answers", "[imap]") {
  SECTION("Dovecot's, read-only") {
    auto status = parse_mailbox_status(k_dovecot_examine);
    REQUIRE(status.has_value());
    CHECK(status->uidvalidity == 1796632886u);
    CHECK(status->uidnext == 3);
    CHECK(status->exists == 2);
    CHECK(status->flags == imap_test_flags({"\\Answered", "\\Flagged", "\\Deleted", "\\Seen", "\\Draft"}));
    REQUIRE(status->permanent_flags.has_value());
    CHECK(status->permanent_flags->empty());
  }
  SECTION("RFC 3501's, with \\* and LF line ends") {
    std::string lf(k_rfc_select);
    std::erase(lf, '\r');
    auto status = parse_mailbox_status(lf);
    REQUIRE(status.has_value());
    CHECK(status->uidvalidity == 3857529045u);
    CHECK(status->uidnext == 4392);
    CHECK(status->exists == 172);
    CHECK(status->permanent_flags == imap_test_flags({"\\Deleted", "\\Seen", "\\*"}));
  }
  SECTION("no UIDNEXT, no PERMANENTFLAGS, keywords in lower case") {
    auto status = parse_mailbox_status("* 0 exists\r\n* ok [uidvalidity 7] x\r\n* FLAGS ($Label1 \\Seen)\r\n");
    REQUIRE(status.has_value());
    CHECK(status->uidvalidity == 7);
    CHECK(status->uidnext == 0);
    CHECK(status->exists == 0);
    CHECK_FALSE(status->permanent_flags.has_value());
    CHECK(status->flags == imap_test_flags({"$Label1", "\\Seen"}));
  }
  SECTION("the last EXISTS counts") {
    auto status = parse_mailbox_status("* 3 EXISTS\r\n* OK [UIDVALIDITY 9] x\r\n* 4 EXISTS\r\n");
    REQUIRE(status.has_value());
    CHECK(status->exists == 4);
  }
  struct Bad {
    std::string_view untagged;
    std::string_view why;
  };
  const std::vector<Bad> bad = {
      {"* 2 EXISTS\r\n* OK [UIDNEXT 3] x\r\n", "no UIDVALIDITY"},
      {"", "nothing at all"},
      {"* OK [UIDVALIDITY 0] x\r\n", "UIDVALIDITY 0"},
      {"* OK [UIDVALIDITY 4294967296] x\r\n", "beyond 32 bits"},
      {"* OK [UIDVALIDITY -1] x\r\n", "negative"},
      {"* OK [UIDVALIDITY 12x] x\r\n", "not a number"},
      {"* OK [UIDVALIDITY 5\r\n", "unclosed code"},
      {"* OK [UIDVALIDITY 5] x\r\n* FLAGS (\\Seen\r\n", "unclosed FLAGS"},
      {"* OK [UIDVALIDITY 5] x\r\n* OK [PERMANENTFLAGS \\Seen] x\r\n", "PERMANENTFLAGS without a list"},
  };
  for (const Bad& row : bad) {
    INFO(row.why);
    auto status = parse_mailbox_status(row.untagged);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().kind == ErrorKind::protocol);
  }
  CHECK(parse_mailbox_status("* OK [UIDVALIDITY 4294967295] x\r\n")->uidvalidity == 4294967295u);
}

TEST_CASE("imap protocol: UID SEARCH answers", "[imap]") {
  struct Row {
    std::string_view untagged;
    std::vector<std::uint32_t> uids;
  };
  const std::vector<Row> good = {
      {"* SEARCH 2 84 882\r\n", {2, 84, 882}},
      {"* SEARCH\r\n", {}},
      {"* SEARCH \r\n", {}},
      {"* search 9 3 3 1\r\n", {1, 3, 9}},
      {"* 4 EXISTS\r\n* SEARCH 5\r\n* 1 RECENT\r\n", {5}},
      {"* SEARCH 1 2\r\n* SEARCH 3\r\n", {1, 2, 3}},
      {"* SEARCH 4294967295\n", {4294967295u}},
      {"* SEARCH 2 5 (MODSEQ 917162500)\r\n", {2, 5}},
  };
  for (const Row& row : good) {
    INFO(row.untagged);
    auto uids = parse_search(row.untagged);
    REQUIRE(uids.has_value());
    CHECK(*uids == row.uids);
  }
  for (std::string_view bad :
       {"", "* 3 EXISTS\r\n", "* SEARCH 1 x\r\n", "* SEARCH 0\r\n", "* SEARCH 4294967296\r\n", "* SEARCH -2\r\n"}) {
    INFO(bad);
    auto uids = parse_search(bad);
    REQUIRE_FALSE(uids.has_value());
    CHECK(uids.error().kind == ErrorKind::protocol);
  }
}

TEST_CASE("imap protocol: FETCH lines with UID and FLAGS", "[imap]") {
  struct Row {
    std::string_view line;
    std::uint32_t sequence;
    std::uint32_t uid;
    bool has_flags;
    std::vector<std::string> flags;
  };
  const std::vector<Row> good = {
      {"* 12 FETCH (UID 40 FLAGS (\\Seen))", 12, 40, true, {"\\Seen"}},
      {"* 12 FETCH (FLAGS (\\Seen \\Answered $Label) UID 40)\r\n", 12, 40, true, {"\\Seen", "\\Answered", "$Label"}},
      {"* 1 FETCH (UID 7 FLAGS ())", 1, 7, true, {}},
      {"* 3 FETCH (FLAGS (\\Deleted))", 3, 0, true, {"\\Deleted"}},
      {"* 3 fetch (uid 9 modseq (12345) flags (\\Recent))", 3, 9, true, {"\\Recent"}},
      {"* 5 FETCH (UID 9 INTERNALDATE \"17-Jul-1996 02:44:25 -0700\" RFC822.SIZE 4286)", 5, 9, false, {}},
      {"* 5 FETCH (ENVELOPE (\"date\" \"a (b) \\\"c\\\"\" NIL ((NIL NIL \"x\" \"y\"))) UID 2)", 5, 2, false, {}},
      {"* 5 FETCH (BODY[HEADER.FIELDS (MESSAGE-ID)]<0> NIL UID 2)", 5, 2, false, {}},
  };
  for (const Row& row : good) {
    INFO(row.line);
    auto fetched = parse_fetch_line(row.line);
    REQUIRE(fetched.has_value());
    CHECK(fetched->sequence == row.sequence);
    CHECK(fetched->uid == row.uid);
    CHECK(fetched->has_flags == row.has_flags);
    CHECK(fetched->flags == row.flags);
  }
  for (std::string_view bad :
       {"* 12 FETCH UID 40", "* 12 FETCH (UID 40", "* 12 FETCH (UID x)", "* 0 FETCH (UID 4)", "* x FETCH (UID 4)",
        "* 12 EXISTS", "12 FETCH (UID 4)", "* 12 FETCH (BODY[] {342}", "* 12 FETCH (FLAGS (\\Seen) ENVELOPE (\"a)",
        "* 12 FETCH (UID 4294967296)", "* 12 FETCH (FLAGS \\Seen)", "* 12 FETCH (UID 4 X ((a))"}) {
    INFO(bad);
    auto fetched = parse_fetch_line(bad);
    REQUIRE_FALSE(fetched.has_value());
    CHECK(fetched.error().kind == ErrorKind::protocol);
  }
  auto all = parse_fetch("* 1 FETCH (UID 4 FLAGS (\\Seen))\r\n* 2 EXISTS\r\n* 2 FETCH (UID 5 FLAGS ())\r\n");
  REQUIRE(all.has_value());
  REQUIRE(all->size() == 2);
  CHECK((*all)[1].uid == 5);
  CHECK_FALSE(parse_fetch("* 1 FETCH (UID 4 FLAGS (\\Seen))\r\n* 2 FETCH (UID\r\n").has_value());
}

TEST_CASE("imap protocol: untagged lines during IDLE", "[imap]") {
  using Type = Untagged::Type;
  struct Row {
    std::string_view line;
    Type type;
    std::uint32_t number;
  };
  const std::vector<Row> table = {
      {"* 23 EXISTS\r\n", Type::exists, 23},
      {"* 3 RECENT", Type::recent, 3},
      {"* 4 EXPUNGE", Type::expunge, 4},
      {"* 4 FETCH (FLAGS (\\Seen))", Type::fetch, 4},
      {"+ idling", Type::continuation, 0},
      {"+", Type::continuation, 0},
      {"* BYE Server shutting down.", Type::bye, 0},
      {"* OK Still here", Type::other, 0},
      {"* 99999999999 EXISTS", Type::other, 0},
      {"W1 OK Idle completed.", Type::other, 0},
      {"", Type::other, 0},
      {"* 4 exists", Type::exists, 4},
  };
  for (const Row& row : table) {
    INFO(row.line);
    Untagged parsed = parse_untagged(row.line);
    CHECK(parsed.type == row.type);
    CHECK(parsed.number == row.number);
  }
  CHECK(parse_untagged("* BYE Server shutting down.").text == "Server shutting down.");
}

TEST_CASE("imap protocol: tagged completions and what a refusal means", "[imap]") {
  auto ok = parse_tagged("W3 OK [APPENDUID 38505 3955] APPEND completed\r\n", "W3");
  REQUIRE(ok.has_value());
  CHECK(ok->status == Tagged::Status::ok);
  CHECK(ok->code == "APPENDUID 38505 3955");
  CHECK(ok->text == "APPEND completed");
  auto appended = parse_appenduid(*ok);
  REQUIRE(appended.has_value());
  CHECK(appended->uidvalidity == 38505);
  CHECK(appended->uid == 3955);
  CHECK_FALSE(parse_appenduid(*parse_tagged("W3 OK APPEND completed", "W3")).has_value());
  CHECK_FALSE(parse_appenduid(*parse_tagged("W3 OK [APPENDUID 38505 3955:3956] x", "W3")).has_value());
  CHECK_FALSE(parse_tagged("W3 OK done", "W30").has_value());
  CHECK_FALSE(parse_tagged("W30 OK done", "W3").has_value());
  CHECK_FALSE(parse_tagged("* OK done", "W3").has_value());
  CHECK_FALSE(parse_tagged("W3 MAYBE done", "W3").has_value());
  CHECK(parse_tagged("W3 bad Error in IMAP command", "W3")->status == Tagged::Status::bad);

  struct Row {
    std::string_view verb;
    std::string_view line;
    ErrorKind kind;
  };
  const std::vector<Row> table = {
      {"AUTHENTICATE", "A2 NO [AUTHENTICATIONFAILED] Authentication failed.", ErrorKind::auth_refused},
      {"LOGIN", "A2 NO [UNAVAILABLE] Temporary authentication failure.", ErrorKind::unavailable},
      {"LOGIN", "A2 NO Login failed.", ErrorKind::auth_refused},
      {"LOGIN", "A2 NO [CONTACTADMIN] Account locked.", ErrorKind::auth_refused},
      {"SELECT", "A3 NO Mailbox doesn't exist: Nope (0.001 + 0.000 secs).", ErrorKind::mailbox_missing},
      {"EXAMINE", "A3 NO [NONEXISTENT] Unknown Mailbox: Nope", ErrorKind::mailbox_missing},
      {"SELECT", "A3 NO [INUSE] Mailbox is locked", ErrorKind::unavailable},
      {"APPEND", "A4 NO [TRYCREATE] Mailbox doesn't exist: Sent", ErrorKind::mailbox_missing},
      {"APPEND", "A4 NO [OVERQUOTA] Quota exceeded", ErrorKind::unavailable},
      {"APPEND", "A4 NO Append refused", ErrorKind::refused},
      {"UID FETCH", "A5 NO [EXPUNGEISSUED] Some messages were expunged", ErrorKind::message_missing},
      {"UID SEARCH", "A5 BAD Error in IMAP command UID SEARCH: Unknown argument", ErrorKind::refused},
      {"UID STORE", "A5 NO [SERVERBUG] Internal error", ErrorKind::unavailable},
      {"IDLE", "A6 BAD Unknown command", ErrorKind::unsupported},
      {"NOOP", "A6 NO [LIMIT] Too many", ErrorKind::unavailable},
  };
  for (const Row& row : table) {
    INFO(row.verb << " " << row.line);
    std::string_view tag = row.line.substr(0, row.line.find(' '));
    auto completion = parse_tagged(row.line, tag);
    REQUIRE(completion.has_value());
    CHECK(classify_refusal(row.verb, *completion) == row.kind);
  }
}

TEST_CASE("imap protocol: error kinds a caller may retry", "[imap]") {
  for (ErrorKind kind : {ErrorKind::connection, ErrorKind::timeout, ErrorKind::unavailable, ErrorKind::protocol}) {
    INFO(to_string(kind));
    CHECK(is_retryable(kind));
  }
  for (ErrorKind kind : {ErrorKind::auth_refused, ErrorKind::tls_refused, ErrorKind::mailbox_missing,
                         ErrorKind::uidvalidity_changed, ErrorKind::message_missing, ErrorKind::too_large,
                         ErrorKind::refused, ErrorKind::unsupported, ErrorKind::invalid_argument}) {
    INFO(to_string(kind));
    CHECK_FALSE(is_retryable(kind));
  }
  CHECK(to_string(ErrorKind::uidvalidity_changed) == "uidvalidity_changed");
}

TEST_CASE("imap protocol: quoted strings, atoms and mailbox names", "[imap]") {
  struct Row {
    std::string_view input;
    std::string_view quoted;
    std::string_view astring;
  };
  const std::vector<Row> good = {
      {"INBOX", "\"INBOX\"", "INBOX"},
      {"Sent Items", "\"Sent Items\"", "\"Sent Items\""},
      {"a\"b", "\"a\\\"b\"", "\"a\\\"b\""},
      {"a\\b", "\"a\\\\b\"", "\"a\\\\b\""},
      {"", "\"\"", "\"\""},
      {"50%", "\"50%\"", "\"50%\""},
      {"x*", "\"x*\"", "\"x*\""},
      {"a]b", "\"a]b\"", "\"a]b\""},
      {"(x)", "\"(x)\"", "\"(x)\""},
      {"{3}", "\"{3}\"", "\"{3}\""},
      {"<abc@example.test>", "\"<abc@example.test>\"", "<abc@example.test>"},
  };
  for (const Row& row : good) {
    INFO(row.input);
    CHECK(quoted(row.input).value() == row.quoted);
    CHECK(astring(row.input).value() == row.astring);
  }
  for (std::string_view bad : {std::string_view("a\r\nb"), std::string_view("a\nb"), std::string_view("a\rb"),
                               std::string_view("a\0b", 3), std::string_view("Entwürfe")}) {
    auto refused = quoted(bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().kind == ErrorKind::invalid_argument);
  }

  // RFC 3501 5.1.3's example, and others.
  struct Utf7 {
    std::string_view utf8;
    std::string_view encoded;
  };
  const std::vector<Utf7> utf7 = {
      {"~peter/mail/台北/日本語", "~peter/mail/&U,BTFw-/&ZeVnLIqe-"},
      {"Entwürfe", "Entw&APw-rfe"},
      {"Elementos enviados", "Elementos enviados"},
      {"A&B", "A&-B"},
      {"Ñandú", "&ANE-and&APo-"},
      {"😀", "&2D3eAA-"},
      {"", ""},
  };
  for (const Utf7& row : utf7) {
    INFO(row.utf8);
    CHECK(modified_utf7(row.utf8).value() == row.encoded);
  }
  for (std::string_view bad : {std::string_view("\xff"), std::string_view("a\xc3"), std::string_view("\xc0\x80"),
                               std::string_view("\xed\xa0\x80"), std::string_view("tab\there")}) {
    CHECK(modified_utf7(bad).error().kind == ErrorKind::invalid_argument);
  }

  CHECK(mailbox_argument("inbox").value() == "INBOX");
  CHECK(mailbox_argument("Sent").value() == "Sent");
  CHECK(mailbox_argument("Sent Items").value() == "\"Sent Items\"");
  CHECK(mailbox_argument("Entwürfe").value() == "Entw&APw-rfe");
  CHECK(mailbox_argument("a\"b").value() == "\"a\\\"b\"");
  CHECK(mailbox_argument("").error().kind == ErrorKind::invalid_argument);
  CHECK(mailbox_argument("a\r\nb").error().kind == ErrorKind::invalid_argument);
}

TEST_CASE("imap protocol: commands", "[imap]") {
  CHECK(examine_command("INBOX").value() == "EXAMINE INBOX");
  CHECK(examine_command("Sent Items").value() == "EXAMINE \"Sent Items\"");
  CHECK(examine_command("x\r\nA1 DELETE INBOX").error().kind == ErrorKind::invalid_argument);

  CHECK(uid_search_from_command(42) == "UID SEARCH UID 42:*");
  CHECK(uid_search_from_command(0) == "UID SEARCH UID 1:*");
  // "42:*" matches the highest UID when all are below 42: the caller drops it.
  std::vector<std::uint32_t> found = {7, 42, 43};
  CHECK(uids_from(found, 42) == std::vector<std::uint32_t>{42, 43});
  CHECK(uids_from(std::vector<std::uint32_t>{7}, 42).empty());

  CHECK(search_message_id_command("abc@example.test").value() == "UID SEARCH HEADER Message-ID \"<abc@example.test>\"");
  CHECK(search_message_id_command("<abc@example.test>").value() ==
        "UID SEARCH HEADER Message-ID \"<abc@example.test>\"");
  CHECK(search_message_id_command("a\"b@x").value() == "UID SEARCH HEADER Message-ID \"<a\\\"b@x>\"");
  for (std::string_view bad : {"", "<>", "<abc", "abc@x\r\nW9 LOGOUT", "abc@ñ"}) {
    INFO(bad);
    CHECK(search_message_id_command(bad).error().kind == ErrorKind::invalid_argument);
  }

  std::vector<std::string> seen = {"\\seen", "$Dispatchd"};
  CHECK(uid_store_add_flags_command(7, seen).value() == "UID STORE 7 +FLAGS.SILENT (\\Seen $Dispatchd)");
  CHECK(uid_store_add_flags_command(0, seen).error().kind == ErrorKind::invalid_argument);
  std::vector<std::vector<std::string>> bad_flags = {{},   {"\\Recent"}, {"\\Important"}, {"two words"}, {"a)"},
                                                     {""}, {"\\"},       {"x\r\n"},       {"50%"}};
  for (const auto& flags : bad_flags) {
    INFO((flags.empty() ? std::string("(none)") : flags.front()));
    CHECK(flag_list(flags).error().kind == ErrorKind::invalid_argument);
  }

  CHECK(append_command("Sent", std::vector<std::string>{"\\Seen"}, 4096).value() == "APPEND Sent (\\Seen) {4096}");
  CHECK(append_command("Sent", {}, 12).value() == "APPEND Sent {12}");
  CHECK(append_command("", {}, 12).error().kind == ErrorKind::invalid_argument);
}

TEST_CASE("imap protocol: line ends, URLs and curl's custom requests", "[imap]") {
  struct Row {
    std::string_view raw;
    std::string_view crlf;
  };
  const std::vector<Row> table = {
      {"a\nb\n", "a\r\nb\r\n"}, {"a\r\nb\r\n", "a\r\nb\r\n"}, {"a\rb", "a\r\nb"}, {"a\r\r\nb", "a\r\n\r\nb"}, {"", ""},
      {"\n.\n", "\r\n.\r\n"},
  };
  for (const Row& row : table) {
    INFO(row.raw);
    CHECK(to_crlf(row.raw) == row.crlf);
  }

  CHECK(mailbox_url_path("INBOX").value() == "INBOX");
  CHECK(mailbox_url_path("Sent Items").value() == "Sent%20Items");
  CHECK(mailbox_url_path("a;UID=1").value() == "a%3BUID%3D1");
  CHECK(mailbox_url_path("INBOX/Archivo").value() == "INBOX%2FArchivo");
  CHECK(mailbox_url_path("Entwürfe").value() == "Entw%26APw-rfe");
  CHECK(mailbox_url_path("").error().kind == ErrorKind::invalid_argument);

  CHECK(curl_custom_request("UID SEARCH HEADER Subject \"100%\"").value() == "UID SEARCH HEADER Subject \"100%25\"");
  CHECK(curl_custom_request("NOOP\r\nW1 DELETE INBOX").error().kind == ErrorKind::invalid_argument);
}

TEST_CASE("imap settings: what check_settings refuses", "[imap]") {
  ServerSettings good;
  good.host = "127.0.0.1";
  good.user = "soporte@example.test";
  good.password = "secret";
  CHECK_FALSE(check_settings(good).has_value());

  struct Row {
    std::string_view why;
    ServerSettings settings;
  };
  auto with = [&](auto change) {
    ServerSettings s = good;
    change(s);
    return s;
  };
  const std::vector<Row> table = {
      {"no host", with([](ServerSettings& s) { s.host.clear(); })},
      {"a URL as host", with([](ServerSettings& s) { s.host = "imap.example.test/INBOX"; })},
      {"user@host", with([](ServerSettings& s) { s.host = "u@imap.example.test"; })},
      {"no user", with([](ServerSettings& s) { s.user.clear(); })},
      {"CR in user", with([](ServerSettings& s) { s.user = "a\rb"; })},
      {"no credential", with([](ServerSettings& s) { s.password.clear(); })},
      {"LF in password", with([](ServerSettings& s) { s.password = "a\nb"; })},
      {"unknown mechanism", with([](ServerSettings& s) { s.sasl_mechanism = "CRAM-MD5"; })},
      {"XOAUTH2 without token", with([](ServerSettings& s) { s.sasl_mechanism = "XOAUTH2"; })},
      {"PLAIN with a token", with([](ServerSettings& s) {
         s.oauth_token = "ya29.x";
         s.sasl_mechanism = "PLAIN";
       })},
      {"zero timeout", with([](ServerSettings& s) { s.io_timeout = std::chrono::milliseconds{0}; })},
  };
  for (const Row& row : table) {
    INFO(row.why);
    CHECK(check_settings(row.settings).has_value());
  }
  CHECK_FALSE(check_settings(with([](ServerSettings& s) {
                s.host = "::1";
                s.oauth_token = "ya29.x";
                s.sasl_mechanism = "XOAUTH2";
              })).has_value());
}
