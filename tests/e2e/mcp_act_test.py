#!/usr/bin/env python3
"""Catalog mcp actions with "use": "act" end to end: the real dispatchd, fake_model and
fake_graph, and tests/fakes/mcp_script_server.py over stdio, whose `book` tool writes down
every call it gets (with the idempotency key dispatchd sends in `_meta`) before answering.

  mcp_act_test.py BUILD_DIR SOURCE_DIR

- a decided act: the tool called once, with the outbox row's idempotency key, only after the
  decision; then its follow-up reply sent to the customer; the row `sent`, the call in
  v_tool_calls with its row, the message replied;
- a tool that answers isError: a tool_failed escalation with the tool's text, nothing sent;
- an act that requires approval: proposed, nothing called; approved by staff
  (`dispatchctl queue approve`), then called once and its reply sent;
- dispatchd SIGKILLed while the tool runs: after the restart the row is `unknown` with a
  delivery_unknown escalation, and the tool was called exactly once (never again blindly).
"""
import json
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
check = harness.check
SERVER = os.path.join(SOURCE, "tests", "fakes", "mcp_script_server.py")

# Each case's customer (a wa_id keys its fake model rule) and what the model decides.
BOOKED, FAILED, APPROVED, KILLED = "5215500030001", "5215500030002", "5215500030003", "5215500030004"


def decision(action, sender, content):
    return json.dumps({"accion": action, "destinatario": sender, "contenido": content, "prioridad": "media"},
                      ensure_ascii=False, separators=(",", ":"))


def act_action(name, tool, text_field=True, approval=False):
    action = {"name": name, "description": f"Hacer {name} en el sistema de reservas.", "kind": "mcp",
              "required": ["destinatario", "contenido", "prioridad"],
              "policy": {"recipient_field": "destinatario", "requires_approval": approval},
              "mcp": {"server": "reservas", "tool": tool, "use": "act", "arguments": {"contenido": "nota"}},
              "examples": [{"valid": True, "sender": "5215512345678", "reason": "Lo pide el cliente.",
                            "output": {"accion": name, "destinatario": "5215512345678", "contenido": "Mesa para dos",
                                       "prioridad": "media"}}]}
    if text_field:
        action["text_field"] = "contenido"
    return action


def write_setup(folder):
    with open(os.path.join(SOURCE, "catalog", "examples", "support.es.json")) as f:
        catalog = json.load(f)
    catalog["actions"] += [act_action("reservar", "book"), act_action("cancelar", "fail", text_field=False),
                           act_action("reservar_con_permiso", "book", approval=True)]
    catalog_path = os.path.join(folder, "catalog.json")
    with open(catalog_path, "w") as f:
        json.dump(catalog, f, ensure_ascii=False)
    rules = [{"when": f"message from {BOOKED}:", "replies": [decision("reservar", BOOKED, "Reservado: mesa para dos.")]},
             {"when": f"message from {FAILED}:", "replies": [decision("cancelar", FAILED, "Cancelar la reserva 7")]},
             {"when": f"message from {APPROVED}:",
              "replies": [decision("reservar_con_permiso", APPROVED, "Reservado: mesa para cuatro.")]},
             {"when": f"message from {KILLED}:", "replies": [decision("reservar", KILLED, "Reserva lento: mesa.")]}]
    scenario = os.path.join(folder, "scenario.json")
    with open(scenario, "w") as f:
        json.dump({"rules": rules}, f, ensure_ascii=False)
    calls = os.path.join(folder, "calls.jsonl")
    servers = {"reservas": {"command": ["/usr/bin/python3", SERVER, "-"],
                            "env": {"PATH": "/usr/bin:/bin", "MCP_CALLS": calls}, "call_timeout_s": 120}}
    return catalog_path, scenario, calls, servers


