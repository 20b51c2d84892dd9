#!/usr/bin/env python3
"""Runs bench/mcp_bench over Streamable HTTP against a server it starts: a Python script that
prints {"port": N} first (tests/fakes/mcp_http_server.py), or with --node DIR the reference
server @modelcontextprotocol/server-everything installed under DIR (npm ci of
tests/e2e/mcp/package.json; its streamableHttp mode, held to 127.0.0.1). Prints mcp_bench's
JSON line and exits with its status.

  mcp_http_bench.py MCP_BENCH SERVER_SCRIPT [mcp_bench options]
  mcp_http_bench.py MCP_BENCH --node DIR [mcp_bench options]
"""
import json
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_script(script):
    server = subprocess.Popen(["/usr/bin/python3", script], stdout=subprocess.PIPE, text=True)
    port = json.loads(server.stdout.readline())["port"]
    return server, f"http://127.0.0.1:{port}/mcp"


def start_everything(folder):
    """The reference server over Streamable HTTP on a free port of 127.0.0.1."""
    port = free_port()
    here = os.path.dirname(os.path.abspath(__file__))
    loopback = os.path.join(here, "..", "tests", "e2e", "mcp", "loopback.cjs")
    entry = os.path.join(folder, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
    server = subprocess.Popen(["node", "--require", loopback, entry, "streamableHttp"], env=dict(os.environ,
                              PORT=str(port)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}/mcp"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    bench = sys.argv[1]
    if sys.argv[2] == "--node":
        server, url = start_everything(sys.argv[3])
        options = sys.argv[4:]
    else:
        server, url = start_script(sys.argv[2])
        options = sys.argv[3:]
    try:
        return subprocess.run([bench, *options, "--url", url]).returncode
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
