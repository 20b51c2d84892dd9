#!/usr/bin/env python3
"""End-to-end: the real dispatchd binary with a temp config against the fake model and the
fake Graph API on 127.0.0.1. Each check prints pass/FAIL; exit 1 when any failed.

Usage: e2e_test.py BUILD_DIR SOURCE_DIR
"""
import glob
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
check = harness.check


def count_messages(stack):
    return stack.scalar("SELECT count(*) FROM v_messages")


def fixture(name):
    """A webhook body of tests/data/whatsapp/ as Meta sends it, and its one message's wamid and sender."""
    with open(os.path.join(SOURCE, "tests", "data", "whatsapp", name), "rb") as f:
        raw = f.read()
    message = json.loads(raw)["entry"][0]["changes"][0]["value"]["messages"][0]
    return raw, message["id"], message["from"]


def message_of(stack, wamid):
    """(message_id, outcome, message_type) of a stored message, or None."""
    rows = stack.query("SELECT message_id, outcome, message_type FROM v_messages WHERE provider_message_id = ?", wamid)
    return rows[0] if rows else None


def main_flow():
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        status, body = stack.get("/healthz")
        check("healthz", status == 200, body)
        status, body = stack.get("/readyz")
        check("readyz", status == 200, body)
        status, body = stack.get(f"/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token={harness.VERIFY_TOKEN}"
                                 "&hub.challenge=1158201444")
        check("verification handshake echoes the challenge", status == 200 and body == "1158201444", (status, body))
        status, _ = stack.get("/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1")
        check("a wrong verify token is 403", status == 403, status)

        # A signed text message is answered at the fake Graph API, to the right number.
        sender = "5215512345678"
        webhook = harness.text_webhook("wamid.E2E1", sender, "Hola, ¿a qué hora abren mañana?")
        status, _ = stack.post_webhook(webhook)
        check("signed webhook: 200", status == 200, status)
        stack.wait_until(lambda: any(to == sender for to, _, _ in stack.graph_messages()), what="the reply")
        replies = [m for m in stack.graph_messages() if m[0] == sender]
        check("the reply went to the sender, once", len(replies) == 1, replies)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'") == 1,
                         what="the outbox row marked sent")
        check("v_messages: replied", stack.scalar("SELECT outcome FROM v_messages WHERE provider_message_id = ?",
                                                  "wamid.E2E1") == "replied")

        # Redelivery is stored once and answered once.
        status, _ = stack.post_webhook(webhook)
        check("redelivered webhook: 200", status == 200, status)
        time.sleep(0.5)
        check("redelivered webhook: one message, one reply",
              count_messages(stack) == 1 and len([m for m in stack.graph_messages() if m[0] == sender]) == 1)

        # Bad or missing signatures: 401 and nothing stored.
        before = count_messages(stack)
        other = harness.text_webhook("wamid.E2E2", "5215599999999", "hola")
        status, _ = stack.post_webhook(other, signature="sha256=" + "0" * 64)
        check("bad signature: 401", status == 401, status)
        status, _ = stack.post_webhook(other, signature=None)
        check("missing signature: 401", status == 401, status)
        status, _ = stack.post_webhook(other, signature=harness.sign(other, "another-secret"))
        check("signature with another secret: 401", status == 401, status)
        check("nothing stored after refused webhooks", count_messages(stack) == before)
        status, _ = stack.post_webhook(b"{not json", signature="sign")
        check("signed garbage: 400", status == 400, status)

        # Every fixture type parses; each inbound message is stored once.
        fixtures = sorted(glob.glob(os.path.join(SOURCE, "tests", "data", "whatsapp", "*.json")))
        codes = {}
        for path in fixtures:
            with open(path, "rb") as f:
                raw = f.read()
            codes[os.path.basename(path)] = stack.post_webhook(raw)[0]
        check("every fixture answered 200", all(c == 200 for c in codes.values()), codes)
        stored_ids = {r[0] for r in stack.query("SELECT provider_message_id FROM v_messages")}
        expected_ids = set()
        for path in fixtures:
            if "other_phone_number" in path:
                continue
            with open(path) as f:
                payload = json.load(f)
            for entry in payload["entry"]:
                for change in entry["changes"]:
                    for m in change["value"].get("messages", []):
                        expected_ids.add(m["id"])
        check("every fixture's messages stored", expected_ids <= stored_ids, expected_ids - stored_ids)

        # Default handling per type: media and unsupported escalate as undecodable, stickers
        # and reactions are ignored, and none of them reaches the model.
        decided_by_type = "SELECT count(*) FROM v_messages WHERE message_type IN ({}) AND outcome = '{}'"
        media = "'image','video','audio','document','unsupported','contacts'"
        stack.wait_until(lambda: stack.scalar(decided_by_type.format(media, "escalated")) == 6 and
                         stack.scalar(decided_by_type.format("'sticker','reaction'", "ignored")) == 2,
                         what="media escalated, stickers and reactions ignored")
        check("defaults: media escalated as undecodable naming the type",
              {r[0] for r in stack.query("SELECT " + stack.json_text("e.detail", "type") + " FROM v_escalations e"
                                         " JOIN v_messages m USING (message_id) WHERE e.reason = 'undecodable'")} ==
              {"image", "video", "audio", "document", "unsupported", "contacts"},
              stack.query("SELECT reason, detail FROM v_escalations"))
        check("defaults: no model attempt for escalated or ignored types",
              stack.scalar("SELECT count(*) FROM v_attempts JOIN v_messages USING (message_id)"
                           f" WHERE message_type IN ({media},'sticker','reaction')") == 0)

        # A failed status event for our sent message updates the outbox and escalates.
        wamid = stack.scalar("SELECT provider_message_id FROM v_actions WHERE status = 'sent' LIMIT 1")
        status, _ = stack.post_webhook(harness.status_webhook(wamid, sender, "failed", 131047))
        check("failed status: 200", status == 200, status)
        check("failed status updates the outbox",
              stack.scalar("SELECT status FROM v_actions WHERE provider_message_id = ?", wamid) == "failed")
        check("failed status opens send_failed",
              stack.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'send_failed'") >= 1)

        # Metrics.
        status, text = stack.get("/metrics")
        check("metrics", status == 200 and "dispatchd_messages_received_total{channel=\"whatsapp\"}" in text, text[:200])
        # The three forged webhooks, the signed garbage and the redelivery above.
        for line in ('dispatchd_webhooks_total{channel="whatsapp",result="bad_signature"} 3',
                     'dispatchd_webhooks_total{channel="whatsapp",result="malformed"} 1',
                     'dispatchd_redeliveries_total{channel="whatsapp"} 1'):
            check(f"metrics: {line}", line + "\n" in text, [m for m in text.splitlines() if "webhooks" in m])
        # The event loop's steps are timed: every request and message above ran some.
        steps = [m for m in text.splitlines() if m.startswith("dispatchd_loop_handler")]
        counted = [m for m in steps if m.startswith("dispatchd_loop_handler_seconds_count ")]
        check("metrics: the loop's steps are timed", counted and int(counted[0].split()[1]) > 20, steps)
        check("metrics: the longest step", any(m.startswith("dispatchd_loop_handler_max_seconds 0.") for m in steps),
              steps)
        # Every acknowledged webhook and every send waited for its round's sync.
        waits = [m for m in text.splitlines() if m.startswith("dispatchd_store_durable_wait_seconds_count ")]
        check("metrics: the durable waits are timed", waits and int(waits[0].split()[1]) >= 3, waits)
        # ... and on SQLite each of those syncs of the WAL is timed (PostgreSQL syncs its own log).
        syncs = [m for m in text.splitlines() if m.startswith("dispatchd_store_sync_seconds_count ")]
        if stack.pg is None:
            check("metrics: the WAL's syncs are timed", syncs and int(syncs[0].split()[1]) >= 1, syncs)
        else:
            check("metrics: no WAL syncs on PostgreSQL", not syncs, syncs)

        # The staff API behind a named account; the admin token manages accounts and reads no queue.
        status, _ = stack.get("/api/escalations")
        check("staff API needs a credential", status == 401, status)
        status, _ = stack.get("/api/escalations", {"Authorization": f"Bearer {harness.STAFF_TOKEN}"})
        check("the admin token does not read the queue", status == 403, status)
        token = stack.add_staff("ana")
        status, body = stack.get("/api/escalations?status=open", {"Authorization": f"Bearer {token}"})
        check("staff API lists the queue", status == 200 and isinstance(json.loads(body), list), body[:200])
    finally:
        stack.close()


def message_types_flow():
    # connectors.whatsapp.message_types: an image escalates, a location gets a fixed reply,
    # a reaction is ignored; none of them is sent to the model. A text still is.
    fixed = "¡Gracias! Recibimos tu ubicación; una persona te confirma la entrega."
    types = {"image": "escalate", "location": {"reply": fixed}, "reaction": "ignore", "text": "model"}
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO,
                          extra_config={"connectors": {"whatsapp": {"message_types": types}}})
    try:
        stack.start_daemon()
        image, image_id, sender = fixture("image.json")
        location, location_id, _ = fixture("location.json")
        reaction, reaction_id, _ = fixture("reaction.json")
        for body in (image, location, reaction):
            stack.post_webhook(body)
        stack.post_webhook(harness.text_webhook("wamid.T1", "5215500001111", "Hola, ¿tienen envío a Monterrey?"))
        stack.wait_until(lambda: all(message_of(stack, w) and message_of(stack, w)[1] != "pending"
                                     for w in (image_id, location_id, reaction_id, "wamid.T1")),
                         what="every message decided")
        stack.wait_until(lambda: len(stack.graph_messages()) >= 2, what="two sends at the fake Graph API")
        time.sleep(0.3)  # nothing else may arrive

        image_msg, outcome, kind = message_of(stack, image_id)
        check("image with escalate: escalated", outcome == "escalated" and kind == "image", (outcome, kind))
        detail = stack.query("SELECT reason, " + stack.json_text("detail", "type") + " FROM v_escalations WHERE message_id = ?",
                             image_msg)
        check("image with escalate: one undecodable escalation naming the type", detail == [("undecodable", "image")],
              detail)
        attempts = dict(stack.query("SELECT m.provider_message_id, count(a.attempt_id) FROM v_messages m"
                                    " LEFT JOIN v_attempts a USING (message_id) GROUP BY m.message_id, m.provider_message_id"))
        check("no model call for the image, the location or the reaction",
              attempts[image_id] == 0 and attempts[location_id] == 0 and attempts[reaction_id] == 0, attempts)
        check("the text still goes to the model", attempts["wamid.T1"] == 1, attempts)

        sent = stack.graph_messages()
        check("location with a fixed reply: that text at the Graph API, to the sender, once",
              [(to, text) for to, text, _ in sent if to == sender] == [(sender, fixed)], sent)
        stack.wait_until(lambda: message_of(stack, location_id)[1] == "replied", what="the location replied")
        check("location: recorded as the fixed_reply action, sent",
              stack.query("SELECT a.action, a.status, a.body FROM v_actions a JOIN v_messages m USING (message_id)"
                          " WHERE m.provider_message_id = ?", location_id) == [("fixed_reply", "sent", fixed)])

        reaction_msg, outcome, kind = message_of(stack, reaction_id)
        check("reaction with ignore: outcome ignored, not pending", outcome == "ignored" and kind == "reaction",
              (outcome, kind))
        check("reaction with ignore: nothing sent, nothing escalated",
              stack.scalar("SELECT count(*) FROM v_actions WHERE message_id = ?", reaction_msg) == 0 and
              stack.scalar("SELECT count(*) FROM v_escalations WHERE message_id = ?", reaction_msg) == 0)
        # One read mark each, when the agent started on it: typing only where the model answers.
        stack.wait_until(lambda: len(stack.graph_reads()) >= 4, what="four read marks")
        time.sleep(0.3)
        reads = sorted(stack.graph_reads())
        check("one read mark per message, the typing indicator only for the one the model answers",
              reads == sorted([(image_id, None), (location_id, None), (reaction_id, None), ("wamid.T1", "text")]),
              reads)
        check("every decision is in the audit trail",
              stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'escalation' AND message_id = ?", image_msg) == 1
              and stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'done' AND message_id = ?"
                               " AND " + stack.json_text("detail", "outcome") + " = 'ignored'", reaction_msg) == 1)
    finally:
        stack.close()


