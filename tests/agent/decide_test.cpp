// decide() as a table: one row per case of the agent loop (docs/agent.md), from what the latest
// step brought and where the message stands to the Step the Run carries out.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "agent/decide.h"
#include "store/states.h"
#include "tests/test_util.h"

using namespace dispatchd;
using namespace dispatchd::agent;
using namespace std::chrono_literals;
using llm::ErrorClass;

namespace {

constexpr const char* k_sender = "15551234567";
const store::Time k_arrived{std::chrono::sys_days{std::chrono::November / 30 / 2026}};

// Every kind of action: replies (automatic, needing approval, with a review-grounded field),
// a read-only tool, an escalation and an ignore.
const catalog::Catalog& kinds() {
  static const catalog::Catalog catalog = [] {
    auto parsed = catalog::Catalog::parse(R"({
      "name": "decide.test",
      "description": "One action of each kind, for the decision table.",
      "action_field": "action",
      "fields": {
        "recipient": {"type": "string", "minLength": 1},
        "content": {"type": "string", "minLength": 1},
        "name": {"type": "string", "grounded": "review"}
      },
      "actions": [
        {"name": "send_message", "description": "Reply.", "kind": "reply", "text_field": "content",
         "required": ["recipient", "content"], "policy": {"recipient_field": "recipient"}},
        {"name": "offer_refund", "description": "Reply with a refund offer.", "kind": "reply", "text_field": "content",
         "required": ["recipient", "content"], "policy": {"recipient_field": "recipient", "requires_approval": true}},
        {"name": "greet", "description": "Reply by name.", "kind": "reply", "text_field": "content",
         "required": ["recipient", "content", "name"], "policy": {"recipient_field": "recipient"}},
        {"name": "query_status", "description": "Look a case up.", "kind": "http",
         "http": {"method": "GET", "url": "http://127.0.0.1:8089/status?q={content}"}, "required": ["content"]},
        {"name": "escalate_to_human", "description": "A person decides.", "kind": "escalate", "required": ["content"]},
        {"name": "ignore", "description": "Nothing to do.", "kind": "ignore"}
      ]
    })",
                                          "decide.json");
    if (!parsed) throw std::runtime_error("decide.json: " + parsed.error().front().to_string());
    return std::move(*parsed);
  }();
  return catalog;
}

// The model's answer, judged by the validator as the Run judges it.
Latest answer(const std::string& raw, const std::string& message = "Hello, I am Ana") {
  return Answered{raw, validator::validate(kinds(), raw, {k_sender, message})};
}

std::string reply_to(const std::string& recipient, const std::string& action = "send_message",
                     const std::string& extra = "") {
  return R"({"action":")" + action + R"(","recipient":")" + recipient + R"(","content":"Hi")" + extra + "}";
}

llm::ProviderError provider_error(ErrorClass error_class, std::string message, std::string output = "",
                                  std::optional<std::chrono::milliseconds> retry_after = std::nullopt) {
  llm::ProviderError error;
  error.error_class = error_class;
  error.message = std::move(message);
  error.output = std::move(output);
  error.retry_after = retry_after;
  if (error_class == ErrorClass::truncated) error.finish_reason = "length";
  return error;
}

// Where the message stands: attempts recorded (the latest included), of them failed, tools
// run, and how long ago it arrived.
Progress at(int attempts, int failed, int tool_steps = 0, std::chrono::seconds since_arrival = 0s) {
  return {attempts, failed, tool_steps, k_arrived, k_arrived + since_arrival};
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ",") + part;
  return out;
}

std::string codes(const std::vector<validator::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.code);
  return join(out);
}

// A Step in one line, for the table: its kind and the data the Run acts on.
struct Show {
  std::string operator()(const OutOfAttempts& d) const {
    return "{attempts " + std::to_string(d.attempts) + ", last " + codes(d.last_errors) + "}";
  }
  std::string operator()(const BudgetUsed&) const { return "{budget used before a restart}"; }
  std::string operator()(const PastToolLimit& d) const { return "{past the tool limit: " + d.action + "}"; }
  std::string operator()(const ModelEscalated& d) const { return "{the model's " + d.action + "}"; }
  std::string operator()(const ProviderDown& d) const {
    return "{" + std::string(llm::to_string(d.error_class)) + ": " + d.error + "}";
  }
  std::string operator()(const TypeEscalated& d) const { return "{type " + d.type + "}"; }

