#!/usr/bin/env python3
"""The staff desk in headless Chromium: hand-overs, internal notes, response-time targets and
saved replies, on the real dispatchd with the fake model (tests/e2e/scenario.json) and the
fake Graph API, two staff accounts made with dispatchctl, and desk_test.mjs driving Debian's
chromium through playwright-core (installed as browser_support.py says).

- ana claims a case and does nothing more on it; bo's page shows her claim live and no Take
  over until the claim has been idle staff.claim_idle_minutes (1), then bo takes it over on
  the page and ana's page shows him holding it live; v_audit has the staff_takeover (from
  ana, rule idle) and `dispatchctl audit verify` passes after.
- bo's internal note shows on ana's page live and never reaches the Graph API.
- staff.response_target_minutes gives policy_violation 1 minute (the rest 60): the queue
  marks that case "overdue" once the minute has passed, the others still "due in".
- the reply case's customer had an earlier case (dismissed): the case shows it with how it
  ended and the earlier message; the search by the customer's number as typed finds both,
  newest first, and opens the earlier one.
- saved replies made with the admin token: one that is too long once {customer} is filled is
  refused on the page with the error shown and nothing sent; the other is picked, filled for
  the case and sent, and the fake Graph API receives exactly that text for the customer.

Screenshots go to BUILD_DIR/tests/browser/screenshots/desk/. Exit 77 (skipped) only when
chromium or node is missing; anything else that goes wrong is a failure.

Usage: desk_test.py BUILD_DIR SOURCE_DIR
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
check = harness.check

# (wamid, sender, text): two the model fails on three times (contract_failed), one where it
# writes to a number that is not the sender's (policy_violation: the reason due in 1 minute).
HANDOVER = ("wamid.DESK1", "5215534567801", "Necesito la factura de mi compra de octubre")
REPLY = ("wamid.DESK2", "5215534567802", "¿Me reenvían la factura de noviembre, por favor?")
# The reply case's customer wrote before: that case was dismissed; search and the case's
# history find it.
EARLIER = ("wamid.DESK0", "5215534567802", "Hola, ¿dónde está la factura de septiembre?")
EARLIER_NOTE = "Duplicado: la factura de septiembre ya se envió por correo"
CUSTOMER_TYPED = "+52 1 55 3456 7802"
OVERDUE = ("wamid.DESK3", "5215534567803", "Mi vecino 5215599999999 dice que le deben dinero")
CONFIG = {"staff": {"claim_idle_minutes": 1, "response_target_minutes": {"default": 60, "policy_violation": 1}}}
NOTE_TEXT = "Llamé al cliente: espera la factura corregida, no le escriban todavía (nota interna 7731)."
GOOD_NAME = "Factura en camino"
GOOD_TEXT = "Hola {customer}: el caso #{escalation} lo atiende {staff}. Tu factura va en camino a tu correo."
LONG_NAME = "Demasiado larga"
# At the 4,096-character cap as saved; past it once {customer} (13 digits) is filled in.
LONG_TEXT = ("Gracias por escribirnos. " * 200)[:4096 - len("{customer}")] + "{customer}"
SCREENSHOTS = ("desk-queue-start", "desk-claimed-b", "desk-note-a", "desk-saved-refused", "desk-history",
               "desk-search", "desk-queue-overdue",
               "desk-takeover-b", "desk-takeover-a", "desk-saved-picked", "desk-saved-sent")


def admin_post(stack, path, body):
    """POST with the admin token (harness.STAFF_TOKEN): (status, the JSON answer or text)."""
    return harness.bearer_call(stack.url(path), "POST", harness.STAFF_TOKEN, body)


def fill(text, customer, escalation, staff):
    return text.replace("{customer}", customer).replace("{escalation}", str(escalation)).replace("{staff}", staff)


def staff_replies(stack, wamid):
    """The staff_reply actions stored for a message."""
    return stack.scalar("SELECT count(*) FROM v_actions a JOIN v_messages m ON m.message_id = a.message_id"
                        " WHERE m.provider_message_id = ? AND a.action = 'staff_reply'", wamid)


def staff_desk_in_chromium(chromium, node):
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, extra_config=CONFIG)
    try:
        stack.start_daemon()
        tokens = {name: stack.add_staff(name) for name in ("ana", "bo")}
        check("dispatchctl staff add prints a token for each account", all(tokens.values()), tokens)
        earlier = escalate(stack, *EARLIER)
        dismissed = stack.dispatchctl("queue", "dismiss", str(earlier), "--as", "ana", "--note", EARLIER_NOTE)
        check("the customer's earlier case is dismissed", dismissed.returncode == 0, dismissed.stderr)
        ids = {case: escalate(stack, *case) for case in (HANDOVER, REPLY, OVERDUE)}
        reasons = [escalation_of(stack, case[0])[1] for case in (HANDOVER, REPLY, OVERDUE)]
        check("the cases escalate as contract_failed, contract_failed, policy_violation",
              reasons == ["contract_failed", "contract_failed", "policy_violation"], reasons)
        saved = {name: admin_post(stack, "/api/replies", {"name": name, "text": text})
                 for name, text in ((GOOD_NAME, GOOD_TEXT), (LONG_NAME, LONG_TEXT))}
        check("the admin token saves both replies", all(s == 200 and a.get("ok") for s, a in saved.values()), saved)
        good = fill(GOOD_TEXT, REPLY[1], ids[REPLY], "bo")
        long_filled = fill(LONG_TEXT, REPLY[1], ids[REPLY], "bo")
        check("the long saved reply is at the cap as saved and past it once filled",
              len(LONG_TEXT) == 4096 < len(long_filled), (len(LONG_TEXT), len(long_filled)))

        def answer(command):
            if command == "sent":  # what has gone out so far, and the reply case's staff replies
                return {"sent": [[to, text] for to, text, _ in stack.graph_messages()],
                        "staff_replies": staff_replies(stack, REPLY[0])}
            raise ValueError(f"unknown command {command}")

        shots = os.path.join(WORK, "screenshots", "desk")
        shutil.rmtree(shots, ignore_errors=True)
        env = dict(os.environ, STAFF_URL=stack.url(""), STAFF_A="ana", STAFF_A_TOKEN=tokens["ana"], STAFF_B="bo",
                   STAFF_B_TOKEN=tokens["bo"], HANDOVER_ID=str(ids[HANDOVER]), REPLY_ID=str(ids[REPLY]),
                   OVERDUE_ID=str(ids[OVERDUE]), NOTE_TEXT=NOTE_TEXT, GOOD_NAME=GOOD_NAME, GOOD_FILLED=good,
                   LONG_NAME=LONG_NAME, LONG_FILLED_LENGTH=str(len(long_filled)), SCREENSHOTS=shots,
                   EARLIER_ID=str(earlier), EARLIER_TEXT=EARLIER[2], EARLIER_NOTE=EARLIER_NOTE,
                   CUSTOMER_TYPED=CUSTOMER_TYPED, REPLY_TEXT=REPLY[2],
                   CHROMIUM=chromium)
        code = support.run_node([node, os.path.join(WORK, "desk_test.mjs")], WORK, env, answer)
        check("the browser checks (desk_test.mjs)", code == 0, f"exit {code}")

        # The saved reply, filled for the case, is the one message that went out.
        stack.wait_until(lambda: stack.graph_messages(), timeout=30, what="a message at the fake Graph API")
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions"
                                              " WHERE status IN ('approved', 'sending')") == 0,
                         timeout=30, what="the outbox emptied")
        sent = [(to, text) for to, text, _ in stack.graph_messages()]
        check("the fake Graph API received exactly the filled saved reply, to the case's customer",
              sent == [(REPLY[1], good)], sent)
        check("the internal note never reached the Graph API", not any(NOTE_TEXT in text for _, text in sent), sent)
        check("one staff reply stored for the reply case (the refused one none)", staff_replies(stack, REPLY[0]) == 1)
        check("the note is stored as a note of the hand-over case, by bo",
              stack.query("SELECT escalation_id, author, text FROM v_notes") == [(ids[HANDOVER], "bo", NOTE_TEXT)],
              stack.query("SELECT escalation_id, author, text FROM v_notes"))

        # The hand-over as the audit trail has it, and the chain intact.
        takeovers = [(actor, detail if isinstance(detail, dict) else json.loads(detail)) for actor, detail in stack.query(
            "SELECT actor, detail FROM v_audit WHERE event = 'staff_takeover' ORDER BY audit_id")]
        check("v_audit has one staff_takeover by bo from ana, rule idle",
              [(actor, d.get("escalation"), d.get("from"), d.get("to"), d.get("rule")) for actor, d in takeovers]
              == [("bo", ids[HANDOVER], "ana", "bo", "idle")], takeovers)
        now = {case[0]: escalation_of(stack, case[0])[2:] for case in (HANDOVER, REPLY, OVERDUE)}
        check("the hand-over case is claimed by bo, the reply case resolved by bo, the overdue one still open",
              [now[HANDOVER[0]], now[REPLY[0]], now[OVERDUE[0]][0]] == [("claimed", "bo"), ("resolved", "bo"), "open"],
              now)
        breached = stack.query("SELECT e.escalation_id FROM v_escalations e WHERE e.breach_noticed_at IS NOT NULL")
        check("only the policy_violation case breached its target", breached == [(ids[OVERDUE],)], breached)
        verify = stack.audit_verify()
        check("dispatchctl audit verify passes after the hand-over", verify.returncode == 0,
              verify.stdout + verify.stderr)
        support.check_screenshots(shots, SCREENSHOTS)
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(support.main(BUILD, staff_desk_in_chromium))
