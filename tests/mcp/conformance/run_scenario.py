#!/usr/bin/env python3
"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned by the
committed package-lock.json) against dispatchd's MCP client.

  run_scenario.py install BUILD_DIR SOURCE_DIR
  run_scenario.py run BUILD_DIR SOURCE_DIR CLIENT SCENARIO

install: `npm ci` into BUILD_DIR/tests/mcp/conformance/, only when the version there differs
from the lock (once installed, the scenarios run offline). CTest runs it once, as the
fixture the scenarios require, so that no two installs write the same folder.

run: the suite's runner starts SCENARIO's server on 127.0.0.1, runs `CLIENT <url>` (the
driver, tests/mcp/conformance_client.cpp) and judges what the client did on the wire; a
failed or warned check, a client that exits non-zero or times out fails the scenario. The
exit status is the runner's. Its results go to BUILD_DIR/tests/mcp/conformance/results/.

Exit 77 (skipped) only when node or npm is missing; anything else that goes wrong fails.
"""
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import npm_package  # noqa: E402

SKIPPED = 77
PACKAGE = "@modelcontextprotocol/conformance"


def install(here, work):
    if not shutil.which("node") or not shutil.which("npm"):
        print("skipped: node and npm are needed (Debian's nodejs and npm)")
        return SKIPPED
    return 0 if npm_package.install(here, work, PACKAGE) else 1


def run(here, work, client, scenario):
    node = shutil.which("node")
    if not node or not shutil.which("npm"):
        print("skipped: node and npm are needed (Debian's nodejs and npm)")
        return SKIPPED
    if npm_package.installed_version(work, PACKAGE) != npm_package.locked_version(here, PACKAGE):
        print(f"{PACKAGE} {npm_package.locked_version(here, PACKAGE)} is not installed in {work}: the test"
              " 'mcp: conformance install' installs it")
        return 1
    runner = os.path.join(work, "node_modules", PACKAGE, "dist", "index.js")
    # The runner splits --command at spaces and runs it through a shell, the URL appended.
    argv = [node, runner, "client", "--command", shlex.quote(client), "--scenario", scenario, "--timeout", "30000",
            "-o", os.path.join(work, "results")]
    print("+ " + " ".join(shlex.quote(a) for a in argv), flush=True)
    result = subprocess.run(argv, cwd=work, timeout=120)
    return result.returncode


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("install", "run") or (sys.argv[1] == "run" and len(sys.argv) != 6):
        print(__doc__)
        return 2
    build, source = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    here = os.path.join(source, "tests", "mcp", "conformance")
    work = os.path.join(build, "tests", "mcp", "conformance")
    if sys.argv[1] == "install":
        return install(here, work)
    return run(here, work, os.path.abspath(sys.argv[4]), sys.argv[5])


if __name__ == "__main__":
    sys.exit(main())
