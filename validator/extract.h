#pragma once
// Stage 1: finds the one JSON object in a model's raw reply.
//
// Stripped (and listed as repairs): a UTF-8 BOM, one code fence (```json, ```JSON, ```,
// ~~~) around the object, and prose before or after it. Whitespace and CRLF are not
// repairs. Refused, never guessed:
//   too_large     the reply exceeds Limits::max_reply_bytes (checked before anything else)
//   invalid_utf8  the reply is not valid UTF-8
//   empty         nothing but whitespace
//   no_json       no JSON-looking object or array anywhere
//   truncated     a fence or a JSON-looking bracket is opened and never closed
//   too_deep      brackets nested deeper than Limits::max_depth
//   ambiguous     two JSON values, two fenced blocks, JSON outside the fenced block, or
//                 JSON that goes on after the value (below)
//   syntax        a JSON-looking structure whose brackets do not match, or JSON inside
//                 brackets that do not look like JSON (`{ // note  "a": {...} }`)
// A JSON-looking structure is an opening bracket followed by what JSON would put there;
// anything inside one that failed is never taken on its own (the nested-fragment trap).
// After the value, only prose may follow, in the fence or after it. JSON that goes on is
// not prose: a closing `}` or `]` that nothing after the value opened, or a `"` followed by
// a colon (the end of a `"name":` pair), means the model's object was longer than the part
// that closed first (`{"a":1}, "b":2}`). Brackets that balance (`{name}`, `[see below]`)
// and quoted words that no colon follows (`Note: "quoted words"`) stay prose.

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "validator/validator.h"

namespace dispatchd::json {
class Object;
}

namespace dispatchd::validator {

struct Extraction {
  std::size_t offset = 0;  // the JSON text is reply.substr(offset, length)
  std::size_t length = 0;
  bool object_read = false;  // the JSON text is an object, already read (see below)
  std::vector<Repair> repairs;
  std::optional<Finding> error;  // set when no JSON text could be taken

  bool ok() const { return !error.has_value(); }
};

Extraction extract(std::string_view reply, const Limits& limits = {});

// The same, and when the JSON text is an object that json::read_object accepts, it is
// left read in `object` and `object_read` is set: bracket matching then comes from the
// strict reader, and the caller does not read the same bytes twice.
Extraction extract(std::string_view reply, const Limits& limits, json::Object& object);

}  // namespace dispatchd::validator