  std::string operator()(const Ask& s) const { return s.failed ? "ask, showing `" + s.failed->output + "`" : "ask"; }
  std::string operator()(const RunTool& s) const {
    if (const auto* http = std::get_if<HttpTarget>(&s.target)) return "tool " + http->url;
    return "mcp tool " + s.action + " with " + std::get<McpTarget>(s.target).arguments;
  }
  std::string operator()(const Queue& s) const {
    return "queue " + s.reply.action + " to " + s.reply.outbound.recipient + ": " + s.reply.outbound.body;
  }
  std::string operator()(const QueueFixed& s) const { return "queue fixed_reply for " + s.type + ": " + s.text; }
  std::string operator()(const Propose& s) const {
    return "propose " + std::string(store::to_sql(s.reason)) + " [" + join(s.flags) + "] " + s.reply.action + " to " +
           s.reply.outbound.recipient;
  }
  std::string operator()(const Escalate& s) const {
    return "escalate " + std::string(store::to_sql(s.reason)) + " " + std::visit(*this, s.detail) +
           (s.proposed ? " proposing " + *s.proposed : "");
  }
  std::string operator()(const Ignore& s) const { return "ignore " + s.action; }
  std::string operator()(const IgnoreType& s) const { return "ignore type " + s.type; }
  std::string operator()(const Postpone& s) const {
    return "postpone " + std::to_string(s.wait.count()) + " s (" + std::string(llm::to_string(s.error_class)) + ": " +
           s.error + ")";
  }
  std::string operator()(const Fail& s) const { return "fail: " + s.error; }
};

}  // namespace