def reload_flow():
    # SIGHUP against the real binary: a broken catalog is refused and the old one keeps
    # serving; a fixed one is loaded, logged and audited.
    work = tempfile.TemporaryDirectory(prefix="dispatchd-e2e-reload-")
    catalog = os.path.join(work.name, "catalog.json")
    shutil.copy(os.path.join(SOURCE, "catalog", "examples", "support.es.json"), catalog)
    with open(catalog, encoding="utf-8") as f:
        good = json.load(f)
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, workdir=work.name, extra_config={"catalog": catalog})
    try:
        daemon = stack.start_daemon()

        def answered(wamid, sender):
            stack.post_webhook(harness.text_webhook(wamid, sender, "¿Tienen envío a Monterrey?"))
            stack.wait_until(lambda: (message_of(stack, wamid) or (0, "pending"))[1] != "pending",
                             what=f"the outcome of {wamid}")
            if message_of(stack, wamid)[1] != "replied":
                return False
            # The fake prints its record before dispatchd stores the send, but the harness
            # reads that output on a thread of its own, which may lag behind.
            stack.wait_until(lambda: any(to == sender for to, _, _ in stack.graph_messages()),
                             what=f"the fake's record of the reply to {sender}")
            return True

        check("reload: answered before", answered("wamid.R1", "5215500002001"))
        broken_catalog = json.loads(json.dumps(good))
        broken_catalog["actions"][0]["kind"] = "send"  # JSON, but not a catalog
        for n, (what, text, why) in enumerate((("invalid JSON", '{"name": "support.es", "actions": [', "not valid JSON"),
                                               ("an invalid catalog", json.dumps(broken_catalog), "/actions/0/kind"))):
            with open(catalog, "w", encoding="utf-8") as f:
                f.write(text)
            before = len(daemon.lines)
            daemon.proc.send_signal(signal.SIGHUP)
            stack.wait_until(lambda: sum("reload refused" in line for line in daemon.lines) == n + 1,
                             what="the refusal in the log")
            refusal = [line for line in daemon.lines[before:] if "reload refused" in line]
            check(f"reload with {what}: refused and logged with the reason",
                  len(refusal) == 1 and catalog in refusal[0] and why in refusal[0], refusal)
            check(f"reload with {what}: still serving", daemon.proc.poll() is None and stack.get("/healthz")[0] == 200)
            check(f"reload with {what}: a message is still answered with the old catalog",
                  answered(f"wamid.R{n + 2}", f"521550000200{n + 2}"))
        check("refused reloads leave no config_reload event",
              stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'config_reload'") == 0)

        fixed = dict(good, name="support.es \"v2\"",
                     description=good["description"] + " Responde siempre con amabilidad.")
        with open(catalog, "w", encoding="utf-8") as f:
            json.dump(fixed, f, ensure_ascii=False)
        daemon.proc.send_signal(signal.SIGHUP)
        line = daemon.wait_for_line("reloaded the catalog")
        check("reload with a fixed catalog: logged with its name", "support.es \"v2\"" in line, line)
        events = stack.query("SELECT actor, " + stack.json_text("detail", "catalog") + " FROM v_audit WHERE event = 'config_reload'")
        check("reload: one config_reload audit event naming the catalog", events == [("dispatchd", "support.es \"v2\"")],
              events)
        check("reload: answered after", answered("wamid.R9", "5215500002009"))
    finally:
        stack.close()
        work.cleanup()


def window_closed_flow():
    # Graph refuses the first send with 131047: a window_closed escalation, nothing resent.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, graph_script="131047")
    try:
        stack.start_daemon()
        stack.post_webhook(harness.text_webhook("wamid.W1", "5215512340000", "Hola"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'window_closed'") == 1,
                         what="the window_closed escalation")
        detail = stack.scalar("SELECT detail FROM v_escalations WHERE reason = 'window_closed'")
        check("131047 -> window_closed escalation naming the code", "131047" in detail, detail)
        time.sleep(0.5)
        check("131047: sent once, never retried", len(stack.graph_messages(answered=400)) == 1, stack.graph_messages(400))
    finally:
        stack.close()


def provider_errors_flow():
    # The model answers 429 (Retry-After: 1) and then 503 before it answers: retried inside
    # the provider stack, never counted as attempts, and the customer gets one reply.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        sender = "5215500004000"
        started = time.time()
        stack.post_webhook(harness.text_webhook("wamid.P1", sender, "¿El sistema está saturado?"))
        stack.wait_until(lambda: (message_of(stack, "wamid.P1") or (0, "pending"))[1] != "pending",
                         what="the outcome of wamid.P1")
        elapsed = time.time() - started
        check("provider 429 then 503: replied", message_of(stack, "wamid.P1")[1] == "replied", message_of(stack, "wamid.P1"))
        served = [json.loads(line)["status"] for line in list(stack.model.lines) if '"event":"error"' in line]
        check("provider 429 then 503: both were served", served == [429, 503], served)
        check("provider 429: its Retry-After was waited out", elapsed >= 1.0, elapsed)
        attempts = stack.query("SELECT a.verdict FROM v_attempts a JOIN v_messages m USING (message_id)"
                               " WHERE m.provider_message_id = 'wamid.P1'")
        check("provider errors are not attempts: one, valid", attempts == [("valid",)], attempts)
        stack.wait_until(lambda: any(to == sender for to, _, _ in stack.graph_messages()), what="the reply at the fake")
        check("provider errors: one reply", [to for to, _, _ in stack.graph_messages()] == [sender],
              stack.graph_messages())
    finally:
        stack.close()


def settled_sends(stack):
    """Waits until every message is decided and the outbox drained; the sends the fake Graph
    API answered 200, counted per number."""
    stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'pending'") == 0,
                     timeout=60, what="every message decided")
    stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status IN ('approved','sending')") == 0,
                     timeout=60, what="the outbox drained")
    # The fake prints each request as it answers; the harness may read that line a moment
    # after the daemon stored the send.
    sent_count = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'")
    stack.wait_until(lambda: len(stack.graph_messages()) >= sent_count, what="the fake's record of every send")
    per_number = {}
    for to, _, _ in stack.graph_messages():
        per_number[to] = per_number.get(to, 0) + 1
    return per_number


