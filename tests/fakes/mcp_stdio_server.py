#!/usr/bin/env python3
"""A child process for the MCP stdio tests: what a misbehaving server does to its pipes.

  mcp_stdio_server.py echo          each stdin line back on stdout; "env" prints the sorted
                                    names of its environment, "cwd" its working directory,
                                    "exit N" exits with status N; exits at stdin EOF
  mcp_stdio_server.py junk          a 5 MB line, a line that is not JSON, then like echo
  mcp_stdio_server.py flood         2 MB on stderr before reading anything, then like echo
  mcp_stdio_server.py stubborn      ignores stdin EOF and SIGTERM, sleeps
"""
import os
import signal
import sys
import time


def echo():
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line == "env":
            print(" ".join(sorted(os.environ)), flush=True)
        elif line == "cwd":
            print(os.getcwd(), flush=True)
        elif line.startswith("exit "):
            sys.exit(int(line.split()[1]))
        else:
            print(line, flush=True)


def main():
    mode = sys.argv[1]
    if mode == "junk":
        sys.stdout.write("x" * (5 << 20) + "\n")
        sys.stdout.write("Server listening on stdio\n")
        sys.stdout.flush()
    elif mode == "flood":
        for i in range(20000):
            sys.stderr.write(f"debug line {i:05d} " + "." * 90 + "\n")
        sys.stderr.flush()
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        sys.stdin.read()  # EOF comes; it stays
        while True:
            time.sleep(60)
    echo()


if __name__ == "__main__":
    main()
