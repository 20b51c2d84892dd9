#!/usr/bin/env python3
"""The staff page end to end in headless Chromium: the real dispatchd with the fake model
(tests/e2e/scenario.json) and the fake Graph API, two staff accounts made with dispatchctl,
and staff_test.mjs driving Debian's chromium through playwright-core.

playwright-core is installed with `npm ci` from the committed package-lock.json into
BUILD_DIR/tests/browser/ (with a copy of the scripts: browser_support.py), only when the
version there differs from the lock: once installed, the test runs offline. Screenshots go
to BUILD_DIR/tests/browser/screenshots/. Exit 77 (skipped) only when chromium or node is
missing; anything else that goes wrong is a failure.

Usage: staff_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import shutil
import sys

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "tests", "browser"))
import browser_support as support  # noqa: E402
from browser_support import escalate, escalation_of, harness  # noqa: E402

WORK = support.work_dir(BUILD)
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
CASE_SENDER = "5215534567890"
CASE_TEXT = "Necesito la factura de mi compra de octubre"
XSS_SENDER = "5215500000002"
XSS_TEXT = "<script>alert(1)</script><img src=x onerror=alert(2)> ¿me mandan la factura?"
REPLY_TEXT = "Hola: tu factura de octubre ya está en tu correo. ¡Gracias por tu compra!"
SCREENSHOTS = ("login-1366", "queue-1366", "case-1366", "refused-1366", "xss-case-1366", "xss-case-375", "case-375",
               "queue-375", "queue-1366-after-restart", "trail-1366")
check = harness.check


def run_browser(argv, env, stack):
    """Runs staff_test.mjs, answering its "@@command" lines (one JSON line back each):
    post (a new escalation while the page is open), restart (dispatchd stopped, started
    again, and a new escalation posted)."""
    posted = 0

    def answer(command):
        nonlocal posted
        posted += 1
        if command == "restart":
            stack.daemon.stop()
            stack.start_daemon()
        escalation = escalate(stack, f"wamid.BROWSERLIVE{posted}", f"52155000001{posted:02d}",
                              f"Otra vez la factura, número {posted}")
        return {"id": escalation}

    return support.run_node(argv, WORK, env, answer)


def staff_page_in_chromium(chromium, node):
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
        support.check_screenshots(shots, SCREENSHOTS)
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(support.main(BUILD, staff_page_in_chromium))
