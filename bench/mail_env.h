#pragma once
// The mail-server pair's DIR/env (tests/mail/servers.sh): KEY=VALUE lines, for the IMAP
// benchmarks (imap_bench.cpp, imap_vmime_bench.cpp). Empty when the file cannot be read.

#include <fstream>
#include <map>
#include <string>

inline std::map<std::string, std::string> read_mail_env(const char* path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}
