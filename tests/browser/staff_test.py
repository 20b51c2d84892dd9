#!/usr/bin/env python3
"""The staff page end to end in headless Chromium: the real dispatchd with the fake model
(tests/e2e/scenario.json) and the fake Graph API, two staff accounts made with dispatchctl,
and staff_test.mjs driving Debian's chromium through playwright-core.

playwright-core is installed with `npm ci` from the committed package-lock.json into
BUILD_DIR/tests/browser/ (with a copy of the script), only when the version there differs
from the lock: once installed, the test runs offline. Screenshots go to
BUILD_DIR/tests/browser/screenshots/. Exit 77 (skipped) only when chromium or node is
missing; anything else that goes wrong is a failure.

Usage: staff_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "tests", "e2e"))
import harness  # noqa: E402

SKIPPED = 77
HERE = os.path.join(SOURCE, "tests", "browser")
WORK = os.path.join(BUILD, "tests", "browser")
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
CASE_SENDER = "5215534567890"
CASE_TEXT = "Necesito la factura de mi compra de octubre"
XSS_SENDER = "5215500000002"
XSS_TEXT = "<script>alert(1)</script><img src=x onerror=alert(2)> ¿me mandan la factura?"
REPLY_TEXT = "Hola: tu factura de octubre ya está en tu correo. ¡Gracias por tu compra!"
SCREENSHOTS = ("login-1366", "queue-1366", "case-1366", "refused-1366", "xss-case-1366", "xss-case-375", "case-375",
               "queue-375", "queue-1366-after-restart", "trail-1366")
check = harness.check


def find_tools():
    chromium = os.environ.get("DISPATCHD_CHROMIUM") or shutil.which("chromium")
    if not chromium and os.access("/usr/bin/chromium", os.X_OK):
        chromium = "/usr/bin/chromium"
    return chromium, shutil.which("node")


def locked_version():
    with open(os.path.join(HERE, "package-lock.json")) as f:
        return json.load(f)["packages"]["node_modules/playwright-core"]["version"]


def installed_version():
    try:
        with open(os.path.join(WORK, "node_modules", "playwright-core", "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def install_playwright():
    """The script and the lock copied to the build tree, `npm ci` there when needed."""
    os.makedirs(WORK, exist_ok=True)
    for name in ("package.json", "package-lock.json", "staff_test.mjs"):
        shutil.copy2(os.path.join(HERE, name), os.path.join(WORK, name))
    if installed_version() == locked_version():
        return True
    npm = shutil.which("npm")
    if not npm:
        check("npm is installed (scripts/install-deps.sh)", False)
        return False
    result = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=WORK, capture_output=True,
                            text=True, timeout=600)
    check("npm ci installs playwright-core " + locked_version(), result.returncode == 0, result.stderr[-2000:])
    return result.returncode == 0 and installed_version() == locked_version()


def escalation_of(stack, wamid):
    """(escalation_id, reason, status, assignee) of the escalation of a message, or None."""
    rows = stack.query("SELECT e.escalation_id, e.reason, e.status, e.assignee FROM v_escalations e"
                       " JOIN v_messages m ON m.message_id = e.message_id WHERE m.provider_message_id = ?", wamid)
    return rows[0] if rows else None


def escalate(stack, wamid, sender, text):
    """Posts a message the fake model fails on and waits for its escalation's id."""
    status, body = stack.post_webhook(harness.text_webhook(wamid, sender, text))
    check(f"webhook {wamid} accepted", status == 200, (status, body))
    stack.wait_until(lambda: escalation_of(stack, wamid), what=f"{wamid} escalated")
    return escalation_of(stack, wamid)[0]


