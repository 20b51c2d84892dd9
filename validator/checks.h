#pragma once
// Internal: the contract and policy stages and the re-ask text, over a parsed reply.

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/json_reader.h"
#include "validator/validator.h"

namespace dispatchd::validator {

// Stage 3. Checks the reply object against the catalog and returns every finding; sets
// `chosen` to the action when the action field names one.
std::vector<Finding> check_contract(const catalog::Catalog& catalog, const json::Object& object,
                                    const catalog::Action*& chosen);

// Checks one value against one field schema, appending findings at `path`.
void check_field(const catalog::FieldSchema& schema, const json::Value& value, const std::string& path,
                 std::vector<Finding>& out);

// A buttons or list field's value (validator/choices.cpp): its shape and Meta's limits
// (common/interactive.h), each problem a finding under `path`.
void check_choices(catalog::FieldType type, const json::Value& value, const std::string& path,
                   std::vector<Finding>& out);

// When the action's interactive_field is set in the reply: its text_field within the
// length Meta allows above those choices.
void check_choices_text(const catalog::Catalog& catalog, const catalog::Action& action, const json::Object& object,
                        std::vector<Finding>& out);

// For a template action: each header or body text parameter's value free of what WhatsApp
// refuses in it (a line break, a tab, more than 4 spaces in a row), a finding under the
// field's path otherwise.
void check_template_values(const catalog::Catalog& catalog, const catalog::Action& action, const json::Object& object,
                           std::vector<Finding>& out);

// Stage 4, for a reply that passed the contract: recipient rule and grounding append
// errors; requires_approval, review-grounding and unchecked rules append review flags.
void check_policy(const catalog::Catalog& catalog, const catalog::Action& action, const json::Object& object,
                  const Context& context, std::vector<Finding>& errors, std::vector<Finding>& review);

// The re-ask text: the count, a compact list, the format line, one instruction.
std::string feedback_text(const catalog::Catalog& catalog, const std::vector<Finding>& errors, std::size_t total);

// True when `a` and `b` name the same counterpart: equal, or equal phone numbers once
// formatting (+, spaces, dashes, dots, parentheses) is removed, or equal email addresses
// ignoring case.
bool same_counterpart(std::string_view a, std::string_view b);

// A strict YYYY-MM-DD that names a real day of the proleptic Gregorian calendar.
bool is_calendar_date(std::string_view s);

}  // namespace dispatchd::validator
