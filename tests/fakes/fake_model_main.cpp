// fake_model: the fake model server as a program, for the demo and the benchmark.
//
//   fake_model [--port N] [--scenario FILE] [--latency-ms N] [--latency-spread-ms S] [--no-record]
//              [--dump-requests FILE] [--timeline FILE] [--usage INPUT,CACHED,CACHE_WRITE,OUTPUT,REASONING]
//
// Speaks the OpenAI, Gemini and Anthropic formats (routed by path). Without a scenario it
// answers every request with `default`. A scenario file says what the "model" answers:
//   {"default": ["<reply>"],
//    "rules": [{"when": "<text in the customer's message>", "replies": ["<1st attempt>", "<2nd>", ...],
//               "errors": [429, 503]}]}
// The first rule whose `when` appears in the request's first user turn applies; the reply
// is picked by attempt (the number of assistant turns already in the request; the last one
// repeats). "{sender}" in a reply becomes the message's sender and "{message}" the customer's
// message verbatim (the text between "message from <sender>:" and the agent's closing
// instruction), so a reply of "{message}" is a model that obeys whatever action the message
// pastes (the injection suite, tests/e2e/injection_test.py); "{tool}" the last tool answer
// in the request verbatim (re-asks after it included), so a reply of "{tool}" obeys whatever a tool's result pastes
// (tests/e2e/tool_injection_test.py); "{attachment}" the text the request's first file (an
// image, a document, audio, in any dialect's shape) carries between "<<<" and ">>>", so a reply
// of "{attachment}" is a model that obeys whatever a customer's photo says
// (tests/e2e/injection_test.py); "{sender}" is replaced first, so
// a message that contains "{sender}" stays as written. A rule's `errors` answer the
// first requests for each message (each distinct first user turn) with those statuses and
// the dialect's error body, a 429 with `Retry-After: 1`, each printed as a line
// {"event":"error","status":N}. Prints one line {"event":"listening","port":N} first and
// then runs until SIGTERM or SIGINT. --dump-requests appends one JSON line per model request to
// FILE: {"target","headers":[[name,value]...],"body"} (the secrets audit of tests/e2e reads it).
// --timeline writes FILE at exit (tests/fakes/timeline.h): per model request a line
// "<ns> model_request <sender>" stamped when its body was read, and "<ns> model_answer
// <sender>" just before its answer was written (after --latency-ms), for the benchmark's
// overhead join (bench/daemon_bench.py --overhead). --usage sets the tokens every answer
// reports (FakeReply's fields, written in each dialect's own usage shape; default 11,0,0,7,0),
// so a test can see a recorded cost end to end. --latency-spread-ms spreads each answer's
// wait uniformly over latency +- S (at least 0; a fixed seed, so runs repeat): a real model's
// answers do not come back in the order and the bunches the requests went out in.
// --outage FILE: while FILE exists, every model request meets the outage it describes:
// "STATUS [RETRY_AFTER_S]" (e.g. "503 2"; empty: 503) answers that status with the dialect's
// error body; "reset" resets the connection; "timeout MS" answers only after MS (past the
// client's timeout). Each is printed as a line {"event":"outage","status":N} (0 for a reset
// or a timeout): a provider down for as long as the test keeps the file
// (tests/e2e/breaker_test.py, bench/outage_bench.py).
#include <utility>  // before Asio: Boost 1.74's Asio uses std::exchange without including it

#include <unistd.h>

#include <rapidjson/document.h>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_out.h"
#include "tests/fakes/fake_model_server.h"
#include "tests/fakes/timeline.h"

namespace {

using namespace dispatchd::fakes;

struct Rule {
  std::string when;
  std::vector<std::string> replies;
  std::vector<int> errors;  // statuses for the first requests of each message
};

struct Scenario {
  std::vector<std::string> fallback = {
      R"({"accion":"enviar_mensaje","destinatario":"{sender}","contenido":"Gracias por escribirnos.","prioridad":"media"})"};
  std::vector<Rule> rules;
};

std::vector<std::string> strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  if (array.IsArray()) {
    for (const auto& v : array.GetArray()) {
      if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
    }
  }
  return out;
}

bool load_scenario(const std::string& path, Scenario& scenario) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  if (!in || doc.Parse(text.str().c_str()).HasParseError() || !doc.IsObject()) return false;
  if (doc.HasMember("default")) scenario.fallback = strings(doc["default"]);
  if (doc.HasMember("rules") && doc["rules"].IsArray()) {
    for (const auto& r : doc["rules"].GetArray()) {
      if (!r.IsObject() || !r.HasMember("when") || !r["when"].IsString()) return false;
      Rule rule{r["when"].GetString(), strings(r["replies"]), {}};
      if (r.HasMember("errors") && r["errors"].IsArray()) {
        for (const auto& status : r["errors"].GetArray()) {
          if (!status.IsInt()) return false;
          rule.errors.push_back(status.GetInt());
        }
      }
      scenario.rules.push_back(std::move(rule));
    }
  }
  return !scenario.fallback.empty();
}

