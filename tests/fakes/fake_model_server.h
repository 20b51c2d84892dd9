#pragma once
// A fake LLM server for tests and demos. It speaks the three wire formats dispatchd's
// providers use, on 127.0.0.1 with an ephemeral port, from a thread of its own:
//   POST .../chat/completions                     OpenAI-compatible chat completions
//   POST /v1beta/models/{model}:generateContent   Gemini
//   POST /v1/messages                             Anthropic messages
// (routed by path; anything else is a 404 that consumes no script entry).
//
// Scripted: each model request takes the next pushed FakeReply, else the responder's reply,
// else the fallback, or else a 500 saying the script ran out. Every request is recorded
// (also the 404s; see set_recording), and the server counts how many requests were in
// flight at once: received and not yet answered.
//
// Thread-safety: every member function may be called from any thread while the server runs.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dispatchd::fakes {

enum class Dialect { openai, gemini, anthropic, unknown };

std::string_view to_string(Dialect dialect);

// What the fake answers to one request, written once for all three dialects.
struct FakeReply {
  int status = 200;
  // The model's text. For Anthropic it becomes the forced tool call's `input` when it is a
  // JSON object, and a text block otherwise.
  std::string output;
  bool truncated = false;                                    // finish reason length / MAX_TOKENS / max_tokens
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Retry-After
  std::optional<std::string> raw_body;                       // sent verbatim instead of a generated body
  std::chrono::milliseconds delay{0};                        // waited (without blocking the server) before answering
  bool drop = false;  // after the delay, the connection is reset (RST) instead of answered: a provider's outage
  // Called on the server thread just before the answer is written, after the delay (the
  // benchmark's timeline stamps it there). Held requests call it too.
  std::function<void()> before_write;
  // The usage reported, in each field of llm::Usage's meaning; each dialect writes them its
  // own way (OpenAI and Gemini count cached input inside the prompt total, OpenAI reasoning
  // inside completion_tokens; Anthropic reports cache reads and writes beside input_tokens).
  int input_tokens = 11;
  int output_tokens = 7;
  int cached_input_tokens = 0;
  int cache_write_tokens = 0;  // Anthropic only: the others have no such count
  int reasoning_tokens = 0;    // Gemini thoughtsTokenCount, OpenAI reasoning_tokens; Anthropic adds it to output_tokens

  static FakeReply text(std::string output);
  static FakeReply truncated_text(std::string partial_output);
  // An error status with the dialect's error body (e.g. 429 rate limit, 500, 401).
  static FakeReply error(int status);
  static FakeReply raw(int status, std::string body);

  FakeReply& with_header(std::string name, std::string value);
  FakeReply& after(std::chrono::milliseconds wait);
};

struct ReceivedRequest {
  Dialect dialect = Dialect::unknown;
  std::string method;
  std::string target;                                        // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // When its last byte was read (CLOCK_MONOTONIC, which other processes share).
  std::chrono::steady_clock::time_point received{};

  // The first value of header `name` (lower-case), or "" when absent.
  std::string header(std::string_view name) const;
};

// Computes a reply from the request (e.g. the demo's scenario); nullopt falls through to
// the fallback. Runs on the server thread with the fake's lock held: keep it quick.
using Responder = std::function<std::optional<FakeReply>(const ReceivedRequest&)>;

class FakeModelServer {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port) and starts serving. Throws when it
  // cannot listen.
  explicit FakeModelServer(unsigned short port = 0);
  // Stops serving and joins the server thread; open connections are dropped.
  ~FakeModelServer();
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;

  unsigned short port() const;
  // The base URL as a user would configure it for `dialect`: http://127.0.0.1:PORT/v1 for
  // OpenAI (whose base URL includes the version), http://127.0.0.1:PORT for the others.
  std::string base_url(Dialect dialect) const;

  // Replies are taken from the pushed queue first, then the responder, then the fallback.
  void push(FakeReply reply);
  void set_fallback(FakeReply reply);
  void set_responder(Responder responder);
  // Off: requests are counted but not kept (long runs such as benchmarks).
  void set_recording(bool on);
  // The next `count` model requests are held unanswered until all `count` are in flight at
  // once, then answered together (their scripted delay is not added). This proves a client's
  // concurrency without guessing how long it needs to open its connections. When `cap`
  // passes first, every held request is answered and holding stops for good, so a client
  // that never gets there fails its check instead of hanging.
  void hold_until_in_flight(std::size_t count, std::chrono::milliseconds cap = std::chrono::seconds(5));

  std::vector<ReceivedRequest> requests() const;
  std::size_t request_count() const;
  // The most requests received and not yet answered at any one time.
  std::size_t max_in_flight() const;
  // TCP connections accepted so far (kept-alive connections count once).
  std::size_t connections_accepted() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace dispatchd::fakes