TEST_CASE("decide: the agent loop's decision table (docs/agent.md), one row per case", "[agent][decide]") {
  const std::string valid = reply_to(k_sender);
  const std::string to_other = reply_to("15559999999");
  const std::string bad_enum = R"({"action":"reply","recipient":"15551234567","content":"Hi"})";
  const std::string tool = R"({"action":"query_status","content":"order 7"})";
  const std::string escalate = R"({"action":"escalate_to_human","content":"wants a person"})";
  const auto truncated = provider_error(ErrorClass::truncated, "cut", R"({"action":"send_mes)");
  const auto blocked = provider_error(ErrorClass::blocked, "the provider blocked the reply (finishReason SAFETY)");
  const auto refused = provider_error(ErrorClass::refused, "the model refused", "I can't help with that.");
  const auto no_text = provider_error(ErrorClass::no_text, "the answer has no text (only tool calls)");
  const auto bad_response = provider_error(ErrorClass::bad_response, "not JSON: <html>");
  const auto down = provider_error(ErrorClass::server, "http 503");
  struct Row {
    const char* readme_case;
    Latest latest;
    Progress progress;
    std::string expected;
    std::string feedback = "";  // the re-ask's feedback contains it
  };
  const std::vector<Row> rows = {
      // Decisions on a valid reply.
      {"a valid reply, automatic: queued", answer(valid), at(1, 0), "queue send_message to 15551234567: Hi"},
      {"a reply written to another form of the sender's number goes to the sender as stored",
       answer(reply_to("+15551234567")), at(1, 0), "queue send_message to 15551234567: Hi"},
      {"a reply needing approval: a proposal", answer(reply_to(k_sender, "offer_refund")), at(1, 0),
       "propose needs_approval [requires_approval] offer_refund to 15551234567"},
      {"a reply with review flags: a proposal", answer(reply_to(k_sender, "greet", R"(,"name":"Bob")")), at(1, 0),
       "propose review_flags [ungrounded] greet to 15551234567"},
      {"a grounded name is no flag", answer(reply_to(k_sender, "greet", R"(,"name":"Ana")")), at(1, 0),
       "queue greet to 15551234567: Hi"},
      {"the model escalates: model_escalated, its reply proposed", answer(escalate), at(1, 0),
       "escalate model_escalated {the model's escalate_to_human} proposing " + escalate},
      {"ignore: the message is closed", answer(R"({"action":"ignore"})"), at(1, 0), "ignore ignore"},
      {"an http tool runs", answer(tool), at(1, 0), "tool http://127.0.0.1:8089/status?q=order%207"},
      {"the last tool step allowed", answer(tool), at(4, 0, 3), "tool http://127.0.0.1:8089/status?q=order%207"},
      {"a tool past the step limit: contract_failed", answer(tool), at(5, 0, 4),
       "escalate contract_failed {past the tool limit: query_status} proposing " + tool},
      // Re-asks and the budget.
      {"invalid with budget left: re-asked with the output and the errors", answer(bad_enum), at(1, 1),
       "ask, showing `" + bad_enum + "`", "/action (enum)"},
      {"invalid on the second attempt: one re-ask left", answer(bad_enum), at(2, 2), "ask, showing `" + bad_enum + "`",
       "/action (enum)"},
      {"invalid on the last attempt: contract_failed", answer(bad_enum), at(3, 3),
       "escalate contract_failed {attempts 3, last enum}"},
      {"valid tool calls do not use the budget", answer(bad_enum), at(4, 2, 2), "ask, showing `" + bad_enum + "`",
       "/action (enum)"},
      {"out of attempts after tool calls: every attempt counted in the detail", answer(bad_enum), at(5, 3, 2),
       "escalate contract_failed {attempts 5, last enum}"},
      {"another recipient with budget left: re-asked", answer(to_other), at(1, 1), "ask, showing `" + to_other + "`",
       "recipient"},
      {"only the policy refused, on the last attempt: policy_violation", answer(to_other), at(3, 3),
       "escalate policy_violation {attempts 3, last recipient}"},
      // Answers without text to validate.
      {"truncated with budget left: re-asked for a shorter object", truncated, at(1, 1),
       R"(ask, showing `{"action":"send_mes`)", "cut off at the output limit"},
      {"truncated on the last attempt: contract_failed", truncated, at(3, 3),
       "escalate contract_failed {attempts 3, last truncated}"},
      {"blocked with budget left: re-asked with why", blocked, at(1, 1), "ask, showing ``", "finishReason SAFETY"},
      {"blocked on the last attempt: contract_failed naming the block", blocked, at(3, 3),
       "escalate contract_failed {attempts 3, last blocked}"},
      {"refused with budget left: re-asked, the refusal shown", refused, at(2, 2),
       "ask, showing `I can't help with that.`", "the model refused"},
      {"refused on the last attempt", refused, at(3, 3), "escalate contract_failed {attempts 3, last refused}"},
      {"no text with budget left", no_text, at(1, 1), "ask, showing ``", "only tool calls"},
      {"no text on the last attempt", no_text, at(3, 3), "escalate contract_failed {attempts 3, last no_text}"},
      {"bad_response with budget left: asked again without a pair", bad_response, at(1, 1), "ask"},
      {"bad_response on the last attempt", bad_response, at(3, 3),
       "escalate contract_failed {attempts 3, last bad_response}"},
      // The provider down.
      {"provider down: the message waits provider_wait", down, at(0, 0, 0, 10s), "postpone 30 s (server: http 503)"},
      {"a longer Retry-After is honoured, rounded up",
       provider_error(ErrorClass::rate_limited, "http 429", "", 90'500ms), at(0, 0),
       "postpone 91 s (rate_limited: http 429)"},
      {"a shorter Retry-After waits provider_wait", provider_error(ErrorClass::rate_limited, "http 429", "", 2000ms),
       at(0, 0), "postpone 30 s (rate_limited: http 429)"},
      {"a client error waits too", provider_error(ErrorClass::client, "http 401"), at(1, 0),
       "postpone 30 s (client: http 401)"},
      {"just before the deadline: still waits", provider_error(ErrorClass::transport, "timed out"), at(0, 0, 0, 899s),
       "postpone 30 s (transport: timed out)"},
      {"at the deadline: provider_unavailable", down, at(0, 0, 0, 900s),
       "escalate provider_unavailable {server: http 503}"},
      {"past the deadline, after a re-ask: provider_unavailable", provider_error(ErrorClass::transport, "refused"),
       at(1, 1, 0, 3600s), "escalate provider_unavailable {transport: refused}"},
      // A run begins.
      {"a new message: asked", Started{}, at(0, 0), "ask"},
      {"a restart with budget left resumes the re-ask", Started{FailedPair{"not json", "Reply with JSON"}}, at(2, 2),
       "ask, showing `not json`", "Reply with JSON"},
      {"budget used before a restart: contract_failed", Started{FailedPair{"not json", "Reply with JSON"}}, at(3, 3),
       "escalate contract_failed {budget used before a restart}"},
      // Types the configuration decides.
      {"a type rule escalates: undecodable", Typed{{TypeAction::escalate, ""}, "image"}, at(0, 0),
       "escalate undecodable {type image}"},
      {"a type rule replies: a fixed reply", Typed{{TypeAction::reply, "Thanks!"}, "location"}, at(0, 0),
       "queue fixed_reply for location: Thanks!"},
      {"a type rule ignores", Typed{{TypeAction::ignore, ""}, "reaction"}, at(0, 0), "ignore type reaction"},
      {"a `model` rule leaves it to the model", Typed{{TypeAction::model, ""}, "text"}, at(0, 0), "ask"},
      // What cannot be carried out.
      {"a reply whose recipient is not the sender sends nothing",
       Answered{to_other, validator::validate(kinds(), to_other, {})}, at(1, 0),
       "fail: the reply action send_message has no text to send"},
      {"an action the catalog does not have", Answered{"{}", validator::Verdict{.ok = true, .action = "launch"}},
       at(1, 0), "fail: the verdict names an unknown action launch"},
  };
  const Limits limits;  // max_retries 2, max_tool_steps 4, provider_deadline 900 s, provider_wait 30 s
  for (const Row& row : rows) {
    CAPTURE(row.readme_case);
    const Step step = decide(row.latest, row.progress, limits, kinds(), k_sender);
    CHECK(std::visit(Show{}, step) == row.expected);
    if (!row.feedback.empty()) {
      const auto* ask = std::get_if<Ask>(&step);
      REQUIRE(ask);
      REQUIRE(ask->failed);
      CHECK_THAT(ask->failed->feedback, Catch::Contains(row.feedback));
    }
    if (const auto* postpone = std::get_if<Postpone>(&step))
      CHECK(postpone->until == row.progress.now + postpone->wait);
  }
}

TEST_CASE("decide: an unusable answer's re-ask ends with the catalog's contract line", "[agent][decide]") {
  for (const auto error_class :
       {ErrorClass::truncated, ErrorClass::blocked, ErrorClass::refused, ErrorClass::no_text}) {
    CAPTURE(llm::to_string(error_class));
    const Step step = decide(provider_error(error_class, "why"), at(1, 1), {}, kinds(), k_sender);
    const auto* ask = std::get_if<Ask>(&step);
    REQUIRE(ask);
    REQUIRE(ask->failed);
    CHECK_THAT(ask->failed->feedback, Catch::EndsWith(kinds().contract_line()));
  }
}

TEST_CASE("decide: a larger budget or step limit moves the rows", "[agent][decide]") {
  const Limits generous{.max_retries = 4, .max_tool_steps = 1};
  const std::string bad_enum = R"({"action":"reply","recipient":"15551234567","content":"Hi"})";
  CHECK(std::holds_alternative<Ask>(decide(answer(bad_enum), at(3, 3), generous, kinds(), k_sender)));
  CHECK(std::holds_alternative<Escalate>(decide(answer(bad_enum), at(5, 5), generous, kinds(), k_sender)));
  const std::string tool = R"({"action":"query_status","content":"x"})";
  CHECK(std::holds_alternative<RunTool>(decide(answer(tool), at(1, 0, 0), generous, kinds(), k_sender)));
  CHECK(std::holds_alternative<Escalate>(decide(answer(tool), at(2, 0, 1), generous, kinds(), k_sender)));
}

TEST_CASE("attempt_verdict and finding_of: which provider errors are attempts, and what they record",
          "[agent][decide]") {
  struct Row {
    ErrorClass error_class;
    std::optional<store::Verdict> verdict;
    std::string code;
    std::string message;
  };
  const Row rows[] = {
      {ErrorClass::truncated, store::Verdict::invalid, "truncated",
       "the reply was cut off at the model's output limit (finish reason length)"},
      {ErrorClass::blocked, store::Verdict::invalid, "blocked", "the provider's words"},
      {ErrorClass::refused, store::Verdict::invalid, "refused", "the provider's words"},
      {ErrorClass::no_text, store::Verdict::invalid, "no_text", "the provider's words"},
      {ErrorClass::bad_response, store::Verdict::error, "bad_response", "the provider's words"},
      {ErrorClass::transport, std::nullopt, "transport", "the provider's words"},
      {ErrorClass::rate_limited, std::nullopt, "rate_limited", "the provider's words"},
      {ErrorClass::server, std::nullopt, "server", "the provider's words"},
      {ErrorClass::client, std::nullopt, "client", "the provider's words"},
  };
  for (const Row& row : rows) {
    CAPTURE(llm::to_string(row.error_class));
    CHECK(attempt_verdict(row.error_class) == row.verdict);
    const auto finding = finding_of(provider_error(row.error_class, "the provider's words"));
    CHECK(finding.path.empty());
    CHECK(finding.code == row.code);
    CHECK(finding.message == row.message);
  }
}