// The first user turn's text and the number of assistant turns, in any dialect.
// What the last tool answered, in a user turn the agent wrote after a tool call
// (agent/context.cpp): between "The tool answered:" and its closing instruction; "" when the
// turn is no tool answer.
std::string tool_of(const std::string& turn) {
  static constexpr std::string_view k_opening = "The tool answered:\n";
  static constexpr std::string_view k_closing = "\n\nNow choose the next action";
  if (!turn.starts_with(k_opening)) return "";
  const auto end = turn.rfind(k_closing);
  if (end == std::string::npos || end < k_opening.size()) return turn.substr(k_opening.size());
  return turn.substr(k_opening.size(), end - k_opening.size());
}

// The first user turn's text, the last one that carries a tool's answer (tool_of), and how
// many assistant turns came before.
void read_turns(Dialect dialect, const rapidjson::Document& body, std::string& first_user, std::string& last_tool,
                int& assistant_turns) {
  const char* list = dialect == Dialect::gemini ? "contents" : "messages";
  if (!body.IsObject() || !body.HasMember(list) || !body[list].IsArray()) return;
  for (const auto& turn : body[list].GetArray()) {
    if (!turn.IsObject() || !turn.HasMember("role") || !turn["role"].IsString()) continue;
    const std::string role = turn["role"].GetString();
    if (role == "assistant" || role == "model") ++assistant_turns;
    if (role != "user") continue;
    std::string text;
    if (turn.HasMember("content") && turn["content"].IsString()) text = turn["content"].GetString();
    if (turn.HasMember("content") && turn["content"].IsArray()) {
      // A turn with files (OpenAI's content parts, Anthropic's blocks): its text parts.
      for (const auto& part : turn["content"].GetArray()) {
        if (part.IsObject() && part.HasMember("type") && part["type"].IsString() &&
            std::string_view(part["type"].GetString()) == "text" && part.HasMember("text") && part["text"].IsString())
          text += part["text"].GetString();
      }
    }
    if (turn.HasMember("parts") && turn["parts"].IsArray()) {
      for (const auto& part : turn["parts"].GetArray()) {
        if (part.IsObject() && part.HasMember("text") && part["text"].IsString()) text += part["text"].GetString();
      }
    }
    if (first_user.empty()) first_user = text;
    if (!tool_of(text).empty()) last_tool = std::move(text);
  }
}

// Standard base64 (RFC 4648, padded) decoded; what is not of the alphabet is skipped.
std::string base64_decoded(std::string_view text) {
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    int value = -1;
    if (c >= 'A' && c <= 'Z') value = c - 'A';
    if (c >= 'a' && c <= 'z') value = c - 'a' + 26;
    if (c >= '0' && c <= '9') value = c - '0' + 52;
    if (c == '+') value = 62;
    if (c == '/') value = 63;
    if (value < 0) continue;
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    if (++count == 4) {
      out += static_cast<char>((bits >> 16) & 0xff);
      out += static_cast<char>((bits >> 8) & 0xff);
      out += static_cast<char>(bits & 0xff);
      bits = 0;
      count = 0;
    }
  }
  if (count == 3) {
    out += static_cast<char>((bits >> 10) & 0xff);
    out += static_cast<char>((bits >> 2) & 0xff);
  } else if (count == 2) {
    out += static_cast<char>((bits >> 4) & 0xff);
  }
  return out;
}

// The base64 data of the first file in a request, in any dialect: an OpenAI image_url data
// URL, a Gemini inline_data (or inlineData) part, an Anthropic image or document source.
std::string first_file_data(const rapidjson::Value& body) {
  const auto string_at = [](const rapidjson::Value& v, const char* name) -> std::string {
    return v.IsObject() && v.HasMember(name) && v[name].IsString() ? v[name].GetString() : "";
  };
  for (const char* list : {"messages", "contents"}) {
    if (!body.IsObject() || !body.HasMember(list) || !body[list].IsArray()) continue;
    for (const auto& turn : body[list].GetArray()) {
      if (!turn.IsObject()) continue;
      for (const char* parts : {"content", "parts"}) {
        if (!turn.HasMember(parts) || !turn[parts].IsArray()) continue;
        for (const auto& part : turn[parts].GetArray()) {
          if (!part.IsObject()) continue;
          if (part.HasMember("image_url")) {
            const std::string url = string_at(part["image_url"], "url");
            const auto comma = url.find(',');
            if (comma != std::string::npos) return url.substr(comma + 1);
          }
          for (const char* inline_name : {"inline_data", "inlineData"}) {
            if (part.HasMember(inline_name)) return string_at(part[inline_name], "data");
          }
          if (part.HasMember("source")) return string_at(part["source"], "data");
        }
      }
    }
  }
  return "";
}

