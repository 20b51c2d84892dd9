#!/usr/bin/env python3
"""dispatchctl's bash completion (contrib/bash-completion/dispatchctl), run by bash with
Debian's bash-completion framework against the built dispatchctl and a store dispatchd wrote:

- the first word offers every command of cli/main.cpp's dispatch table and nothing else;
- a command's sub-commands, its options, and an option's listed values (--status);
- an escalation id where a queue command takes one, staff accounts where --as or
  `staff revoke` take one (active accounts only), looked up through the --config given.

Usage: completion_test.py BUILD_DIR SOURCE_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
FRAMEWORK = "/usr/share/bash-completion/bash_completion"
SCRIPT = os.path.join(SOURCE, "contrib", "bash-completion", "dispatchctl")


def complete(line):
    """What completion offers for `line` (the cursor at its end)."""
    words = line.split(" ")
    program = f"""
source {FRAMEWORK}
source {SCRIPT}
COMP_LINE={line!r}
COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=({" ".join(repr(w) for w in words)})
COMP_CWORD={len(words) - 1}
_dispatchctl
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    env = dict(os.environ, PATH=os.path.join(BUILD, "cli") + os.pathsep + os.environ["PATH"])
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, env=env, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"bash failed for {line!r}: {done.stderr}")
    return set(w for w in done.stdout.split("\n") if w)


def commands_in_code():
    with open(os.path.join(SOURCE, "cli", "main.cpp")) as f:
        return set(re.findall(r'\{"([a-z-]+)", dispatchd::cli::cmd_', f.read()))


def offline_flow():
    check("Debian's bash-completion is installed", os.path.exists(FRAMEWORK))
    first = complete("dispatchctl ")
    code = commands_in_code()
    check("the first word: every command of the dispatch table", code <= first, sorted(code - first))
    check("the first word: nothing that is not a command", first <= code | {"help"}, sorted(first - code))
    check("a prefix narrows it", complete("dispatchctl mi") == {"migrate", "migrate-store"}, complete("dispatchctl mi"))
    queue = complete("dispatchctl queue ")
    check("queue's sub-commands", {"list", "show", "claim", "approve", "edit", "reply", "dismiss", "release",
                                   "takeover", "reassign", "note"} <= queue, sorted(queue))
    check("staff's sub-commands", complete("dispatchctl staff ") >= {"add", "list", "admin", "revoke"},
          complete("dispatchctl staff "))
    check("an option's listed values", complete("dispatchctl queue list --status ") ==
          {"open", "claimed", "resolved", "dismissed"}, complete("dispatchctl queue list --status "))
    options = complete("dispatchctl queue claim 1 --")
    check("a command's options", {"--as", "--config"} <= options, sorted(options))
    check("options at the first word", complete("dispatchctl --c") == {"--config", "--catalog"},
          complete("dispatchctl --c"))


def store_flow():
    stack = harness.Stack(BUILD, SOURCE, scenario=os.path.join(SOURCE, "tests", "e2e", "scenario.json"))
    try:
        stack.start_daemon()
        status, _ = stack.post_webhook(harness.text_webhook("wamid.C1", "5215550700001", "Necesito la factura"))
        check("the webhook is accepted", status == 200, status)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_escalations") >= 1, timeout=60,
                         what="an escalation")
        escalation = str(stack.scalar("SELECT escalation_id FROM v_escalations LIMIT 1"))
        stack.add_staff("ana")
        stack.add_staff("bea")
        stack.add_staff("old")
        check("a staff account revoked", stack.dispatchctl("staff", "revoke", "old").returncode == 0)
        config = stack.config_path
        ids = complete(f"dispatchctl --config {config} queue claim ")
        check("queue claim: the escalation ids of the store", ids == {escalation}, (ids, escalation))
        check("the --config may come after the command",
              complete(f"dispatchctl queue show --config {config} ") == {escalation})
        names = complete(f"dispatchctl --config {config} queue claim {escalation} --as ")
        check("--as: the active staff accounts", names == {"ana", "bea"}, names)
        check("staff revoke: the active accounts", complete(f"dispatchctl --config {config} staff revoke a") == {"ana"},
              complete(f"dispatchctl --config {config} staff revoke a"))
    finally:
        stack.close()


if __name__ == "__main__":
    harness.run_flows([offline_flow, store_flow])