def sigterm_flow():
    # SIGTERM in the middle of a burst: exit 0; a restart finishes every message, and no
    # number gets two replies.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, model_latency_ms=150)
    try:
        stack.start_daemon()
        senders = [f"52155100{i:05d}" for i in range(60)]
        for i, s in enumerate(senders):
            stack.post_webhook(harness.text_webhook(f"wamid.B{i}", s, "¿Tienen envío a Monterrey?"))
        time.sleep(0.3)
        code = stack.daemon.stop(signal.SIGTERM)
        check("SIGTERM mid-burst: exit 0", code == 0, code)
        stack.start_daemon()
        per_number = settled_sends(stack)
        check("after the restart every message has its outcome",
              stack.scalar("SELECT count(*) FROM v_messages WHERE outcome = 'replied'") == len(senders),
              stack.query("SELECT outcome, count(*) FROM v_messages GROUP BY 1"))
        check("no duplicate send", all(n == 1 for n in per_number.values()) and len(per_number) == len(senders),
              {k: v for k, v in per_number.items() if v != 1})
        check("unknown sends are escalated, not resent",
              stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'unknown'") ==
              stack.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'"))
    finally:
        stack.close()


def sigterm_answers_flow():
    # SIGTERM while delivery statuses arrive and the agent has nothing to do: a status that
    # was stored (its `delivery` audit event) was answered 200 before the daemon exited, and
    # every 200 was stored. Requests the daemon never read (refused, or left in the listen
    # queue) are neither, and Meta delivers them again.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        senders = [f"52155200{i:05d}" for i in range(60)]
        for i, sender in enumerate(senders):
            stack.post_webhook(harness.text_webhook(f"wamid.T{i}", sender, "hola"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'") == len(senders),
                         what="every reply sent")
        sent = stack.query("SELECT provider_message_id, recipient FROM v_actions WHERE status = 'sent'")
        answers = {}

        def post(wamid, recipient):
            try:
                answers[wamid] = stack.post_webhook(harness.status_webhook(wamid, recipient, "delivered"))[0]
            except Exception as error:  # refused, reset or closed: not stored (checked below)
                answers[wamid] = repr(error)

        threads = [threading.Thread(target=post, args=row) for row in sent]
        for t in threads:
            t.start()
        while sum(1 for a in list(answers.values()) if a == 200) < 5:
            time.sleep(0.001)
        code = stack.daemon.stop(signal.SIGTERM)
        for t in threads:
            t.join()
        check("SIGTERM while statuses arrive: exit 0", code == 0, code)
        stored = {r[0] for r in stack.query(
            "SELECT a.provider_message_id FROM audit e JOIN v_actions a USING (message_id) WHERE e.event = 'delivery'")}
        ok = {wamid for wamid, a in answers.items() if a == 200}
        check("every stored status was answered 200, and every 200 was stored", stored == ok,
              {"stored, no 200": sorted(stored - ok), "200, not stored": sorted(ok - stored),
               "answers": sorted(set(map(str, answers.values())))})
    finally:
        stack.close()


def sigterm_staff_reads_flow():
    # SIGTERM while staff pages are read: the reads run on a thread of their own
    # (daemon/read_thread.h) and queue there. The daemon exits 0 without waiting on them,
    # every read it answered is 200 (or 503 when the queue was full), never 500; a read still
    # queued is cut off with its connection (a GET: the staff page asks again).
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    try:
        stack.start_daemon()
        for i in range(20):
            stack.post_webhook(harness.text_webhook(f"wamid.R{i}", f"52155300{i:05d}", "hola"))
        token = stack.add_staff("rita")
        headers = {"Authorization": f"Bearer {token}"}
        paths = ["/api/escalations", "/api/escalations?status=open", "/api/escalations?status=resolved&limit=500"]
        answers = []
        stopping = threading.Event()

        def reader(n):
            while not stopping.is_set():
                try:
                    answers.append(stack.get(paths[n % len(paths)], headers)[0])
                except Exception as error:  # cut off by the exit, or refused after it
                    answers.append(type(error).__name__)

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        stack.wait_until(lambda: answers.count(200) >= 100, what="100 staff reads answered")
        started = time.monotonic()
        code = stack.daemon.stop(signal.SIGTERM)
        took = time.monotonic() - started
        stopping.set()
        for t in threads:
            t.join()
        check("SIGTERM while staff pages are read: exit 0", code == 0, code)
        check("the exit did not wait for the readers (under 10 s)", took < 10, took)
        statuses = {a for a in answers if isinstance(a, int)}
        check("every read answered was 200 or 503, none 500", statuses <= {200, 503},
              sorted(set(map(str, answers))))
    finally:
        stack.close()


def kill_flow():
    # kill -9 in the middle of a burst, webhooks still arriving. Every webhook answered 200
    # was stored; Meta delivers the others again after the restart; every message ends with
    # an outcome, no number gets two replies, and a send that was in flight is escalated as
    # delivery_unknown, never sent again.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, model_latency_ms=150)
    try:
        daemon = stack.start_daemon()
        senders = [f"52155300{i:05d}" for i in range(60)]
        bodies = {f"wamid.K{i}": harness.text_webhook(f"wamid.K{i}", s, "¿Tienen envío a Monterrey?",
                                                      timestamp=1_790_000_000 + i) for i, s in enumerate(senders)}
        answers = {}
        lock = threading.Lock()
        order = list(bodies)

        def post_some():
            while True:
                with lock:
                    if not order:
                        return
                    wamid = order.pop(0)
                try:
                    answers[wamid] = stack.post_webhook(bodies[wamid])[0]
                except Exception as error:  # refused or reset by the kill: Meta tries again
                    answers[wamid] = repr(error)
                time.sleep(0.02)  # still arriving when the first replies leave

        threads = [threading.Thread(target=post_some) for _ in range(2)]
        for t in threads:
            t.start()
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'") >= 1,
                         what="the first send")
        daemon.proc.kill()
        daemon.proc.wait()
        for t in threads:
            t.join()
        ok = {wamid for wamid, a in answers.items() if a == 200}
        stored = {r[0] for r in stack.query("SELECT provider_message_id FROM v_messages")}
        check("kill -9: every webhook answered 200 was stored", ok <= stored, sorted(ok - stored))
        check("kill -9: it came mid-burst", 0 < len(ok) < len(senders), len(ok))

        stack.start_daemon()
        # Meta delivers again what was not answered 200, and may repeat the rest.
        again = {wamid: stack.post_webhook(body)[0] for wamid, body in bodies.items()
                 if answers.get(wamid) != 200 or wamid.endswith("7")}
        check("kill -9: every redelivery after the restart is answered 200", set(again.values()) == {200}, again)
        per_number = settled_sends(stack)
        sent_count = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'")
        check("kill -9: one message per webhook, whatever was delivered twice",
              stack.scalar("SELECT count(*) FROM v_messages") == len(senders))
        outcomes = dict(stack.query("SELECT outcome, count(*) FROM v_messages GROUP BY 1"))
        unknown = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'unknown'")
        check("kill -9: every message replied, or escalated when its send may have left",
              outcomes.get("replied", 0) == sent_count and outcomes.get("replied", 0) + unknown == len(senders)
              and outcomes.get("escalated", 0) == unknown, (outcomes, sent_count, unknown))
        check("kill -9: no number got two replies", all(n == 1 for n in per_number.values()),
              {k: v for k, v in per_number.items() if v != 1})
        check("kill -9: unknown sends are escalated delivery_unknown",
              unknown == stack.scalar("SELECT count(*) FROM v_escalations WHERE reason = 'delivery_unknown'"))
        verify = stack.audit_verify()
        check("kill -9: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stack.close()


def notify_flow():
    # sd_notify on a test NOTIFY_SOCKET: READY, WATCHDOG (WatchdogSec=1s -> pings every 0.5 s), STOPPING.
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO)
    notify = harness.NotifySocket(os.path.join(stack.dir, "notify.sock"))
    try:
        stack.start_daemon({"NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"})
        time.sleep(1.5)
        stack.daemon.stop(signal.SIGTERM)
        joined = "\n".join(notify.drain())
        check("sd_notify READY=1", "READY=1" in joined, joined[:300])
        check("sd_notify WATCHDOG=1 repeatedly", joined.count("WATCHDOG=1") >= 2, joined[:300])
        check("sd_notify STATUS=", "STATUS=serving" in joined, joined[:300])
        check("sd_notify STOPPING=1", "STOPPING=1" in joined, joined[:300])
    finally:
        notify.close()
        stack.close()


sys.exit(harness.run_flows((main_flow, message_types_flow, reload_flow, window_closed_flow, provider_errors_flow,
                            sigterm_flow, sigterm_answers_flow, sigterm_staff_reads_flow, kill_flow, notify_flow)))
