#!/usr/bin/env python3
"""End to end: the real dispatchd polling the fake Gmail API (tests/fakes/fake_gmail.py) and its
OAuth2 token endpoint, with fake_model and fake_graph, on 127.0.0.1.

  gmail_test.py BUILD_DIR SOURCE_DIR

What it shows: new mail answered once, in its thread, with headers a standard parser
reads; mail from before the first start left alone; auto-replies, lists, bounces and our own mail
ignored with the reason; an ISO-8859-1 message decoded; an access token expiring mid-run refreshed;
exactly once across a restart; a stale history id -> a full sync without duplicates or old mail;
invalid_grant pauses Gmail (readyz, metrics, one log line) while WhatsApp keeps working, and a
reload with a new refresh token resumes it; a send cut by SIGKILL is looked up, not resent
blindly (found -> sent once; not found on two searches -> sent once).
"""

import email
import email.policy
import json
import os
import signal
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from gmail_harness import ADDRESS, CLIENT_SECRET, REFRESH, mail  # noqa: E402
import gmail_harness  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
check = harness.check


def parsed(raw_text):
    return email.message_from_string(raw_text, policy=email.policy.default)


def main_flow():
    old = {}

    def before_start(gmail):
        old.update(gmail.deliver(mail("viejo@cliente.example", "Antiguo", "¿Tienen envío a Monterrey? (de antes)")))
        time.sleep(1.1)  # the first start is recorded to the second: clearly after this mail

    with gmail_harness.started(BUILD, SOURCE, before_start, scenario=SCENARIO) as (gmail, stack, daemon):
        question = mail("ana@cliente.example", "Envío a Monterrey", "Hola,\n¿Tienen envío a Monterrey?\n\nGracias",
                        message_id="pregunta-1")
        asked = gmail.deliver(question)
        check("new mail: answered", stack.wait_outcome(asked["id"]) == "replied", stack.outcome(asked["id"]))
        stack.wait_until(lambda: len(stack.replies_in(asked["threadId"])) == 1, what="the reply in the fake")
        reply = parsed(stack.replies_in(asked["threadId"])[0]["raw"])
        check("reply: in the original's thread, to the sender", reply["To"].addresses[0].addr_spec ==
              "ana@cliente.example", str(reply["To"]))
        check("reply: From is our address", reply["From"].addresses[0].addr_spec == ADDRESS, str(reply["From"]))
        check("reply: Re: subject", str(reply["Subject"]) == "Re: Envío a Monterrey", str(reply["Subject"]))
        check("reply: In-Reply-To and References name the original",
              str(reply["In-Reply-To"]).strip() == "<pregunta-1@mail.example>" and
              "<pregunta-1@mail.example>" in str(reply["References"]), (reply["In-Reply-To"], reply["References"]))
        check("reply: our own Message-ID", str(reply["Message-ID"]).startswith("<dispatchd."), reply["Message-ID"])
        check("reply: Auto-Submitted: auto-replied", str(reply["Auto-Submitted"]) == "auto-replied",
              reply["Auto-Submitted"])
        check("reply: the model's text as the body", "Monterrey" in reply.get_body(("plain",)).get_content() or
              "México" in reply.get_body(("plain",)).get_content(), reply.get_body(("plain",)).get_content())
        stack.wait_until(lambda: any(m["id"] == asked["id"] for m in gmail.state()["modified"]),
                         what="the handled label on the original")

        ignored = {
            "auto_reply": mail("ana2@cliente.example", "Fuera de la oficina", "Estoy de vacaciones",
                               ["Auto-Submitted: auto-replied"]),
            "list": mail("boletin@lista.example", "Boletín", "Novedades",
                         ["List-Id: <novedades.lista.example>", "List-Unsubscribe: <mailto:baja@lista.example>"]),
            "bounce": mail("MAILER-DAEMON@mx.example", "Undelivered Mail Returned to Sender", "No se entregó",
                           name="Mail Delivery System"),
            "own": mail(ADDRESS, "Nota interna", "Recordatorio", name="Soporte"),
            "no_reply": mail("no-reply@banco.example", "Estado de cuenta", "Su estado de cuenta", name="Banco"),
        }
        ids = {kind: gmail.deliver(raw)["id"] for kind, raw in ignored.items()}
        latin1 = gmail.deliver(mail("jose@cliente.example", "Pedido", "¿Tienen envío a Mérida? Gracias, José",
                                    charset="iso-8859-1"))
        for kind, gmail_id in ids.items():
            outcome = stack.wait_outcome(gmail_id)
            why = stack.scalar("SELECT message_type FROM inbox WHERE provider_message_id = ?", gmail_id)
            check(f"loop prevention: {kind} recorded with its reason and ignored", outcome == "ignored" and why == kind,
                  (outcome, why))
        check("ISO-8859-1 mail: answered", stack.wait_outcome(latin1["id"]) == "replied")
        text = stack.scalar("SELECT text FROM inbox WHERE provider_message_id = ?", latin1["id"])
        check("ISO-8859-1 mail: decoded to UTF-8 for the model", "¿Tienen envío a Mérida? Gracias, José" in text, text)
        check("mail from before the first start: never answered",
              stack.scalar("SELECT count(*) FROM inbox WHERE provider_message_id = ?", old["id"]) == 0)
        check("ignored mail: nothing sent to it", all(not stack.replies_in(gmail.state()["messages"][0]["threadId"])
                                                     or True for _ in ids) and len(gmail.sent()) == 2,
              len(gmail.sent()))

        # WhatsApp works alongside.
        stack.post_webhook(harness.text_webhook("wamid.G1", "5215500009001", "¿Tienen envío a Monterrey?"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.G1'"
                                              " AND outcome = 'replied'") == 1, what="the WhatsApp reply")
        check("whatsapp: answered alongside Gmail", True)

        # The access token expires mid-run: refreshed once, the next mail answered.
        tokens_before = gmail.state()["token_requests"]
        gmail.control("expire_tokens")
        after_expiry = gmail.deliver(mail("luis@cliente.example", "Horario", "¿a qué hora abren?"))
        check("token expired mid-run: the next mail answered", stack.wait_outcome(after_expiry["id"]) == "replied")
        check("token expired mid-run: refreshed", gmail.state()["token_requests"] > tokens_before)

        # Exactly once across a restart.
        stack.daemon.stop(signal.SIGTERM)
        during = gmail.deliver(mail("marta@cliente.example", "Envío", "¿Tienen envío a Puebla?"))
        stack.start_daemon()
        check("restart: mail that came while stopped is answered", stack.wait_outcome(during["id"]) == "replied")
        time.sleep(2.5)  # a few polls after the restart
        per_thread = {}
        for s in gmail.sent():
            per_thread[s["threadId"]] = per_thread.get(s["threadId"], 0) + 1
        check("restart: every thread got exactly one reply", all(n == 1 for n in per_thread.values()) and
              len(per_thread) == 4, per_thread)
        check("restart: each message stored once",
              stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'gmail'") == 9)

        # The history cursor goes stale while stopped: a full sync, no duplicates, no old mail.
        stack.daemon.stop(signal.SIGTERM)
        missed = [gmail.deliver(mail(f"cliente{i}@cliente.example", "Pregunta", "¿Tienen envío a Oaxaca?"))
                  for i in range(2)]
        gmail.control("forget_history", {"before": "all"})
        daemon = stack.start_daemon()
        for m in missed:
            check("stale history id: missed mail answered after a full sync", stack.wait_outcome(m["id"]) == "replied")
        daemon.wait_for_line("too old")
        time.sleep(2)
        check("stale history id: nothing stored twice, old mail still left alone",
              stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'gmail'") == 11 and
              stack.scalar("SELECT count(*) FROM inbox WHERE provider_message_id = ?", old["id"]) == 0,
              stack.query("SELECT provider_message_id, message_type, received_at FROM inbox WHERE channel = 'gmail'"))
        check("stale history id: one reply per missed thread",
              all(len(stack.replies_in(m["threadId"])) == 1 for m in missed))
        status, metrics = stack.get("/metrics")
        check("metrics: Gmail polls, full sync and lag", 'dispatchd_poll_full_syncs_total{channel="gmail"} 1' in metrics
              and 'dispatchd_poll_lag_seconds{channel="gmail"}' in metrics, metrics[-600:])
        verify = stack.audit_verify()
        check("audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)


def invalid_grant_flow():
    with gmail_harness.started(BUILD, SOURCE, scenario=SCENARIO) as (gmail, stack, daemon):
        gmail.control("revoke")
        waiting = gmail.deliver(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        stack.wait_until(lambda: stack.get("/readyz")[0] == 503, what="readyz 503")
        status, body = stack.get("/readyz")
        check("invalid_grant: /readyz says gmail is paused and why", status == 503 and "gmail" in body and
              "invalid_grant" in body, body)
        check("invalid_grant: /metrics shows the pause",
              'dispatchd_channel_paused{channel="gmail"} 1' in stack.get("/metrics")[1])
        time.sleep(2.5)
        paused_lines = [line for line in daemon.lines if "gmail: paused" in line]
        check("invalid_grant: said once in the log", len(paused_lines) == 1, paused_lines)
        log = "\n".join(daemon.lines)
        check("secrets never in the log", all(s not in log for s in (CLIENT_SECRET, REFRESH, "ya29.")))
        check("invalid_grant: still running, nothing answered", daemon.proc.poll() is None and
              stack.outcome(waiting["id"]) is None)
        stack.post_webhook(harness.text_webhook("wamid.P1", "5215500009002", "¿Tienen envío a Monterrey?"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE provider_message_id = 'wamid.P1'"
                                              " AND outcome = 'replied'") == 1, what="the WhatsApp reply")
        check("invalid_grant: WhatsApp keeps working", True)
        gmail.control("refresh_token", {"value": "1//new-refresh"})
        stack.write_credential("GMAIL_REFRESH_TOKEN", "1//new-refresh")
        daemon.proc.send_signal(signal.SIGHUP)
        check("reload with a new refresh token: the waiting mail answered",
              stack.wait_outcome(waiting["id"]) == "replied")
        check("reload: ready again", stack.get("/readyz")[0] == 200)
        check("no secret in the database", all(
            stack.scalar("SELECT count(*) FROM audit WHERE detail LIKE ?", f"%{s}%") == 0
            for s in (CLIENT_SECRET, REFRESH, "1//new-refresh")))


def poll_errors_flow():
    # An idle mailbox costs one history.list per poll and no write; a rate limit (429, or 403
    # userRateLimitExceeded) waits its Retry-After; 5xx is retried; tokens that expire by
    # their expires_in are refreshed as the run goes.
    with gmail_harness.started(BUILD, SOURCE, token_lifetime=2, scenario=SCENARIO) as (gmail, stack, daemon):
        time.sleep(1.5)
        cursor_before = stack.query("SELECT cursor, updated_at FROM poll_cursors")
        requests_before = len(gmail.state()["requests"])
        tokens_before = gmail.state()["token_requests"]
        time.sleep(4)
        idle = gmail.state()["requests"][requests_before:]
        api_calls = [r for r in idle if r["path"].startswith("/gmail/")]
        check("idle mailbox: only history.list, about one per poll interval",
              all(r["path"].endswith("/history") for r in api_calls) and 2 <= len(api_calls) <= 6,
              [(r["method"], r["path"]) for r in api_calls])
        check("idle mailbox: no database write (the cursor row untouched)",
              stack.query("SELECT cursor, updated_at FROM poll_cursors") == cursor_before)
        check("tokens expiring by expires_in are refreshed mid-run", gmail.state()["token_requests"] > tokens_before,
              gmail.state()["token_requests"])

        for status, reason in ((429, None), (403, "userRateLimitExceeded")):
            script = {"path": "/history", "status": status, "retry_after": 3, "count": 1}
            if reason:
                script["reason"] = reason
            gmail.control("script", script)
            started = time.time()
            m = gmail.deliver(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
            outcome = stack.wait_outcome(m["id"])
            waited = time.time() - started
            check(f"history.list {status} {reason or ''}: answered after waiting the Retry-After",
                  outcome == "replied" and waited >= 2.5, (outcome, round(waited, 2)))
        gmail.control("script", {"path": "/history", "status": 503, "count": 2})
        m = gmail.deliver(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        check("history.list 503 twice: retried, then answered", stack.wait_outcome(m["id"]) == "replied")
        metrics = stack.get("/metrics")[1]
        failed = [line for line in metrics.splitlines() if line.startswith('dispatchd_polls_total{channel="gmail",result="failed"}')]
        check("metrics: the failed polls counted", failed and int(failed[0].split()[-1]) >= 4, failed)
        garbage = bytes(range(256)) * 4
        broken = gmail.deliver(garbage)
        check("undecodable mail: stored raw and escalated", stack.wait_outcome(broken["id"]) == "escalated" and
              stack.scalar("SELECT count(*) FROM v_escalations e JOIN inbox m ON m.id = e.message_id"
                           " WHERE m.provider_message_id = ? AND e.reason = 'undecodable'", broken["id"]) == 1 and
              stack.raw_payload(broken["id"]) == garbage)
        gmail.control("script", {"path": "/messages/", "method": "GET", "status": 400, "count": 1})
        refused = gmail.deliver(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        check("a message Gmail refuses to give: a stand-in escalated, the polls go on",
              stack.wait_outcome(refused["id"]) == "escalated" and
              stack.scalar("SELECT message_type FROM inbox WHERE provider_message_id = ?", refused["id"]) == "undecodable")
        gmail.control("script", {"path": "/messages/send", "status": 429, "retry_after": 2, "count": 1})
        m = gmail.deliver(mail("beto@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        check("messages.send 429: sent after the Retry-After, once", stack.wait_outcome(m["id"]) == "replied" and
              len(stack.replies_in(m["threadId"])) == 1)


def burst_flow():
    # 120 mails while dispatchd is stopped: fetched and stored in batches of at most 50
    # (bounded memory), the cursor moving only after the last; each answered once.
    with gmail_harness.started(BUILD, SOURCE, scenario=SCENARIO) as (gmail, stack, daemon):
        daemon.stop(signal.SIGTERM)
        delivered = [gmail.deliver(mail(f"c{i}@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
                     for i in range(120)]
        daemon = stack.start_daemon()
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'replied'") == 120,
                         timeout=90, what="120 replies")
        batches = [line for line in daemon.lines if "new message(s)" in line]
        check("burst: 120 mails stored in batches of at most 50",
              len(batches) >= 3 and all(int(line.split("gmail: ")[1].split()[0]) <= 50 for line in batches), batches)
        check("burst: each stored once and answered once",
              stack.scalar("SELECT count(*) FROM inbox WHERE channel = 'gmail'") == 120 and
              all(len(stack.replies_in(m["threadId"])) == 1 for m in delivered))


def kill_flow(found):
    # A send whose answer is lost to SIGKILL. found: the fake stored it before the kill (the
    # lookup finds it: sent, never again); else it never reached the mailbox (two searches
    # find nothing: sent again, once).
    what = "found" if found else "not found"
    with gmail_harness.started(BUILD, SOURCE, scenario=SCENARIO) as (gmail, stack, daemon):
        gmail.control("script", {"path": "/messages/send", "status": 500 if not found else None, "delay_ms": 20000,
                                 "commit_before_delay": found, "count": 1})
        m = gmail.deliver(mail("ana@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sending'") == 1,
                         what="the send in flight")
        stack.wait_until(lambda: any(r["path"].endswith("/messages/send") for r in gmail.state()["requests"])
                         or len(gmail.sent()) == 1 or not found, what="the send at the fake")
        time.sleep(0.5)
        daemon.proc.kill()
        daemon.proc.wait()
        check(f"SIGKILL mid-send ({what}): the action was left 'sending'",
              stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sending'") == 1)
        daemon = stack.start_daemon()
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status IN ('sent', 'unknown')") == 1,
                         timeout=40, what="the lookup's outcome")
        check(f"SIGKILL mid-send ({what}): looked up, then sent",
              stack.scalar("SELECT status FROM v_actions") == "sent" and stack.outcome(m["id"]) == "replied",
              stack.query("SELECT status FROM v_actions"))
        check(f"SIGKILL mid-send ({what}): exactly one reply in the mailbox", len(stack.replies_in(m["threadId"])) == 1,
              len(stack.replies_in(m["threadId"])))
        searches = [r for r in gmail.state()["requests"] if "rfc822msgid" in urllib.parse.unquote(r["query"])]
        check(f"SIGKILL mid-send ({what}): searched by our Message-ID {'once' if found else 'twice'}",
              len(searches) == (1 if found else 2), searches)
        check(f"SIGKILL mid-send ({what}): no delivery_unknown escalation",
              stack.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'") == 0)



sys.exit(harness.run_flows((main_flow, poll_errors_flow, burst_flow, invalid_grant_flow, lambda: kill_flow(True),
                            lambda: kill_flow(False))))
