#!/usr/bin/env python3
"""A template sent from the staff page in headless Chromium (docs/staff.md, "The staff page";
docs/channels.md, "The reply window"): the real dispatchd with
catalog/examples/templates.en.json, the fake model (tests/e2e/template_scenario.json) and the
fake Graph API serving the account's templates, its first send answered 131047.

- the model's free-form reply meets Graph's 131047: a window_closed escalation whose proposal
  is that reply; staff come back the next day (the customer's message moved 25 hours back
  while dispatchd is stopped);
- `dispatchctl queue show` says the window is closed and names the approved template action;
  its --json has the window and the template with its parameters;
- on the page (template_test.mjs): the panel says the window is closed, the reply box is off
  and the API refuses a typed reply (409), the form starts on the approved template action
  and shows the template's text; staff fill its fields and approve it;
- Graph receives exactly Meta's documented template payload for the customer, the outbox row
  is sent by ana, and the case is resolved.

Exit 77 (skipped) only when chromium or node is missing.

Usage: template_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import json
import os
import shutil
import sys
import time

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "tests", "browser"))
import browser_support as support  # noqa: E402
from browser_support import escalation_of, harness  # noqa: E402
from template_send_test import documented  # noqa: E402  (tests/e2e, on harness's path)
from templates_test import WABA  # noqa: E402

WORK = support.work_dir(BUILD)
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "template_scenario.json")
CUSTOMER = "5215550100031"
WAMID = "wamid.TPL1"
SCREENSHOTS = ("template-case-1366", "template-filled-1366", "template-case-375")
check = harness.check


def template_from_page(chromium, node):
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, catalog="templates.en.json", graph_script="131047",
                          fake_args={"fake_graph": ["--waba-id", WABA]},
                          extra_config={"connectors": {"whatsapp": {"waba_id": WABA}}})
    try:
        stack.start_daemon()
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_templates") == 5, what="the templates listed")
        status, _ = stack.post_webhook(harness.text_webhook(WAMID, CUSTOMER, "Hello, anyone there?"))
        check("the webhook is accepted", status == 200, status)
        stack.wait_until(lambda: escalation_of(stack, WAMID), what="the escalation after 131047")
        case = escalation_of(stack, WAMID)
        check("131047: a window_closed escalation", case[1:3] == ("window_closed", "open"), case)

        # Staff come back the next day: the customer's message is now 25 hours old.
        stack.daemon.stop()
        arrived = time.time() - 25 * 3600
        stack.execute(f"UPDATE inbox SET received_at = '{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(arrived))}',"
                      f" arrived_ms = {int(arrived * 1000)} WHERE provider_message_id = '{WAMID}'")
        stack.start_daemon()
        tokens = {"ana": stack.add_staff("ana")}

        shown = stack.dispatchctl("queue", "show", str(case[0]))
        check("queue show says the window is closed",
              shown.returncode == 0 and "reply window: closed since " in shown.stdout, shown.stdout + shown.stderr)
        check("queue show names the approved template action",
              "template action order_update: order_update (en_US), approved;" in shown.stdout, shown.stdout)
        as_json = json.loads(stack.dispatchctl("queue", "show", str(case[0]), "--json").stdout)
        offers = as_json.get("templates") or [{}]
        check("queue show --json: the window closed, the template approved with its parameters",
              as_json.get("window", {}).get("open") is False and offers[0].get("approved") is True and
              [p["field"] for p in offers[0].get("parameters", [])] ==
              ["order_number", "customer_name", "order_number", "order_number"], as_json.get("templates"))

        shots = os.path.join(WORK, "screenshots", "template")
        shutil.rmtree(shots, ignore_errors=True)
        env = dict(os.environ, STAFF_URL=stack.url(""), STAFF_A="ana", STAFF_A_TOKEN=tokens["ana"],
                   CASE_ID=str(case[0]), CASE_SENDER=CUSTOMER, SCREENSHOTS=shots, CHROMIUM=chromium)
        code = support.run_node([node, os.path.join(WORK, "template_test.mjs")], WORK, env)
        check("the browser checks (template_test.mjs)", code == 0, f"exit {code}")

        stack.wait_until(lambda: [e for e in stack.graph_requests() if e.get("type") == "template"
                                  and e.get("to") == CUSTOMER and e.get("answered") == 200],
                         what="the template at Graph")
        sent = [e for e in stack.graph_requests() if e.get("to") == CUSTOMER]
        check("Graph saw the refused reply and then only the template",
              [(e.get("type"), e.get("answered")) for e in sent] == [("text", 400), ("template", 200)],
              [(e.get("type"), e.get("answered")) for e in sent])
        payload = json.loads(sent[-1]["payload"])
        payload.pop("biz_opaque_callback_data", None)
        check("Graph received exactly the documented template payload",
              payload == documented(CUSTOMER, "566701", "Ana"), json.dumps(payload))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE recipient = ? AND"
                                              " action = 'order_update' AND status = 'sent' AND created_by = 'ana'",
                                              CUSTOMER) == 1, what="the template's row sent, by ana")
        check("the case is resolved by ana", escalation_of(stack, WAMID)[2:] == ("resolved", "ana"),
              escalation_of(stack, WAMID))
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
        support.check_screenshots(shots, SCREENSHOTS)
    except Exception:
        print("actions:", stack.query("SELECT action_id, action, recipient, status, error FROM v_actions"))
        print("daemon:", "\n".join(stack.daemon.lines[-20:]) if stack.daemon else "")
        raise
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(support.main(BUILD, template_from_page))
