// fake_graph: the fake Graph API server (fake_graph.h) as a program, for the demo and for
// trying the daemon by hand.
//
//   fake_graph [--port N] [--token T] [--phone-number-id ID] [--script ITEM[,ITEM...]] [--quiet]
//              [--timeline FILE] [--waba-id ID] [--template-page-size N] [--template-script ITEM[,ITEM...]]
//              [--media ID:MIME:FILE[:OPTION...]]...
//
// ITEM scripts the answers to the first message POSTs, in order: a Graph error code with
// a canned body (131047, 130429, 131056, 131026, 190, 100, 2, 1), "http:STATUS" (a bare
// status), "delay:MS" (answer normally after MS milliseconds) or "ok". --template-script
// scripts the answers to the first template list GETs the same way; the templates served are
// FakeGraphOptions::default_templates(), --template-page-size a page (default 2).
// --media serves FILE's bytes as the customer's file ID of type MIME (FakeMedia); OPTIONs:
// stale=N (its first N download URLs are expired already), size=N (the lookup states this
// size), nosize (it states none), sha256=HEX (it states this digest), delay=MS (each
// download answers after MS milliseconds).
// stdout is JSON lines: first {"event":"listening","port":N,"base_url":"http://127.0.0.1:N/v21.0"},
// then one {"event":"request",…} per request received (none with --quiet, for the
// benchmark). Runs until SIGINT or SIGTERM. --timeline writes FILE at exit
// (tests/fakes/timeline.h): per request a line "<ns> graph_send <to>" for a text message or
// "<ns> graph_other <to>" for anything else, stamped when its body was read, for the
// benchmark's overhead join (bench/daemon_bench.py --overhead).
// Exit 0 on a signal, 2 on bad flags or when it cannot listen.

#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fakes/fake_graph.h"
#include "tests/fakes/timeline.h"

namespace {

using dispatchd::fakes::FakeGraph;
using dispatchd::fakes::FakeGraphOptions;
using dispatchd::fakes::ScriptedReply;

ScriptedReply script_item(std::string_view item) {
  if (item == "ok") return {};
  if (item.starts_with("delay:"))
    return ScriptedReply::delayed(std::chrono::milliseconds(std::stoi(std::string(item.substr(6)))));
  if (item.starts_with("http:")) return ScriptedReply::status(std::stoi(std::string(item.substr(5))));
  return ScriptedReply::graph_error(std::stoi(std::string(item)));
}

std::vector<ScriptedReply> script_list(std::string_view list) {
  std::vector<ScriptedReply> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    out.push_back(script_item(list.substr(0, comma)));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return out;
}

// ID:MIME:FILE[:OPTION...] (see above).
dispatchd::fakes::FakeMedia media_item(const std::string& spec) {
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t colon = spec.find(':', at);
    parts.push_back(spec.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() < 3) throw std::invalid_argument("--media wants ID:MIME:FILE[:OPTION...]");
  dispatchd::fakes::FakeMedia media;
  media.id = parts[0];
  media.mime_type = parts[1];
  std::ifstream in(parts[2], std::ios::binary);
  if (!in) throw std::invalid_argument("--media: cannot read " + parts[2]);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  media.bytes = bytes.str();
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const std::string& option = parts[i];
    const std::string value = option.substr(option.find('=') + 1);
    if (option.starts_with("stale=")) {
      media.stale_urls = std::stoi(value);
    } else if (option.starts_with("size=")) {
      media.stated_size = std::stoll(value);
    } else if (option == "nosize") {
      media.state_size = false;
    } else if (option.starts_with("sha256=")) {
      media.sha256 = value;
    } else if (option.starts_with("delay=")) {
      media.delay = std::chrono::milliseconds(std::stoi(value));
    } else {
      throw std::invalid_argument("--media: unknown option " + option);
    }
  }
  return media;
}

int usage(const std::string& problem) {
  std::cerr << "fake_graph: " << problem << "\n"
            << "usage: fake_graph [--port N] [--token T] [--phone-number-id ID] [--script ITEM[,ITEM...]] [--quiet] "
               "[--timeline FILE] [--waba-id ID] [--template-page-size N] [--template-script ITEM[,ITEM...]] "
               "[--media ID:MIME:FILE[:OPTION...]]...\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  FakeGraphOptions options;
  std::vector<ScriptedReply> script;
  std::vector<ScriptedReply> template_script;
  std::mutex out_mutex;
  bool quiet = false;
  std::string timeline_path;
  dispatchd::fakes::Timeline timeline;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view flag = argv[i];
      if (flag == "--quiet") {
        quiet = true;
        continue;
      }
      if (i + 1 >= argc) return usage("missing value for " + std::string(flag));
      const std::string value = argv[++i];
      if (flag == "--port") {
        options.port = static_cast<std::uint16_t>(std::stoul(value));
      } else if (flag == "--token") {
        options.access_token = value;
      } else if (flag == "--phone-number-id") {
        options.phone_number_id = value;
      } else if (flag == "--timeline") {
        timeline_path = value;
      } else if (flag == "--script") {
        script = script_list(value);
      } else if (flag == "--template-script") {
        template_script = script_list(value);
      } else if (flag == "--waba-id") {
        options.waba_id = value;
      } else if (flag == "--template-page-size") {
        options.template_page_size = std::stoul(value);
      } else if (flag == "--media") {
        options.media.push_back(media_item(value));
      } else {
        return usage("unknown flag " + std::string(flag));
      }
    }
  } catch (const std::exception& e) {
    return usage(std::string("bad value: ") + e.what());
  }
  options.on_request = [&](const dispatchd::fakes::RecordedRequest& request) {
    if (!timeline_path.empty()) {
      const bool send = request.type == "text" && !request.to.empty();
      timeline.add(request.received, send ? "graph_send" : "graph_other", request.to.empty() ? "-" : request.to);
    }
    if (quiet) return;
    const std::lock_guard lock(out_mutex);
    std::cout << dispatchd::fakes::to_json_line(request) << std::endl;
  };

  // Block the stop signals before the server thread starts, so only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    FakeGraph server(options);
    for (auto& reply : script) server.script(std::move(reply));
    for (auto& reply : template_script) server.script_templates(std::move(reply));
    {
      const std::lock_guard lock(out_mutex);
      std::cout << R"({"event":"listening","port":)" << server.port() << R"(,"base_url":")" << server.base_url()
                << "\"}" << std::endl;
    }
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  } catch (const std::exception& e) {
    std::cerr << "fake_graph: " << e.what() << "\n";
    return 2;
  }
  if (!timeline_path.empty() && !timeline.write(timeline_path)) {
    std::cerr << "fake_graph: cannot write the timeline " << timeline_path << "\n";
    return 1;
  }
  return 0;
}
