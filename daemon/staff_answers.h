#pragma once
// The staff API's answers and query strings, shared by its handlers (staff_api.cpp,
// staff_search.cpp): JSON bodies, refusals {"ok":false,"error","verdict"}, a store error's
// status (404 not found, 503 retryable, 500 otherwise), ids in paths and query values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/http_server.h"
#include "store/error.h"
#include "validator/validator.h"

namespace dispatchd::daemon {

inline constexpr const char* k_json = "application/json";

Response json(int status, std::string body);
Response refusal(int status, const std::string& message, const std::optional<validator::Verdict>& verdict = {});
Response store_failure(const store::Error& e);

// A positive decimal id, nothing around it; nullopt otherwise.
std::optional<std::int64_t> parse_id(std::string_view text);

// `key`'s value in a query string, undecoded (the listing's filters take plain words); nullopt
// when absent.
std::optional<std::string> query_value(std::string_view query, std::string_view key);

}  // namespace dispatchd::daemon
