#!/usr/bin/env python3
"""Template messages end to end (docs/catalog.md, "Template actions"; docs/channels.md,
"Templates"): the real dispatchd with catalog/examples/templates.en.json, the fake model
scripted by template_scenario.json, and the fake Graph API serving the account's templates
and checking each template send against them (tests/fakes/graph_template.h: an unknown
template is 132001, a wrong parameter count 132000).

- closed window: a customer whose message arrived 25 hours ago and waits for an answer
  (stored while dispatchd was stopped): the model is told the window is closed; its
  free-form reply is refused by the policy and re-asked with feedback naming the template
  action; it picks the template action, and Graph receives exactly the documented template
  payload (header, body and URL button parameters filled from the fields); the outbox row
  keeps the template and a one-line summary, and is sent;
- checked: `dispatchctl catalog lint` with the database, and `dispatchd --check-config`,
  pass while the template is approved; once a webhook pauses it, lint names the problem;
- paused: the same action for another customer is refused before any call (no template
  request reaches Graph), with the reason, as a send_failed escalation;
- staff: once reinstated, staff send the template from `dispatchctl queue edit`, validated
  like any edit, and Graph receives it.

Usage: template_send_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402
from templates_test import WABA, status_change  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "template_scenario.json")
CATALOG = os.path.join(SOURCE, "catalog", "examples", "templates.en.json")
ANA, BEA = "5215550100011", "5215550100012"


def template_requests(stack, to):
    return [e for e in stack.graph_requests() if e.get("type") == "template" and e.get("to") == to]


def documented(to, order, name):
    """Meta's template message for order_update (en_US): header {{1}}, body {{1}} {{2}}, URL button {{1}}."""
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "template",
            "template": {"name": "order_update", "language": {"code": "en_US"}, "components": [
                {"type": "header", "parameters": [{"type": "text", "text": order}]},
                {"type": "body", "parameters": [{"type": "text", "text": name}, {"type": "text", "text": order}]},
                {"type": "button", "sub_type": "url", "index": "0", "parameters": [{"type": "text", "text": order}]}]}}


def expect_sent(stack, to, what):
    stack.wait_until(lambda: [e for e in template_requests(stack, to) if e.get("answered") == 200],
                     what=f"the template to {to}")
    sent = [e for e in template_requests(stack, to) if e.get("answered") == 200]
    payload = json.loads(sent[0]["payload"])
    tracker = payload.pop("biz_opaque_callback_data", "")
    check(f"{what}: Graph received exactly the documented template payload", payload == documented(to, "566701", "Ana"),
          json.dumps(payload))
    check(f"{what}: the idempotency key travels as the tracker", tracker.startswith("dispatchd-"), tracker)
    stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE recipient = ? AND status = 'sent'"
                                          " AND provider_message_id = ?", to, sent[0].get("wamid")) == 1,
                     what=f"{what}: the row sent with its wamid")


