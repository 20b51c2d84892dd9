// imap_vmime_bench: the alternative weighed for the IMAP channel, VMime 0.9.2 (Debian's
// libvmime-dev: GnuTLS, GNU SASL), fetching what imap_bench fetches: every message of
// soporte's INBOX, one UID FETCH each, on one IMAPS connection with the test CA. A throwaway
// for bench/imap_fetch_bench.py; built only when pkg-config finds vmime.
//
//   imap_vmime_bench ENV_FILE      prints one JSON line; exits 1 on any error

#include <vmime/security/cert/X509Certificate.hpp>
#include <vmime/security/cert/defaultCertificateVerifier.hpp>
#include <vmime/vmime.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "bench/mail_env.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: imap_vmime_bench ENV_FILE\n");
    return 1;
  }
  auto env = read_mail_env(argv[1]);
  try {
    std::ifstream ca_in(env["CA_FILE"]);
    std::stringstream ca_pem;
    ca_pem << ca_in.rdbuf();
    std::string pem = ca_pem.str();
    auto ca =
        vmime::security::cert::X509Certificate::import(reinterpret_cast<const vmime::byte_t*>(pem.data()), pem.size());
    auto verifier = vmime::make_shared<vmime::security::cert::defaultCertificateVerifier>();
    std::vector<vmime::shared_ptr<vmime::security::cert::X509Certificate>> roots = {ca};
    verifier->setX509RootCAs(roots);

    auto start = std::chrono::steady_clock::now();
    auto session = vmime::net::session::create();
    vmime::utility::url url("imaps", "127.0.0.1", std::stoi(env["IMAPS_PORT"]));
    auto store = session->getStore(url);
    store->setProperty("auth.username", env["SUPPORT_USER"]);
    store->setProperty("auth.password", env["SUPPORT_PASSWORD"]);
    store->setCertificateVerifier(verifier);
    store->connect();
    auto folder = store->getFolder(vmime::net::folder::path("INBOX"));
    folder->open(vmime::net::folder::MODE_READ_ONLY);
    auto messages = folder->getMessages(vmime::net::messageSet::byUID(1, "*"));
    std::size_t bytes = 0;
    for (auto& message : messages) {
      std::string raw;
      vmime::utility::outputStreamStringAdapter out(raw);
      message->extract(out, nullptr, 0, static_cast<std::size_t>(-1), true);
      bytes += raw.size();
    }
    folder->close(false);
    store->disconnect();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"client\":\"vmime\",\"messages\":%zu,\"bytes\":%zu,\"seconds\":%.6f}\n", messages.size(), bytes,
                seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "imap_vmime_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
