#pragma once
// The fake Graph API's check of an interactive message (type "interactive"): the shape of
// Meta's "Interactive reply buttons messages" and "Interactive list messages" request
// references, written here again on its own (not with common/interactive.h) so that a
// payload dispatchd builds wrong fails the e2e tests rather than agreeing with itself.

#include <optional>
#include <string>
#include <string_view>

namespace dispatchd::fakes {

// What is wrong with the request body `body`, or nullopt when it is a well-formed
// interactive button or list message: exact members at every level, body.text 1..1024 (buttons)
// or 1..4096 (list) characters, 1..3 buttons of type "reply" with id 1..256 and title 1..20,
// or a button label 1..20 with 1..10 sections (title 1..24) of 1..10 rows in all (id 1..200,
// title 1..24, description at most 72), ids unique.
std::optional<std::string> interactive_problem(std::string_view body);

}  // namespace dispatchd::fakes
