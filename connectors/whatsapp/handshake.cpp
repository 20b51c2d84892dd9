#include "connectors/whatsapp/handshake.h"

#include "common/text.h"
#include "connectors/whatsapp/internal/detail.h"

namespace dispatchd::whatsapp {
namespace {

using detail::hex_digit;

constexpr std::size_t k_max_challenge = 256;

std::expected<std::string, std::string> percent_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      c = ' ';
    } else if (c == '%') {
      const bool room = in.size() - i >= 3;
      const int hi = room ? hex_digit(in[i + 1]) : -1;
      const int lo = room ? hex_digit(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) return std::unexpected("'%' not followed by two hex digits");
      c = static_cast<char>(hi << 4 | lo);
      i += 2;
    }
    if (c == '\0') return std::unexpected("encoded NUL byte");
    out += c;
  }
  return out;
}

bool echoable(std::string_view challenge) {
  if (challenge.empty() || challenge.size() > k_max_challenge) return false;
  for (const char c : challenge) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

}  // namespace

std::expected<QueryParams, std::string> parse_query(std::string_view query, const QueryLimits& limits) {
  if (query.starts_with('?')) query.remove_prefix(1);
  if (query.size() > limits.max_length) {
    return std::unexpected("query string longer than " + std::to_string(limits.max_length) + " bytes");
  }
  QueryParams params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    if (params.size() == limits.max_params) {
      return std::unexpected("more than " + std::to_string(limits.max_params) + " query parameters");
    }
    const std::size_t eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (!name) return std::unexpected(name.error());
    if (!value) return std::unexpected(value.error());
    params.emplace_back(std::move(*name), std::move(*value));
  }
  return params;
}

std::optional<std::string> single_value(const QueryParams& params, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [key, value] : params) {
    if (key != name) continue;
    if (found) return std::nullopt;
    found = value;
  }
  return found;
}

std::expected<std::string, HandshakeRefusal> answer_handshake(const QueryParams& params,
                                                              std::string_view verify_token) {
  const auto mode = single_value(params, "hub.mode");
  const auto token = single_value(params, "hub.verify_token");
  const auto challenge = single_value(params, "hub.challenge");
  if (mode != "subscribe") return std::unexpected(HandshakeRefusal{403, "hub.mode is not \"subscribe\""});
  if (verify_token.empty()) return std::unexpected(HandshakeRefusal{403, "no verify token configured"});
  if (!token || !text::constant_time_equal(*token, verify_token)) {
    return std::unexpected(HandshakeRefusal{403, "hub.verify_token does not match"});
  }
  if (!challenge || !echoable(*challenge)) {
    return std::unexpected(HandshakeRefusal{403, "hub.challenge missing or not 1..256 printable characters"});
  }
  return *challenge;
}

std::expected<std::string, HandshakeRefusal> answer_handshake(std::string_view query, std::string_view verify_token) {
  auto params = parse_query(query);
  if (!params) return std::unexpected(HandshakeRefusal{400, "bad query string: " + params.error()});
  return answer_handshake(*params, verify_token);
}

}  // namespace dispatchd::whatsapp