def main():
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, catalog="templates.en.json",
                          fake_args={"fake_graph": ["--waba-id", WABA]},
                          extra_config={"connectors": {"whatsapp": {"waba_id": WABA}}})
    dump = stack.dump_model_requests(SCENARIO)
    try:
        stack.start_daemon()
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_templates") == 5, what="the templates listed")
        stack.daemon.stop()
        # The customer wrote 25 hours ago, and the message still waits for an answer.
        arrived = time.time() - 25 * 3600
        stack.execute("INSERT INTO inbox (channel, provider_message_id, conversation_id, sender, received_at, text,"
                      f" raw_payload, message_type, arrived_ms) VALUES ('whatsapp', 'wamid.T1', '{ANA}', '{ANA}',"
                      f" '{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(arrived))}',"
                      " 'Hi, where is my parcel 566701?', '{}', 'text',"
                      f" {int(arrived * 1000)})")
        stack.start_daemon()
        expect_sent(stack, ANA, "closed")
        turns = [t for t in harness.model_turns(dump) if ANA in t]
        check("closed: the model was asked twice", len(turns) == 2, turns)
        check("closed: the request says the window is closed",
              "The customer's reply window is closed (it closed at " in turns[0], turns[:1])
        check("closed: the free-form reply is re-asked naming the template action",
              len(turns) == 2 and "window_closed" in turns[1] and "order_update" in turns[1], turns[1:])
        check("closed: the free-form reply never reached Graph",
              not [e for e in stack.graph_requests() if e.get("to") == ANA and e.get("type") == "text"])
        row = stack.query("SELECT action, body, template_message FROM v_actions WHERE recipient = ?", ANA)[0]
        check("closed: the row names the action and keeps the template as decided",
              row[0] == "order_update" and json.loads(row[2]) == {
                  "name": "order_update", "language": "en_US", "parameters": [
                      {"part": "header", "name": "1", "value": "566701"},
                      {"part": "body", "name": "1", "value": "Ana"},
                      {"part": "body", "name": "2", "value": "566701"},
                      {"part": "button", "button": 0, "name": "1", "value": "566701"}]}, row)
        check("closed: the body is a summary for people",
              row[1] == "template order_update (en_US): header 1 = 566701, 1 = Ana, 2 = 566701, button 0 1 = 566701",
              row[1])

        lint = stack.dispatchctl("catalog", "lint", "--catalog", CATALOG)
        check("checked: catalog lint with the database passes", lint.returncode == 0, lint.stdout + lint.stderr)
        checked = subprocess.run([os.path.join(BUILD, "daemon", "dispatchd"), "--config", stack.config_path,
                                          "--check-config"], capture_output=True, text=True, env=stack.env)
        check("checked: --check-config passes", checked.returncode == 0, checked.stdout + checked.stderr)

        # Paused by webhook: refused before the call.
        status, _ = stack.post_webhook(status_change("PAUSED", "order_update", "en_US"))
        check("paused: webhook answered 200", status == 200, status)
        lint = stack.dispatchctl("catalog", "lint", "--catalog", CATALOG)
        check("paused: lint names the paused template", lint.returncode != 0 and
              "order_update: the template order_update (en_US) is paused" in lint.stdout, lint.stdout + lint.stderr)
        stack.post_webhook(harness.text_webhook("wamid.T2", BEA, "Hello, where is my order 566701?"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE recipient = ? AND status = 'failed'",
                                              BEA) == 1, what="paused: the send refused")
        error = stack.scalar("SELECT error FROM v_actions WHERE recipient = ?", BEA)
        check("paused: refused with the reason", "the template order_update (en_US) is paused" in (error or ""), error)
        check("paused: nothing reached Graph", template_requests(stack, BEA) == [], template_requests(stack, BEA))
        escalation = stack.scalar("SELECT escalation_id FROM v_escalations e JOIN v_messages m"
                                  " ON m.message_id = e.message_id WHERE m.provider_message_id = 'wamid.T2'"
                                  " AND e.reason = 'send_failed'")
        check("paused: a send_failed escalation for staff", escalation is not None, escalation)

        # Reinstated: staff send it from dispatchctl.
        stack.post_webhook(status_change("REINSTATED", "order_update", "en_US"))
        check("reinstated: approved again",
              stack.scalar("SELECT status FROM v_templates WHERE name = 'order_update' AND language = 'en_US'")
              == "approved")
        stack.add_staff("ana")
        action = json.dumps({"action": "order_update", "recipient": BEA, "content": None, "customer_name": "Ana",
                             "order_number": "566701"})
        bad = stack.dispatchctl("queue", "edit", str(escalation), "--as", "ana", "--action",
                                action.replace("566701", "5667 01"))
        check("staff: an edit breaking the field's pattern is refused", bad.returncode != 0, bad.stdout + bad.stderr)
        edited = stack.dispatchctl("queue", "edit", str(escalation), "--as", "ana", "--action", action)
        check("staff: queue edit with the template action exits 0", edited.returncode == 0, edited.stdout + edited.stderr)
        expect_sent(stack, BEA, "staff")
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
    except Exception:
        print("actions:", stack.query("SELECT action_id, recipient, status, error FROM v_actions"))
        print("messages:", stack.query("SELECT provider_message_id, outcome FROM v_messages"))
        print("daemon:", "\n".join(stack.daemon.lines[-20:]) if stack.daemon else "")
        raise
    finally:
        stack.close()
    print("template messages: all checks passed")


if __name__ == "__main__":
    main()
