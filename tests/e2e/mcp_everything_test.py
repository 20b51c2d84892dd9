#!/usr/bin/env python3
"""End to end: catalog actions of kind mcp against the official MCP reference server (npm
@modelcontextprotocol/server-everything, pinned by tests/e2e/mcp/package-lock.json), with the
real dispatchd, fake_model, fake_graph and fake_gmail on 127.0.0.1.

  mcp_everything_test.py BUILD_DIR SOURCE_DIR install
  mcp_everything_test.py BUILD_DIR SOURCE_DIR --transport stdio|http

install: `npm ci` into BUILD_DIR/tests/e2e/mcp-everything/, only when the version there differs
from the lock (once installed, the tests run offline). CTest runs it once, as the fixture the
two transports require, so that no two installs write the same folder.

--transport: the server as dispatchd's child over stdio (`node dist/index.js stdio`, its whole
environment given in the config), or over Streamable HTTP (`dist/index.js streamableHttp`
started here, its port in PORT, held to 127.0.0.1 by tests/e2e/mcp/loopback.cjs, its endpoint
/mcp). What it shows, with the catalogs of tests/e2e/mcp/:
- everything.json pins (`echo` and `get-sum`); a WhatsApp message and a Gmail message, each
  once through each tool, are answered: the model first chooses the lookup, its second request
  carries the server's own answer ("Echo: ...", "The sum of 2 and 3 is 5."), then it replies,
  and the reply reaches fake_graph or fake_gmail; v_tool_calls has the call (kind mcp, server,
  tool, ok, result_bytes > 0) and the audit trail its tool_call event;
- everything_missing_tool.json (a tool the server does not list) and
  everything_looser_fields.json (fields looser than the tools' inputSchemas): --check-config
  exits 1 and dispatchd refuses to start, both naming the action, the server and the tool, or
  the field; everything.json passes --check-config; over stdio, no server is left running
  after any of them.

Exit 77 (skipped) only when node or npm is missing; anything else that goes wrong fails.
"""
import email
import email.policy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import gmail_harness  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import npm_package  # noqa: E402
from gmail_harness import mail  # noqa: E402

SKIPPED = 77
PACKAGE = "@modelcontextprotocol/server-everything"
SERVER = "everything"  # the name of the server in mcp.servers, as the catalogs call it
check = harness.check
# Not one of the secrets audit's tests: fake_model takes one --dump-requests, this test's own.
harness.AUDIT_DIR = None


# The conversations: per case, the channel, the word that makes the fake model's rule apply,
# the lookup it chooses first, and what the reference server answers (its own text, from
# dist/tools/echo.js and get-sum.js of the pinned version: "Echo: " and the sum are its work).
CASES = [
    {"name": "whatsapp echo", "channel": "whatsapp", "when": "caso-wa-eco", "action": "lookup_echo", "tool": "echo",
     "lookup": {"message": "zafiro-wa-7315"}, "answer": "Echo: zafiro-wa-7315"},
    {"name": "whatsapp sum", "channel": "whatsapp", "when": "caso-wa-suma", "action": "lookup_sum", "tool": "get-sum",
     "lookup": {"a": 2, "b": 3}, "answer": "The sum of 2 and 3 is 5."},
    {"name": "gmail echo", "channel": "gmail", "when": "caso-gm-eco", "action": "lookup_echo", "tool": "echo",
     "lookup": {"message": "zafiro-gm-4821"}, "answer": "Echo: zafiro-gm-4821"},
    {"name": "gmail sum", "channel": "gmail", "when": "caso-gm-suma", "action": "lookup_sum", "tool": "get-sum",
     "lookup": {"a": 40, "b": 2.5}, "answer": "The sum of 40 and 2.5 is 42.5."},
]


def reply_text(case):
    return f"Respuesta a {case['when']}: ya consultamos el servidor."


def scenario(cases):
    """fake_model's script: per case, the lookup first, then (a tool turn later) the reply."""
    rules = []
    for case in cases:
        lookup = dict({"action": case["action"]}, **case["lookup"])
        answer = {"action": "send_message", "recipient": "{sender}", "content": reply_text(case)}
        rules.append({"when": case["when"], "replies": [json.dumps(lookup), json.dumps(answer, ensure_ascii=False)]})
    return {"default": [json.dumps({"action": "send_message", "recipient": "{sender}", "content": "sin regla"})],
            "rules": rules}


def user_turns(request_line):
    """The user turns of one request fake_model dumped (OpenAI's messages), as text."""
    body = json.loads(json.loads(request_line)["body"])
    turns = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if message.get("role") == "user" and isinstance(content, str):
            turns.append(content)
    return turns


