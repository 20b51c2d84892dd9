// dispatchd: the daemon. Until the daemon issue lands this binary only answers --version
// and --help, and refuses to start rather than pretend to serve.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("dispatchd %s\n", DISPATCHD_VERSION);
      return 0;
    }
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: dispatchd --config FILE [--check-config]\n");
      return 0;
    }
  }
  std::fprintf(stderr, "dispatchd: the daemon is not implemented yet; use dispatchctl for the validator\n");
  return 2;
}
