#pragma once
// The validator: raw model text in, verdict out. Pure: no I/O, no clock, no globals; safe
// to call from any thread on a shared Catalog.
//
// Stages, each with its own error codes (docs/catalog.md):
//   1. extract   the one JSON object out of fences, prose, BOM and whitespace
//   2. parse     strict JSON: UTF-8, no duplicate keys, bounded depth and size
//   3. contract  the catalog: action enum, required/extra fields, types, lengths, ...
//   4. policy    recipient rule, grounding and the reply window; requires_approval marks
//                for review
// A later stage runs only when the earlier ones passed.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "common/reply_window.h"

namespace dispatchd::validator {

struct Limits {
  std::size_t max_reply_bytes = 64 * 1024;  // the whole raw reply
  std::size_t max_depth = 32;               // nested objects/arrays
};

// What the reply is checked against besides the catalog. Unset members skip their check
// and leave a review flag instead (`recipient_unchecked`, `grounding_unchecked`).
struct Context {
  std::optional<std::string> sender;  // the conversation's counterpart
  std::optional<std::string> source;  // the inbound message text, for grounding
  // The counterpart's reply window, when the channel has one: while it is closed a reply
  // sending free-form text is refused (window_policy.h). Unset: no such rule.
  std::optional<ReplyWindow> window = std::nullopt;
};

// One problem. `path` is a JSON pointer into the reply object ("" for the reply itself).
struct Finding {
  std::string path;
  std::string code;
  std::string message;
};

// A tolerated, meaning-preserving change made to the raw text (e.g. a stripped fence).
struct Repair {
  std::string code;
  std::string message;
};

enum class Stage { extract, parse, contract, policy };

struct Verdict {
  bool ok = false;
  std::optional<Stage> failed_stage;  // set exactly when !ok
  std::string output;                 // the validated object as compact one-line JSON, when ok;
                                      // string escapes as the model wrote them
  std::string action;                 // the chosen action's name, when ok
  std::vector<Repair> repairs;
  std::vector<Finding> errors;  // at most k_max_errors; see error_count
  std::size_t error_count = 0;
  std::vector<Finding> review;  // flags that route a valid reply to staff
  std::string feedback;         // the re-ask text, when !ok

  bool needs_review() const { return ok && !review.empty(); }
};

inline constexpr std::size_t k_max_errors = 20;

Verdict validate(const catalog::Catalog& catalog, std::string_view reply, const Context& context,
                 const Limits& limits = {});

// The verdict as `dispatchctl validate` prints it (docs/cli.md).
std::string to_json(const Verdict& verdict);

const char* to_string(Stage stage);

}  // namespace dispatchd::validator