class Transport:
    """How dispatchd reaches the reference server: its mcp.servers entry, and for http the
    server process this test runs."""

    def __init__(self, kind, work, here):
        self.kind = kind
        self.node = shutil.which("node")
        self.entry = os.path.join(work, "node_modules", PACKAGE, "dist", "index.js")
        # An argument index.js ignores, so that this run's stdio servers can be told from others'.
        self.marker = f"dispatchd-e2e-{os.getpid()}"
        self.process = None
        if kind == "stdio":
            path = os.pathsep.join([os.path.dirname(self.node), "/usr/local/bin", "/usr/bin", "/bin"])
            self.server = {"command": [self.node, self.entry, "stdio", self.marker], "env": {"PATH": path},
                           "cwd": work, "startup_timeout_s": 60, "call_timeout_s": 30}
        else:
            port = harness.free_port()
            env = dict(os.environ, PORT=str(port))
            self.process = harness.Process([self.node, "--require", os.path.join(here, "loopback.cjs"), self.entry,
                                            "streamableHttp"], env=env, name="server-everything")
            self.process.wait_for_line("listening on port", timeout=60)
            self.server = {"url": f"http://127.0.0.1:{port}/mcp", "startup_timeout_s": 60, "call_timeout_s": 30}

    def servers(self):
        return {SERVER: self.server}

    def stdio_children(self):
        """The pids of this run's stdio servers still running."""
        pids = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if self.marker.encode() in argv:
                pids.append(int(pid))
        return pids

    def check_none_left(self, what):
        if self.kind != "stdio":
            return
        deadline = time.time() + 10
        while self.stdio_children() and time.time() < deadline:
            time.sleep(0.1)
        check(f"{self.kind}: {what}: no stdio server left running", not self.stdio_children(), self.stdio_children())

    def close(self):
        if self.process:
            self.process.stop()


def answered_flow(build, source, here, transport):
    with tempfile.TemporaryDirectory(prefix="dispatchd-mcp-everything-") as folder:
        script = os.path.join(folder, "scenario.json")
        with open(script, "w") as f:
            json.dump(scenario(CASES), f, ensure_ascii=False)
        dump = os.path.join(folder, "model-requests.jsonl")
        options = {"scenario": script, "catalog": os.path.join(here, "everything.json"),
                   "mcp_servers": transport.servers(), "fake_args": {"fake_model": ["--dump-requests", dump]}}
        with gmail_harness.started(build, source, **options) as (gmail, stack, daemon):
            sent = {}
            for n, case in enumerate(CASES):
                if case["channel"] == "whatsapp":
                    sender, wamid = f"52155000{n:05d}", f"wamid.MCP{n}"
                    stack.post_webhook(harness.text_webhook(wamid, sender, f"Hola, {case['when']}: ¿me ayudan?"))
                    sent[case["name"]] = (wamid, sender)
                else:
                    delivered = gmail.deliver(mail(f"cliente{n}@cliente.example", f"Consulta {case['when']}",
                                                   f"Hola,\n{case['when']}: ¿me ayudan?\n"))
                    sent[case["name"]] = (delivered["id"], delivered["threadId"])
            for case in CASES:
                check_case(stack, case, sent[case["name"]], dump, transport.kind)
            verify = stack.audit_verify()
            check(f"{transport.kind}: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
        transport.check_none_left("after SIGTERM")


def check_case(stack, case, ids, dump, kind):
    """One conversation of CASES, `ids` (wamid, sender) or (Gmail id, thread id)."""
    name, channel, provider_id = f"{kind}: {case['name']}", case["channel"], ids[0]
    try:
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = ?"
                                              " AND outcome <> 'pending'", provider_id) == 1,
                         timeout=60, what=f"the outcome of {name}")
    except AssertionError:
        print("  dispatchd's log (last 40 lines):\n    " + "\n    ".join(stack.daemon.lines[-40:]), flush=True)
        raise
    outcome = stack.scalar("SELECT outcome FROM v_messages WHERE provider_message_id = ?", provider_id)
    check(f"{name}: replied", outcome == "replied",
          (outcome, stack.query("SELECT reason, detail FROM v_escalations")))
    if channel == "whatsapp":
        stack.wait_until(lambda: any(to == ids[1] for to, _, _ in stack.graph_messages()), what="the WhatsApp reply")
        texts = [text for to, text, _ in stack.graph_messages() if to == ids[1]]
        check(f"{name}: the reply reached fake_graph, once", texts == [reply_text(case)], texts)
    else:
        stack.wait_until(lambda: len(stack.replies_in(ids[1])) >= 1, what="the Gmail reply")
        bodies = [email.message_from_string(sent["raw"], policy=email.policy.default).get_body(("plain",))
                  .get_content().strip() for sent in stack.replies_in(ids[1])]
        check(f"{name}: the reply reached fake_gmail, once, in the thread", bodies == [reply_text(case)], bodies)
    with open(dump) as f:
        requests = [user_turns(line) for line in f if line.strip()]
    ours = [turns for turns in requests if turns and case["when"] in turns[0]]
    tool_turns = [turn for turns in ours for turn in turns[1:]]
    check(f"{name}: the model's second request carries the server's answer ({case['answer']!r})",
          len(ours) == 2 and any(case["answer"] in turn for turn in tool_turns) and
          all(case["answer"] not in turns[0] for turns in ours),
          [turns[1:] for turns in ours])
    rows = stack.query("SELECT t.action, t.kind, t.server, t.tool, t.outcome, t.result_bytes, t.message_id"
                       " FROM v_tool_calls t JOIN v_messages m ON m.message_id = t.message_id"
                       " WHERE t.channel = ? AND m.provider_message_id = ?", channel, provider_id)
    check(f"{name}: v_tool_calls has the call, ok", len(rows) == 1 and rows[0][:5] ==
          (case["action"], "mcp", SERVER, case["tool"], "ok") and rows[0][5] > 0, rows)
    if rows:
        events = stack.scalar("SELECT count(*) FROM audit WHERE event = 'tool_call' AND message_id = ?", rows[0][6])
        check(f"{name}: the audit trail has its tool_call event", events == 1, events)


