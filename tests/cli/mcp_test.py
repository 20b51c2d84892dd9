#!/usr/bin/env python3
"""MCP servers from the operator's side, against tests/fakes/mcp_script_server.py over stdio:
`dispatchctl mcp list` (text, JSON, --server, exit codes), `dispatchd --check-config` and the
start refusing a catalog whose action names a missing tool or a server whose schema is
narrower than the catalog's field (each problem naming the action, server, tool and field),
and a running dispatchd whose server's schema changes: the action disabled (/readyz names it,
dispatchd_mcp_action_pinned 0), then pinned again; its child gone after SIGTERM.

Usage: mcp_test.py DISPATCHD DISPATCHCTL SOURCE_DIR
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

DAEMON, CTL, SRC = sys.argv[1:4]
SERVER = os.path.join(SRC, "tests/fakes/mcp_script_server.py")
FAILURES = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)
        if detail:
            print("     " + str(detail)[-3000:])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Fields: message (string, at most 50). `say` calls echo, `wait` calls hang; `ghost` names
# a tool the server lacks (only in the catalog that says so).
def catalog(with_ghost):
    actions = [
        {"name": "say", "description": "echo", "kind": "mcp", "required": ["message"],
         "mcp": {"server": "script", "tool": "echo", "use": "lookup"},
         "examples": [{"valid": True, "output": {"action": "say", "message": "hola"}, "reason": "r"}]},
        {"name": "done", "description": "nothing to do", "kind": "ignore",
         "examples": [{"valid": True, "output": {"action": "done"}, "reason": "r"}]},
    ]
    if with_ghost:
        actions.append({"name": "ghost", "description": "g", "kind": "mcp", "required": [],
                        "mcp": {"server": "script", "tool": "no_such_tool", "use": "lookup"},
                        "examples": [{"valid": True, "output": {"action": "ghost"}, "reason": "r"}]})
    return {"name": "mcp.test", "action_field": "action",
            "fields": {"message": {"type": "string", "maxLength": 50}}, "actions": actions}


COMPATIBLE = {"type": "object", "properties": {"message": {"type": "string"}}}
NARROWER = {"type": "object", "properties": {"message": {"type": "string", "maxLength": 5}}}


def write(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def setup(work, with_ghost, schema, port=0):
    write(os.path.join(work, "catalog.json"), catalog(with_ghost))
    write(os.path.join(work, "schema.json"), schema)
    config = {
        "database": os.path.join(work, "d.db"), "catalog": "catalog.json",
        "migrations": {"dir": os.path.join(SRC, "migrations")},
        "http": {"listen": f"127.0.0.1:{port}"},
        "llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "MCP_TEST_KEY"},
        "mcp": {"servers": {"script": {
            "command": ["/usr/bin/python3", SERVER, "-", os.path.join(work, "schema.json")],
            "env": {"PATH": "/usr/bin:/bin"}, "startup_timeout_s": 10, "call_timeout_s": 2}}},
    }
    path = os.path.join(work, "dispatchd.json")
    write(path, config)
    return path


ENV = dict(os.environ, MCP_TEST_KEY="k")


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=60)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    with tempfile.TemporaryDirectory() as work:
        # All well: listed, pinned.
        cfg = setup(work, False, COMPATIBLE)
        r = run(CTL, "mcp", "list", "--config", cfg)
        check("mcp list: exit 0 when every action is pinned", r.returncode == 0, r.stdout + r.stderr)
        check("mcp list: the server up with its revision",
              'server script: up, revision 2025-11-25, "script", 4 tool(s)' in r.stdout, r.stdout)
        check("mcp list: the bound tool and its action", "tool echo: action say, pinned" in r.stdout, r.stdout)
        check("mcp list: a tool no action names", "tool crash: no catalog action (never called)" in r.stdout, r.stdout)
        r = run(CTL, "--config", cfg, "mcp", "list", "--json")
        listed = json.loads(r.stdout)
        server = listed["servers"][0]
        check("mcp list --json: the server and its tools",
              server["name"] == "script" and server["up"] and [t["name"] for t in server["tools"]] ==
              ["echo", "hang", "crash", "fail"], r.stdout)
        echo = server["tools"][0]
        check("mcp list --json: the tool's schema and actions",
              echo["actions"] == ["say"] and echo["input_schema"] == COMPATIBLE, echo)
        check("mcp list --json: the verdicts", listed["actions"] == [
            {"action": "say", "server": "script", "tool": "echo", "state": "pinned", "problems": []}], listed)
        r = run(CTL, "mcp", "list", "--config", cfg, "--server", "nope")
        check("mcp list --server: an unknown server is a usage error", r.returncode == 2, r.stderr)
        r = run(DAEMON, "--check-config", "--config", cfg)
        check("check-config: ok with the tools pinned", r.returncode == 0 and r.stdout.strip().endswith(": ok"),
              r.stdout + r.stderr)

        # A tool the server lacks, and a narrower schema: named, refused.
        cfg = setup(work, True, NARROWER)
        r = run(CTL, "mcp", "list", "--config", cfg)
        check("mcp list: exit 1 when an action is not pinned", r.returncode == 1, r.stdout + r.stderr)
        missing = "action `ghost` (server `script`, tool `no_such_tool`): the server does not list the tool"
        narrower = ("action `say` (server `script`, tool `echo`): the tool's inputSchema is incompatible: "
                    "field `message` (argument `message`): the server's maxLength is 5, the catalog's 50")
        check("mcp list: the missing tool named", missing in r.stdout, r.stdout)
        check("mcp list: the narrower field named", narrower in r.stdout, r.stdout)
        r = run(DAEMON, "--check-config", "--config", cfg)
        check("check-config: exit 1", r.returncode == 1, r.stdout + r.stderr)
        check("check-config: the missing tool named", missing in r.stderr, r.stderr)
        check("check-config: the narrower field named", narrower in r.stderr, r.stderr)
        r = run(DAEMON, "--config", cfg)
        check("start: refused", r.returncode == 1, r.stderr)
        refusal = [line for line in r.stderr.splitlines() if "cannot start:" in line]
        check("start: one line names both problems",
              len(refusal) == 1 and missing in refusal[0] and narrower in refusal[0], r.stderr)

        # Running: the schema narrows (disabled, named), then widens again (pinned).
        port = free_port()
        cfg = setup(work, False, COMPATIBLE, port)
        log = open(os.path.join(work, "run.log"), "w+")
        daemon = subprocess.Popen([DAEMON, "--config", cfg], stdout=log, stderr=subprocess.STDOUT, env=ENV)
        base = f"http://127.0.0.1:{port}"
        try:
            ready = None
            for _ in range(200):
                try:
                    ready = get(base + "/readyz")
                    break
                except OSError:
                    time.sleep(0.05)
            check("running: ready, nothing disabled", ready == (200, "ready\n"), ready)
            metrics = get(base + "/metrics")[1]
            check("running: the server up", 'dispatchd_mcp_server_up{server="script"} 1' in metrics, metrics[-2000:])
            pinned = 'dispatchd_mcp_action_pinned{action="say",server="script",tool="echo"} '
            check("running: the action pinned", pinned + "1" in metrics)
            write(os.path.join(work, "schema.json"), NARROWER)
            status = None
            for _ in range(100):
                status = get(base + "/readyz")
                if "disabled" in status[1]:
                    break
                time.sleep(0.05)
            check("list_changed: /readyz stays 200 and names the disabled action",
                  status[0] == 200 and "disabled: mcp " + narrower in status[1], status)
            check("list_changed: the metric says 0", pinned + "0" in get(base + "/metrics")[1])
            write(os.path.join(work, "schema.json"), COMPATIBLE)
            for _ in range(100):
                status = get(base + "/readyz")
                if status[1] == "ready\n":
                    break
                time.sleep(0.05)
            check("list_changed: pinned again once compatible", status == (200, "ready\n"), status)
        finally:
            daemon.terminate()
            code = daemon.wait(timeout=30)
        check("SIGTERM: exit 0", code == 0)
        log.seek(0)
        text = log.read()
        check("the log names the server's revision and the pin changes",
              "incompatible" in text and "mcp action `say` (server `script`, tool `echo`): pinned" in text, text[-3000:])
        children = subprocess.run(["pgrep", "-f", os.path.join(work, "schema.json")], capture_output=True, text=True)
        check("SIGTERM: no server process left", children.stdout.strip() == "", children.stdout)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