// What the request's first file "says": the text its bytes carry between "<<<" and ">>>" (a
// model reading the words written on a photo), "" when none.
std::string attachment_text(const rapidjson::Value& body) {
  const std::string bytes = base64_decoded(first_file_data(body));
  const auto start = bytes.find("<<<");
  if (start == std::string::npos) return "";
  const auto end = bytes.find(">>>", start + 3);
  return end == std::string::npos ? "" : bytes.substr(start + 3, end - start - 3);
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// One request as a JSON line for --dump-requests: everything dispatchd sent, headers included.
std::string dump_line(const ReceivedRequest& request) {
  dispatchd::JsonOut w;
  w.begin_object().field("target", request.target).begin_array("headers");
  for (const auto& [name, value] : request.headers) w.begin_array().value(name).value(value).end_array();
  w.end_array().field("body", request.body).end_object();
  return w.str() + "\n";
}

volatile std::sig_atomic_t g_stop = 0;

// The sender in the agent's prompt, "... message from <sender>: ...": a plain scan, since
// the benchmark runs this per request on the same cores as dispatchd.
std::string sender_of(const std::string& prompt) {
  static constexpr std::string_view k_marker = "message from ";
  const auto at = prompt.find(k_marker);
  if (at == std::string::npos) return "";
  const auto start = at + k_marker.size();
  const auto end = prompt.find_first_of(": \t\n", start);
  if (end == std::string::npos || prompt[end] != ':') return "";
  return prompt.substr(start, end - start);
}

// The customer's message in the agent's first user turn (agent/context.cpp): after the
// "message from <sender>:" line, up to the last closing instruction (the last one, since the
// customer may have written that text too).
std::string message_of(const std::string& prompt) {
  static constexpr std::string_view k_marker = "message from ";
  static constexpr std::string_view k_closing = "\n\nChoose ONE action from the catalog";
  const auto at = prompt.find(k_marker);
  if (at == std::string::npos) return "";
  const auto start = prompt.find(":\n", at);
  if (start == std::string::npos) return "";
  const auto end = prompt.rfind(k_closing);
  if (end == std::string::npos || end < start + 2) return prompt.substr(start + 2);
  return prompt.substr(start + 2, end - start - 2);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned short port = 0;
  int latency_ms = 0;
  int spread_ms = 0;
  bool record = true;
  std::ofstream dump;
  std::string timeline_path;
  std::string outage_path;
  Timeline timeline;
  Scenario scenario;
  FakeReply usage;  // only its token counts are used
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--port" && i + 1 < argc)
      port = static_cast<unsigned short>(std::atoi(argv[++i]));
    else if (arg == "--latency-ms" && i + 1 < argc)
      latency_ms = std::atoi(argv[++i]);
    else if (arg == "--latency-spread-ms" && i + 1 < argc)
      spread_ms = std::atoi(argv[++i]);
    else if (arg == "--timeline" && i + 1 < argc)
      timeline_path = argv[++i];
    else if (arg == "--usage" && i + 1 < argc &&
             std::sscanf(argv[++i], "%d,%d,%d,%d,%d", &usage.input_tokens, &usage.cached_input_tokens,
                         &usage.cache_write_tokens, &usage.output_tokens, &usage.reasoning_tokens) == 5)
      continue;
    else if (arg == "--outage" && i + 1 < argc)
      outage_path = argv[++i];
    else if (arg == "--no-record")
      record = false;
    else if (arg == "--dump-requests" && i + 1 < argc) {
      dump.open(argv[++i], std::ios::app | std::ios::binary);
      if (!dump) {
        std::fprintf(stderr, "fake_model: cannot open %s\n", argv[i]);
        return 2;
      }
    } else if (arg == "--scenario" && i + 1 < argc) {
      if (!load_scenario(argv[++i], scenario)) {
        std::fprintf(stderr, "fake_model: cannot read the scenario %s\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(
          stderr,
          "usage: fake_model [--port N] [--scenario FILE] [--latency-ms N] [--latency-spread-ms S] [--no-record] "
          "[--dump-requests FILE] [--timeline FILE] [--usage INPUT,CACHED,CACHE_WRITE,OUTPUT,REASONING] "
          "[--outage FILE]\n");
      return 2;
    }
  }
  if (spread_ms < 0) {
    // uniform_int_distribution(S, -S) would be undefined: refused, not run with some spread.
    std::fprintf(stderr, "fake_model: --latency-spread-ms must be 0 or more, not %d\n", spread_ms);
    return 2;
  }
  auto server = std::make_unique<FakeModelServer>(port);
  server->set_recording(record);
  std::map<std::string, std::size_t> errors_served;  // by first user turn; the responder runs on one thread
  std::mt19937 random(20261205);                     // the same thread
  std::uniform_int_distribution<int> spread(-spread_ms, spread_ms);
  const auto wait = [&] { return std::chrono::milliseconds(std::max(0, latency_ms + spread(random))); };
  server->set_responder([&](const ReceivedRequest& request) -> std::optional<FakeReply> {
    if (dump.is_open()) dump << dump_line(request) << std::flush;
    rapidjson::Document body;
    body.Parse(request.body.c_str());
    std::string first_user;
    std::string last_tool;
    int attempt = 0;
    read_turns(request.dialect, body, first_user, last_tool, attempt);
    const std::string sender = sender_of(first_user);
    if (!outage_path.empty()) {
      if (std::ifstream outage(outage_path); outage) {
        std::string line;
        std::getline(outage, line);
        if (line.starts_with("reset") || line.starts_with("timeout")) {
          std::printf("{\"event\":\"outage\",\"status\":0}\n");
          std::fflush(stdout);
          FakeReply reply = FakeReply::error(503);
          if (line.starts_with("reset")) {
            reply.drop = true;
          } else {
            reply.delay = std::chrono::milliseconds(std::max(0, std::atoi(line.c_str() + 7)));
          }
          return reply;
        }
        int status = 503;
        int retry_after_s = -1;
        // Either may be missing: sscanf leaves what it does not read as it was.
        if (std::sscanf(line.c_str(), "%d %d", &status, &retry_after_s) < 1) status = 503;
        if (status < 400 || status > 599) status = 503;
        std::printf("{\"event\":\"outage\",\"status\":%d}\n", status);
        std::fflush(stdout);
        FakeReply reply = FakeReply::error(status);
        if (retry_after_s >= 0) reply.with_header("Retry-After", std::to_string(retry_after_s));
        return reply;
      }
    }
    const auto stamped = [&](FakeReply reply) {
      if (timeline_path.empty()) return reply;
      const std::string key = sender.empty() ? "-" : sender;
      timeline.add(request.received, "model_request", key);
      reply.before_write = [&timeline, key] { timeline.add(Timeline::Clock::now(), "model_answer", key); };
      return reply;
    };
    const std::vector<std::string>* replies = &scenario.fallback;
    for (const auto& rule : scenario.rules) {
      if (first_user.find(rule.when) != std::string::npos && !rule.replies.empty()) {
        replies = &rule.replies;
        if (!rule.errors.empty()) {
          std::size_t& served = errors_served[first_user];
          if (served < rule.errors.size()) {
            const int status = rule.errors[served++];
            std::printf("{\"event\":\"error\",\"status\":%d}\n", status);
            std::fflush(stdout);
            FakeReply reply = FakeReply::error(status);
            if (status == 429) reply.with_header("Retry-After", "1");
            return stamped(reply.after(wait()));
          }
        }
        break;
      }
    }
    const auto& text = (*replies)[std::min<std::size_t>(static_cast<std::size_t>(attempt), replies->size() - 1)];
    std::string out = replace_all(text, "{sender}", sender);
    if (out.find("{message}") != std::string::npos) out = replace_all(out, "{message}", message_of(first_user));
    if (out.find("{tool}") != std::string::npos) out = replace_all(out, "{tool}", tool_of(last_tool));
    if (out.find("{attachment}") != std::string::npos) out = replace_all(out, "{attachment}", attachment_text(body));
    FakeReply reply = FakeReply::text(std::move(out));
    reply.input_tokens = usage.input_tokens;
    reply.cached_input_tokens = usage.cached_input_tokens;
    reply.cache_write_tokens = usage.cache_write_tokens;
    reply.output_tokens = usage.output_tokens;
    reply.reasoning_tokens = usage.reasoning_tokens;
    return stamped(reply.after(wait()));
  });
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  std::printf("{\"event\":\"listening\",\"port\":%u}\n", server->port());
  std::fflush(stdout);
  while (!g_stop) pause();
  server.reset();  // joins the server thread: nothing adds to the timeline any more
  if (!timeline_path.empty() && !timeline.write(timeline_path)) {
    std::fprintf(stderr, "fake_model: cannot write the timeline %s\n", timeline_path.c_str());
    return 1;
  }
  return 0;
}
