#include "agent/decide.h"

#include <algorithm>

#include "agent/tools.h"

namespace dispatchd::agent {
namespace {

using Reason = store::EscalationReason;

bool has_review_code(const validator::Verdict& verdict, const std::string& code) {
  return std::ranges::any_of(verdict.review, [&](const validator::Finding& flag) { return flag.code == code; });
}

// After a failed attempt: again while the budget lasts. Out of attempts, a reply that met
// the contract but not the policy (e.g. another recipient, every time) is a policy
// violation, anything else a contract failure; the last attempt's errors go with it,
// whatever failed: the validator, a safety block, ...
Step after_failure(const Progress& progress, const Limits& limits, std::optional<FailedPair> pair,
                   std::vector<validator::Finding> last_errors, bool policy) {
  if (progress.failed < 1 + limits.max_retries) return Ask{std::move(pair)};
  return Escalate{policy ? Reason::policy_violation : Reason::contract_failed,
                  OutOfAttempts{progress.attempts, std::move(last_errors)}, std::nullopt};
}

Step typed(const Typed& latest) {
  switch (latest.rule.action) {
    case TypeAction::model: break;
    case TypeAction::escalate: return Escalate{Reason::undecodable, TypeEscalated{latest.type}, std::nullopt};
    case TypeAction::reply: return QueueFixed{latest.type, latest.rule.reply_text};
    case TypeAction::ignore: return IgnoreType{latest.type};
  }
  return Ask{};  // the model decides
}

Step started(const Started& latest, const Progress& progress, const Limits& limits) {
  // Every attempt was used before a restart: decide now, as the last run would have.
  if (progress.failed >= 1 + limits.max_retries) return Escalate{Reason::contract_failed, BudgetUsed{}, std::nullopt};
  return Ask{latest.resumed};  // resume the re-ask the previous run was about to make
}

// A reply or a tool call for the outbox: queued, or proposed to staff when flagged.
Step queue_or_propose(const validator::Verdict& verdict, Reply out) {
  if (!verdict.needs_review()) return Queue{std::move(out)};
  std::vector<std::string> flags;
  for (const auto& flag : verdict.review) flags.push_back(flag.code);
  const bool approval = has_review_code(verdict, "requires_approval");
  return Propose{approval ? Reason::needs_approval : Reason::review_flags, std::move(flags), std::move(out)};
}

Step reply(const validator::Verdict& verdict, const catalog::Action& action, const catalog::Catalog& catalog,
           const std::string& sender) {
  auto outbound = validator::outbound_of(catalog, verdict, sender);
  if (!outbound) return Fail{"the reply action " + action.name + " has no text to send"};
  return queue_or_propose(verdict, Reply{verdict.action, verdict.output, std::move(*outbound), std::nullopt});
}

// An mcp act: the tool call is the decision, made by the outbox once it is durable.
Step act_on_tool(const validator::Verdict& verdict, const catalog::Action& action, const catalog::Catalog& catalog,
                 const std::string& sender) {
  auto call = validator::tool_call_of(catalog, verdict, sender);
  if (!call) return Fail{"the act action " + action.name + " has no tool call to make"};
  validator::Outbound follow_up = call->follow_up.value_or(validator::Outbound{sender, "", std::nullopt, std::nullopt});
  return queue_or_propose(verdict, Reply{verdict.action, verdict.output, std::move(follow_up), std::move(*call)});
}

// A valid verdict: what its action's kind does.
Step act(const validator::Verdict& verdict, const Progress& progress, const Limits& limits,
         const catalog::Catalog& catalog, const std::string& sender) {
  const catalog::Action* action = catalog.find_action(verdict.action);
  if (!action) return Fail{"the verdict names an unknown action " + verdict.action};
  switch (action->kind) {
    case catalog::ActionKind::http: {
      if (progress.tool_steps >= limits.max_tool_steps)
        return Escalate{Reason::contract_failed, PastToolLimit{action->name}, verdict.output};
      auto url = tool_url(*action, verdict.output);
      if (!url) return Fail{url.error()};
      return RunTool{action->name, HttpTarget{std::move(*url)}, verdict.output};
    }
    case catalog::ActionKind::mcp: {
      if (action->mcp && action->mcp->use == catalog::McpUse::act)
        return act_on_tool(verdict, *action, catalog, sender);
      if (progress.tool_steps >= limits.max_tool_steps)
        return Escalate{Reason::contract_failed, PastToolLimit{action->name}, verdict.output};
      auto arguments = tool_arguments(catalog, *action, verdict.output);
      if (!arguments) return Fail{arguments.error()};
      return RunTool{action->name, McpTarget{std::move(*arguments)}, verdict.output};
    }
    case catalog::ActionKind::reply:
    case catalog::ActionKind::template_message: return reply(verdict, *action, catalog, sender);
    case catalog::ActionKind::escalate:
      return Escalate{Reason::model_escalated, ModelEscalated{verdict.action}, verdict.output};
    case catalog::ActionKind::ignore: return Ignore{verdict.action};
  }
  return Fail{"the action " + action->name + " has an unknown kind"};
}

Step answered(const Answered& latest, const Progress& progress, const Limits& limits, const catalog::Catalog& catalog,
              const std::string& sender) {
  const validator::Verdict& verdict = latest.verdict;
  if (verdict.ok) return act(verdict, progress, limits, catalog, sender);
  return after_failure(progress, limits, FailedPair{latest.output, verdict.feedback}, verdict.errors,
                       verdict.failed_stage == validator::Stage::policy);
}

// What the model is told when its answer could not be used.
std::string unusable_feedback(const llm::ProviderError& error, const catalog::Catalog& catalog) {
  const std::string ask =
      error.error_class == llm::ErrorClass::truncated
          ? "Your previous reply was cut off at the output limit before the JSON object ended. Reply with exactly "
            "ONE complete, shorter JSON object, in this format:\n"
          : "Your previous reply could not be used: " + error.message +
                ".\nReply with exactly ONE JSON object, in this format:\n";
  return ask + catalog.contract_line();
}

Step unanswered(const llm::ProviderError& error, const Progress& progress, const Limits& limits,
                const catalog::Catalog& catalog) {
  const auto verdict = attempt_verdict(error.error_class);
  if (!verdict) {
    // No answer: the provider is down. The message waits, up to the deadline.
    if (progress.now - progress.received_at >= limits.provider_deadline)
      return Escalate{Reason::provider_unavailable, ProviderDown{error.error_class, error.message}, std::nullopt};
    auto wait = limits.provider_wait;
    if (error.retry_after) wait = std::max(wait, std::chrono::ceil<std::chrono::seconds>(*error.retry_after));
    return Postpone{progress.now + wait, wait, error.error_class, error.message};
  }
  // An answer that could not be used. Nothing readable came back from a bad_response:
  // the model is asked again without a failed pair.
  std::optional<FailedPair> pair;
  if (*verdict == store::Verdict::invalid) pair = FailedPair{error.output, unusable_feedback(error, catalog)};
  return after_failure(progress, limits, std::move(pair), {finding_of(error)}, false);
}

}  // namespace

Step decide(const Latest& latest, const Progress& progress, const Limits& limits, const catalog::Catalog& catalog,
            const std::string& sender) {
  if (const auto* t = std::get_if<Typed>(&latest)) return typed(*t);
  if (const auto* s = std::get_if<Started>(&latest)) return started(*s, progress, limits);
  if (const auto* a = std::get_if<Answered>(&latest)) return answered(*a, progress, limits, catalog, sender);
  return unanswered(std::get<llm::ProviderError>(latest), progress, limits, catalog);
}

std::optional<store::Verdict> attempt_verdict(llm::ErrorClass error_class) {
  switch (error_class) {
    case llm::ErrorClass::truncated:
    case llm::ErrorClass::blocked:
    case llm::ErrorClass::refused:
    case llm::ErrorClass::no_text: return store::Verdict::invalid;
    case llm::ErrorClass::bad_response: return store::Verdict::error;
    case llm::ErrorClass::transport:
    case llm::ErrorClass::rate_limited:
    case llm::ErrorClass::server:
    case llm::ErrorClass::client:
    case llm::ErrorClass::circuit_open: break;
  }
  return std::nullopt;
}

validator::Finding finding_of(const llm::ProviderError& error) {
  if (error.error_class == llm::ErrorClass::truncated)
    return {"", "truncated",
            "the reply was cut off at the model's output limit (finish reason " + error.finish_reason + ")"};
  return {"", std::string(llm::to_string(error.error_class)), error.message};
}

}  // namespace dispatchd::agent
