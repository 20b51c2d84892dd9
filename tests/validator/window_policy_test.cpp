#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "validator/validator.h"
#include "validator/window_policy.h"

using namespace dispatchd;
using namespace std::chrono_literals;

namespace {

const std::chrono::sys_seconds k_closes{std::chrono::seconds{1796126400}};  // 2026-12-01T12:00:00Z
const ReplyWindow k_open{true, k_closes};
const ReplyWindow k_closed{false, k_closes};

}  // namespace

TEST_CASE("window policy: free-form text is refused only while the window is closed", "[policy][window]") {
  const std::vector<std::string> none;
  const std::vector<std::string> one{"order_update"};
  const std::vector<std::string> two{"order_update", "follow_up"};
  struct Row {
    const char* what;
    std::optional<ReplyWindow> window;
    bool free_form;
    const std::vector<std::string>* templates;
    const char* message;  // "" when it may go
  };
  const Row rows[] = {
      {"a channel without a window", std::nullopt, true, &one, ""},
      {"an open window", k_open, true, &one, ""},
      {"closed, but no free-form text (escalate, a template)", k_closed, false, &one, ""},
      {"closed, one template action", k_closed, true, &one,
       "the customer's reply window is closed: action \"send_message\" sends free-form text, which cannot reach "
       "them now; only a template action can: choose \"order_update\""},
      {"closed, two template actions", k_closed, true, &two,
       "the customer's reply window is closed: action \"send_message\" sends free-form text, which cannot reach "
       "them now; only a template action can: choose \"order_update\" or \"follow_up\""},
      {"closed, no template action", k_closed, true, &none,
       "the customer's reply window is closed: action \"send_message\" sends free-form text, which cannot reach "
       "them now; no template action in the catalog can reach them either: choose an escalate action"},
      {"never wrote (closed, no time)", ReplyWindow{false, std::nullopt}, true, &none,
       "the customer's reply window is closed: action \"send_message\" sends free-form text, which cannot reach "
       "them now; no template action in the catalog can reach them either: choose an escalate action"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    const auto finding =
        validator::window_refusal(row.window, row.free_form, "send_message", *row.templates, "/action");
    if (std::string(row.message).empty()) {
      CHECK_FALSE(finding);
    } else {
      REQUIRE(finding);
      CHECK(finding->code == "window_closed");
      CHECK(finding->path == "/action");
      CHECK(finding->message == row.message);
    }
  }
}

TEST_CASE("window policy: the validator's policy stage refuses a reply to a closed window", "[policy][window]") {
  const std::string reply = R"({"action":"send_message","recipient":"15551234567","content":"Hi","priority":"low"})";
  const std::string escalate =
      R"({"action":"escalate_to_human","recipient":"billing team","content":"refund","priority":"high"})";
  const auto context = [](std::optional<ReplyWindow> window) {
    return validator::Context{.sender = "15551234567", .source = {}, .window = window};
  };
  CHECK(validator::validate(test::support_en(), reply, context(std::nullopt)).ok);
  CHECK(validator::validate(test::support_en(), reply, context(k_open)).ok);
  const auto refused = validator::validate(test::support_en(), reply, context(k_closed));
  CHECK_FALSE(refused.ok);
  CHECK(refused.failed_stage == validator::Stage::policy);
  REQUIRE(refused.errors.size() == 1);
  CHECK(refused.errors[0].code == "window_closed");
  CHECK_THAT(refused.feedback, Catch::Contains("no template action in the catalog can reach them"));
  // Escalating is still possible: only free-form text is refused.
  CHECK(validator::validate(test::support_en(), escalate, context(k_closed)).ok);
  CHECK(validator::template_actions(test::support_en()).empty());
}