def run_dispatchd(build, stack, *args):
    """dispatchd --config <the stack's> ARGS, to its end: (exit code, output lines, seconds);
    the code None when it still ran after 150 s (then killed)."""
    started = time.time()
    try:
        done = subprocess.run([os.path.join(build, "daemon", "dispatchd"), "--config", stack.config_path] + list(args),
                              env=stack.env, capture_output=True, text=True, timeout=150)
    except subprocess.TimeoutExpired as timeout:
        return None, str(timeout).splitlines(), time.time() - started
    return done.returncode, (done.stdout + done.stderr).splitlines(), time.time() - started


def accepted_flow(build, source, here, transport):
    """The pinned catalog passes --check-config."""
    stack = harness.Stack(build, source, catalog=os.path.join(here, "everything.json"),
                          mcp_servers=transport.servers())
    try:
        code, lines, seconds = run_dispatchd(build, stack, "--check-config")
        check(f"{transport.kind}: everything.json: --check-config exits 0 ({seconds:.1f} s)", code == 0,
              (code, lines[-20:]))
        transport.check_none_left("everything.json: after --check-config")
    finally:
        stack.close()


def refused_flow(build, source, here, transport, catalog, wanted, what):
    """dispatchd --check-config and dispatchd with `catalog`: both fail, and each prints, per
    entry of `wanted`, a line naming every one of its words."""
    stack = harness.Stack(build, source, catalog=os.path.join(here, catalog), mcp_servers=transport.servers())
    try:
        for mode, args in (("--check-config", ["--check-config"]), ("dispatchd", [])):
            code, lines, seconds = run_dispatchd(build, stack, *args)
            check(f"{transport.kind}: {what}: {mode} exits {'1' if args else 'non-zero'} ({seconds:.1f} s)",
                  code == 1 if args else code not in (None, 0), (code, lines[-20:]))
            for words in wanted:
                check(f"{transport.kind}: {what}: {mode} names {', '.join(words)} in one line",
                      any(all(named(word).search(line) for word in words) for line in lines), lines[-20:])
            check(f"{transport.kind}: {what}: {mode} never listened", not any("listening on" in line for line in lines),
                  lines[-20:])
            transport.check_none_left(f"{what}: after {mode}")
    finally:
        stack.close()


def named(word):
    """A word as a line names it: on its own, not as a part of a longer name."""
    return re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])")


def main():
    usage = "usage: mcp_everything_test.py BUILD_DIR SOURCE_DIR install | --transport stdio|http"
    if len(sys.argv) < 4:
        print(usage)
        return 2
    build, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    mode = sys.argv[3:]
    if mode != ["install"] and mode not in (["--transport", "stdio"], ["--transport", "http"]):
        print(usage)
        return 2
    if not shutil.which("node") or not shutil.which("npm"):
        print("skipped: node and npm are needed (Debian's nodejs and npm)")
        return SKIPPED
    here = os.path.join(source, "tests", "e2e", "mcp")
    work = os.path.join(build, "tests", "e2e", "mcp-everything")
    if mode == ["install"]:
        return 0 if npm_package.install(here, work, PACKAGE) else 1
    if npm_package.installed_version(work, PACKAGE) != npm_package.locked_version(here, PACKAGE):
        print(f"{PACKAGE} {npm_package.locked_version(here, PACKAGE)} is not installed in {work}: the test"
              " 'e2e: mcp everything install' installs it (or run this script with `install`)")
        return 1
    transport = Transport(mode[1], work, here)

    def answered():
        answered_flow(build, source, here, transport)

    def check_config_accepts():
        accepted_flow(build, source, here, transport)

    def missing_tool():
        refused_flow(build, source, here, transport, "everything_missing_tool.json",
                     [["lookup_weather", SERVER, "get-weather"]], "a missing tool")

    def looser_fields():
        refused_flow(build, source, here, transport, "everything_looser_fields.json",
                     [["lookup_sum", SERVER, "get-sum", "`a`"], ["lookup_ticket", SERVER, "echo", "`ticket`"]],
                     "looser fields")

    try:
        return harness.run_flows([answered, check_config_accepts, missing_tool, looser_fields])
    finally:
        transport.close()


if __name__ == "__main__":
    sys.exit(main())