def run_browser(argv, env, stack):
    """Runs staff_test.mjs, answering its "@@command" lines (one JSON line back each):
    post (a new escalation while the page is open), restart (dispatchd stopped, started
    again, and a new escalation posted)."""
    child = subprocess.Popen(argv, cwd=WORK, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             bufsize=1)
    posted = 0
    try:
        for line in child.stdout:
            print(line, end="", flush=True)
            command = line.strip()
            if not command.startswith("@@"):
                continue
            posted += 1
            if command == "@@restart":
                stack.daemon.stop()
                stack.start_daemon()
            escalation = escalate(stack, f"wamid.BROWSERLIVE{posted}", f"52155000001{posted:02d}",
                                  f"Otra vez la factura, número {posted}")
            child.stdin.write(json.dumps({"id": escalation}) + "\n")
            child.stdin.flush()
        return child.wait(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def browser_flow(chromium, node):
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        tokens = {name: stack.add_staff(name) for name in ("ana", "bo")}
        check("dispatchctl staff add prints a token for each account", all(tokens.values()), tokens)
        escalate(stack, "wamid.BROWSER1", CASE_SENDER, CASE_TEXT)
        escalate(stack, "wamid.BROWSER2", XSS_SENDER, XSS_TEXT)
        case, xss = escalation_of(stack, "wamid.BROWSER1"), escalation_of(stack, "wamid.BROWSER2")
        check("the model failed three times: contract_failed", case[1] == "contract_failed", case)
        attempts = [{"raw": raw, "paths": [e["path"] for e in json.loads(errors or "[]")]} for raw, errors in stack.query(
            "SELECT a.raw_output, a.errors FROM v_attempts a JOIN v_messages m ON m.message_id = a.message_id"
            " WHERE m.provider_message_id = ? ORDER BY a.attempt", "wamid.BROWSER1")]
        check("three attempts stored, each with errors", len(attempts) == 3 and all(a["paths"] for a in attempts),
              attempts)

        shots = os.path.join(WORK, "screenshots")
        shutil.rmtree(shots, ignore_errors=True)
        env = dict(os.environ, STAFF_URL=stack.url(""), STAFF_A="ana", STAFF_A_TOKEN=tokens["ana"], STAFF_B="bo",
                   STAFF_B_TOKEN=tokens["bo"], CASE_ID=str(case[0]), CASE_SENDER=CASE_SENDER,
                   CASE_ATTEMPTS=json.dumps(attempts), XSS_ID=str(xss[0]),
                   XSS_TEXT=XSS_TEXT, REPLY_TEXT=REPLY_TEXT, SCREENSHOTS=shots, CHROMIUM=chromium)
        code = run_browser([node, os.path.join(WORK, "staff_test.mjs")], env, stack)
        check("the browser checks (staff_test.mjs)", code == 0, f"exit {code}")

        # What the browser approved is what reached the customer, once, and nothing else.
        stack.wait_until(lambda: stack.graph_messages(), timeout=30, what="a message at the fake Graph API")
        sent = [(to, text) for to, text, _ in stack.graph_messages()]
        check("the fake Graph API received exactly the approved message", sent == [(CASE_SENDER, REPLY_TEXT)], sent)
        case_now, xss_now = escalation_of(stack, "wamid.BROWSER1"), escalation_of(stack, "wamid.BROWSER2")
        check("the case is resolved by the logged-in account", case_now[2:] == ("resolved", "ana"), case_now)
        check("the script message's case is still open", xss_now[2] == "open", xss_now)
        missing = [name for name in SCREENSHOTS if not os.path.exists(os.path.join(shots, name + ".png"))]
        check("screenshots written to " + shots, not missing, missing)
    finally:
        stack.close()


def main():
    chromium, node = find_tools()
    if not chromium or not node:
        print(f"skip: the browser test needs chromium and node (found {chromium}, {node}); "
              "scripts/install-deps.sh installs them")
        return SKIPPED
    if not install_playwright():
        return harness.run_flows([])

    def staff_page_in_chromium():
        browser_flow(chromium, node)

    return harness.run_flows([staff_page_in_chromium])


if __name__ == "__main__":
    sys.exit(main())
