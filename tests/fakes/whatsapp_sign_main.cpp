// whatsapp_sign: prints the X-Hub-Signature-256 value Meta would send for a webhook body,
// so that tests and the demo can post signed payloads to dispatchd.
//
//   whatsapp_sign --secret-env NAME [FILE]     (the body is FILE, or stdin)
//
// The body is signed byte for byte as read: send exactly those bytes. Exit 2 on usage
// errors (no secret, unreadable file).

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

#include "connectors/whatsapp/signature.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || std::string_view(argv[1]) != "--secret-env") {
    std::cerr << "usage: whatsapp_sign --secret-env NAME [FILE]\n";
    return 2;
  }
  const char* secret = std::getenv(argv[2]);
  if (secret == nullptr || *secret == '\0') {
    std::cerr << "whatsapp_sign: environment variable " << argv[2] << " is not set\n";
    return 2;
  }
  std::ostringstream body;
  if (argc == 4) {
    std::ifstream in(argv[3], std::ios::binary);
    if (!in) {
      std::cerr << "whatsapp_sign: cannot read " << argv[3] << "\n";
      return 2;
    }
    body << in.rdbuf();
  } else {
    body << std::cin.rdbuf();
  }
  std::cout << dispatchd::whatsapp::sign_body(body.str(), secret) << "\n";
  return 0;
}
