#!/usr/bin/env python3
"""End-to-end: the business's WhatsApp message templates, read by the real dispatchd from
fake_graph (GET {waba-id}/message_templates, 5 templates in pages of 2) and changed by the
template webhooks, signed as Meta signs them.

What must hold: a refresh that Graph answers 503 is logged and tried again a few seconds
later; then all 5 templates are stored, read page by page (3 GETs, the later ones after a
cursor); a message_template_status_update PAUSED makes the row paused before the webhook's
200, and a template_category_update changes the category, each with its audit event; a
webhook for another business account changes nothing; `dispatchctl templates list` shows
them with their parameters, `--json` too; the audit chain verifies. Each check prints
pass/FAIL; exit 1 when any failed.

Usage: templates_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
WABA = "102290129340398"
check = harness.check


def template_webhook(field, value, waba=WABA):
    """A template webhook as Meta's reference shows it (connectors/whatsapp/templates.h)."""
    return json.dumps({"object": "whatsapp_business_account",
                       "entry": [{"id": waba, "time": 1751247548,
                                  "changes": [{"value": value, "field": field}]}]}).encode()


def status_change(event, name, language):
    return template_webhook("message_template_status_update", {
        "event": event, "message_template_id": 1473688840035974, "message_template_name": name,
        "message_template_language": language, "reason": "NONE", "message_template_category": "UTILITY",
        "other_info": {"title": "FIRST_PAUSE", "description": "Your WhatsApp message template has been paused."}})


def template_gets(stack):
    out = []
    for line in list(stack.graph.lines):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "request" and "/message_templates" in event.get("target", ""):
            out.append(event)
    return out


def templates_flow():
    stack = harness.Stack(BUILD, SOURCE, fake_args={"fake_graph": ["--waba-id", WABA, "--template-script", "2"]},
                          extra_config={"connectors": {"whatsapp": {"waba_id": WABA,
                                                                    "template_refresh_minutes": 60}}})
    try:
        daemon = stack.start_daemon()
        daemon.wait_for_line("templates refresh failed", timeout=20)
        check("a 503 on refresh is logged with its class", any("templates refresh failed (retry)" in line
                                                              for line in daemon.lines))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_templates") == 5, timeout=30,
                         what="5 templates stored after the retry")
        gets = template_gets(stack)
        check("the failed GET, then 3 pages", [g["answered"] for g in gets] == [503, 200, 200, 200],
              [(g["answered"], g["target"]) for g in gets])
        check("later pages are asked for after a cursor", all("after=cursor" in g["target"] for g in gets[2:]),
              [g["target"] for g in gets])
        check("the token is a header, never in the URL", all(harness.ACCESS_TOKEN not in g["target"] for g in gets))
        rows = stack.query("SELECT name, language, status, category, parameter_format, parameters FROM v_templates"
                           " ORDER BY name, language")
        check("all 5 stored, approved", [(r[0], r[1], r[2]) for r in rows] == [
            ("appointment_reminder", "es", "approved"), ("login_code", "en_US", "approved"),
            ("order_update", "en_US", "approved"), ("order_update", "es", "approved"),
            ("spring_sale", "es", "approved")], rows)
        named = [r for r in rows if r[0] == "appointment_reminder"][0]
        check("named parameters are kept by name", named[4] == "named" and json.loads(named[5]) == [
            {"component": "body", "name": "customer_name"}, {"component": "body", "name": "date"}], named)
        check("one templates_refreshed audit event",
              stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'templates_refreshed'") == 1)

        status, _ = stack.post_webhook(status_change("PAUSED", "order_update", "es"))
        check("the PAUSED webhook is answered 200", status == 200, status)
        check("the row is paused at once (before the 200)",
              stack.scalar("SELECT status FROM v_templates WHERE name = 'order_update' AND language = 'es'")
              == "paused")
        check("the other language stays approved",
              stack.scalar("SELECT status FROM v_templates WHERE name = 'order_update' AND language = 'en_US'")
              == "approved")
        check("a template_status audit event", stack.scalar(
            "SELECT count(*) FROM v_audit WHERE event = 'template_status' AND message_id IS NULL") == 1)

        status, _ = stack.post_webhook(template_webhook("template_category_update", {
            "message_template_id": 1473688840035977, "message_template_name": "spring_sale",
            "message_template_language": "es", "previous_category": "MARKETING", "new_category": "UTILITY"}))
        check("the category webhook is answered 200", status == 200, status)
        check("the category changed at once",
              stack.scalar("SELECT category FROM v_templates WHERE name = 'spring_sale'") == "utility")

        status, _ = stack.post_webhook(status_change("DISABLED", "spring_sale", "es"), signature="sha256=" + "0" * 64)
        check("an unsigned template webhook is refused", status == 401, status)
        status, _ = stack.post_webhook(template_webhook("message_template_status_update", {
            "event": "DISABLED", "message_template_id": 1, "message_template_name": "spring_sale",
            "message_template_language": "es", "reason": "NONE"}, waba="999"))
        check("another account's webhook changes nothing", status == 200 and stack.scalar(
            "SELECT status FROM v_templates WHERE name = 'spring_sale'") == "approved")

        listed = stack.dispatchctl("templates", "list")
        check("dispatchctl templates list exits 0", listed.returncode == 0, listed.stderr)
        lines = {tuple(line.split("\t")[:2]): line.split("\t") for line in listed.stdout.splitlines()}
        order = lines.get(("order_update", "es"), [])
        check("the list shows status, category and parameters per component",
              order[2:] == ["paused", "utility", "positional", "header {{1}}; body {{1}} {{2}}; button 0 {{1}}"],
              listed.stdout)
        check("named parameters are listed by name",
              lines.get(("appointment_reminder", "es"), [""])[-1] == "body {{customer_name}} {{date}}", listed.stdout)
        as_json = stack.dispatchctl("templates", "list", "--json")
        parsed = json.loads(as_json.stdout) if as_json.returncode == 0 else []
        check("--json lists the 5 with parameters and components", len(parsed) == 5 and all(
            "parameters" in t and isinstance(t["components"], list) for t in parsed), as_json.stdout[:500])
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(harness.run_flows([templates_flow]))
