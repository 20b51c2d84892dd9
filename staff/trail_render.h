#pragma once
// One message's trail (store/trail.h) as a document: Markdown for people (`dispatchctl
// trail`, the default) and JSON with the same content for programs (`dispatchctl trail
// --json`, GET /api/messages/{id}/trail). Pure functions of the read model: no I/O, no clock.
//
// Both carry, in this order: the message; its files (store/media.h: kind, state, declared
// and sniffed types, size, sha256, the reason one is not kept); the context the model was
// given (as far as the store keeps it: the history before the message and each attempt's
// request summary; the prompt itself is not stored, and the documents say so); each attempt
// with its raw output,
// the validator's repairs (recomputed from the raw output by the extractor, which is pure)
// and errors; the tool calls (an answer the validator took that was followed by another
// attempt: the tool's answer itself is not stored); the decision; the outbox rows with
// provider ids, statuses and delivery reports; the escalations; every staff action (the
// audit events whose actor is a person); the audit events with their hashes and whether the
// chain verifies across them.
//
// JSON keys (a contract, tests/staff/trail_render_test.cpp): message (... cost_usd: the sum of
// the attempts' costs, null when one is unknown), media [{media_id, position, kind, voice,
// filename, state, reason, declared_type, sniffed_type, type_mismatch, size, sha256,
// declared_sha256, attempts, created_at, fetched_at}] (null for what is not known or not
// kept), context {prompt_stored,
// history_limit, history [{at, from: "customer"|"us", text}]}, attempts [{attempt, created_at,
// provider, model, request_summary, verdict, raw_output, repairs [{code, message}], errors
// (the stored array), error_class, latency_ms, input_tokens, output_tokens, cached_input_tokens,
// cache_write_tokens, reasoning_tokens, cost_usd (null: unknown), finish_reason, tool_call}], tool_calls [{attempt,
// call, answer: null}], decision {outcome, state, last_verdict, escalation_reasons, sent_actions, summary}, actions
// [... deliveries [...]], escalations, staff_actions, audit, chain {verified, from, to, events, first_broken, reason}
// (null without audit events).

#include <string>
#include <string_view>

#include "store/trail.h"

namespace dispatchd::staff {

std::string trail_markdown(const store::Trail& trail);
std::string trail_json(const store::Trail& trail);

// The fence for a Markdown code block holding `text`: backticks, one more than the longest
// run of backticks inside it, and never fewer than three.
std::string code_fence(std::string_view text);

}  // namespace dispatchd::staff