def calls_made(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def message(stack, wamid):
    rows = stack.query("SELECT message_id, outcome FROM v_messages WHERE provider_message_id = ?", wamid)
    return rows[0] if rows else (None, None)


def flow():
    with tempfile.TemporaryDirectory(prefix="dispatchd-act-") as folder:
        catalog, scenario, calls, servers = write_setup(folder)
        stack = harness.Stack(BUILD, SOURCE, scenario=scenario, catalog=catalog, mcp_servers=servers)
        try:
            stack.start_daemon()
            for sender in (BOOKED, FAILED, APPROVED):
                status, _ = stack.post_webhook(harness.text_webhook(f"wamid.act.{sender}", sender, "Quiero reservar"))
                check(f"{sender}: webhook answered 200", status == 200)

            # A decided act: called once with its row's key, then the follow-up reply.
            stack.wait_until(lambda: message(stack, f"wamid.act.{BOOKED}")[1] == "replied", timeout=60,
                             what="the booked message replied")
            message_id, _ = message(stack, f"wamid.act.{BOOKED}")
            rows = stack.query("SELECT action_id, status, tool_server, tool_name, idempotency_key, body FROM v_actions "
                               "WHERE message_id = ? ORDER BY action_id", message_id)
            check("act: the tool call's row, then its follow-up reply", len(rows) == 2 and rows[0][1:4] ==
                  ("sent", "reservas", "book") and rows[1][1] == "sent" and rows[1][2] is None, rows)
            tool_row = rows[0]
            booked = [c for c in calls_made(calls) if c["key"] == tool_row[4]]
            check("act: the tool called exactly once, with the row's idempotency key in _meta", len(booked) == 1,
                  calls_made(calls))
            check("act: the tool got the action's fields, renamed as the catalog says",
                  booked and booked[0]["arguments"] == {"destinatario": BOOKED, "nota": "Reservado: mesa para dos.",
                                                         "prioridad": "media"}, booked)
            sent = [(to, text) for to, text, _ in stack.graph_messages() if to == BOOKED]
            check("act: the follow-up reply reached the customer", sent == [(BOOKED, "Reservado: mesa para dos.")],
                  sent)
            recorded = stack.query("SELECT kind, server, tool, outcome, action_id FROM v_tool_calls WHERE message_id = ?",
                                   message_id)
            check("act: the call is in v_tool_calls with its outbox row",
                  recorded == [("mcp", "reservas", "book", "ok", tool_row[0])], recorded)

            # A tool that answers with an error: tool_failed, with its text; nothing sent.
            stack.wait_until(lambda: message(stack, f"wamid.act.{FAILED}")[1] == "escalated", timeout=60,
                             what="the failed act escalated")
            failed_id, _ = message(stack, f"wamid.act.{FAILED}")
            escalations = stack.query("SELECT reason, detail FROM v_escalations WHERE message_id = ?", failed_id)
            check("isError: a tool_failed escalation with the tool's text",
                  len(escalations) == 1 and escalations[0][0] == "tool_failed" and "it failed" in escalations[0][1],
                  escalations)
            check("isError: nothing sent to the customer", not [m for m in stack.graph_messages() if m[0] == FAILED])

            # Requires approval: proposed and not called until staff approve.
            stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_escalations e JOIN v_messages m ON "
                                                  "m.message_id = e.message_id WHERE m.provider_message_id = ? AND "
                                                  "e.reason = 'needs_approval'", f"wamid.act.{APPROVED}") == 1,
                             timeout=60, what="the act proposed to staff")
            approved_id, _ = message(stack, f"wamid.act.{APPROVED}")
            proposed_key = stack.scalar("SELECT idempotency_key FROM v_actions WHERE message_id = ? AND status = "
                                        "'proposed' AND tool_name = 'book'", approved_id)
            time.sleep(1)
            check("approval: nothing called before staff approve",
                  proposed_key and not [c for c in calls_made(calls) if c["key"] == proposed_key], calls_made(calls))
            escalation = stack.scalar("SELECT escalation_id FROM v_escalations WHERE message_id = ?", approved_id)
            done = stack.dispatchctl("queue", "approve", str(escalation), "--as", "ana")
            check("approval: dispatchctl queue approve", done.returncode == 0, done.stdout + done.stderr)
            # The message was finished `escalated` when it went to staff; the approved call and
            # its reply are the outbox's.
            stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE message_id = ? AND "
                                                  "status = 'sent'", approved_id) == 2, timeout=60,
                             what="the approved call and its reply sent")
            check("approval: then called once",
                  len([c for c in calls_made(calls) if c["key"] == proposed_key]) == 1, calls_made(calls))
            check("approval: and its reply sent", [(to, text) for to, text, _ in stack.graph_messages()
                                                   if to == APPROVED] == [(APPROVED, "Reservado: mesa para cuatro.")])

            # SIGKILL while the tool runs: unknown after the restart, never called again.
            status, _ = stack.post_webhook(harness.text_webhook(f"wamid.act.{KILLED}", KILLED, "Quiero reservar"))
            check("kill: webhook answered 200", status == 200)
            stack.wait_until(lambda: any("lento" in json.dumps(c) for c in calls_made(calls)), timeout=60,
                             what="the slow call under way")
            stack.daemon.stop(sig=signal.SIGKILL)
            stack.start_daemon()
            killed_id, _ = message(stack, f"wamid.act.{KILLED}")
            stack.wait_until(lambda: message(stack, f"wamid.act.{KILLED}")[1] == "escalated", timeout=60,
                             what="the killed act escalated")
            row = stack.query("SELECT status FROM v_actions WHERE message_id = ? AND tool_name = 'book'", killed_id)
            reasons = stack.query("SELECT reason FROM v_escalations WHERE message_id = ?", killed_id)
            check("kill: the call's row is unknown, escalated delivery_unknown",
                  row == [("unknown",)] and reasons == [("delivery_unknown",)], (row, reasons))
            time.sleep(2)
            slow = [c for c in calls_made(calls) if "lento" in json.dumps(c)]
            check("kill: the tool was called exactly once (never again blindly)", len(slow) == 1, slow)
            check("kill: nothing sent to the customer", not [m for m in stack.graph_messages() if m[0] == KILLED])
            verify = stack.audit_verify()
            check("the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
            code = stack.daemon.stop()
            check("dispatchd exits 0 on SIGTERM", code == 0, "\n".join(stack.daemon.lines[-20:]))
        finally:
            stack.close()


if __name__ == "__main__":
    sys.exit(harness.run_flows([flow]))
