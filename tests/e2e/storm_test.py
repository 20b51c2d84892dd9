#!/usr/bin/env python3
"""End-to-end: provider storms. A model that answers garbage, and Graph answering 5xx.

Model garbage (tests/fakes/garbage_model.py; each message names its garbage): 200 with random
bytes, an HTML page with 200, an HTML 503, 200 with an empty body, a well-formed completion
with random text, bodies cut at a random point (connection closed mid-body), an endless slow
stream. What docs/agent.md documents must happen: an answer that came but cannot be used (a bad
2xx body, text that fails the contract) is an attempt and is asked again, at most
llm.max_retries times, then `contract_failed`; no answer (5xx, a cut body, a timeout) is
retried inside the provider stack (RetryPolicy: at most 4 HTTP attempts per call), then the
message waits, and past llm.provider_deadline_s it escalates `provider_unavailable`. Nothing
is sent to the customer, nothing is lost, and the request rate toward the model stays under
the bound those settings give. Then the model recovers and the next message is answered.

Graph 5xx storm (fake_graph --script): sends answered 503, 500, Graph code 2 (retried after
the channel's backoff: 2 s doubling) and a bare 502 (Graph may have sent it: never resent,
`delivery_unknown`). Every message ends replied once or as that one escalation, and sends
toward the failing Graph stay under their bound.

Gmail 5xx storm (fake_gmail.py's scripts): history.list answers 503 several times in a row
while a mail waits, then messages.send answers 500 once. Polls back off (2 s, doubling), the
mail is answered once (a send answered 5xx is looked up by its Message-ID, never resent
blindly), and no two failed polls come closer than the first backoff.

Usage: storm_test.py BUILD_DIR SOURCE_DIR
"""
import collections
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import gmail_harness  # noqa: E402
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "scenario.json")
GARBAGE = os.path.join(SOURCE, "tests", "fakes", "garbage_model.py")

MAX_RETRIES = 2           # llm.max_retries (the default): 1 + 2 attempts per message
HTTP_ATTEMPTS = 4         # llm::RetryPolicy::max_attempts: HTTP attempts per model call
TIMEOUT_MS = 2000         # llm.timeout_ms here: a slow stream is cut after 2 s
PROVIDER_WAIT_S = 30      # agent::Limits::provider_wait: a message without an answer waits this long
PER_MODE = 3              # messages per kind of garbage
ANSWERED_GARBAGE = {"random": "bad_response", "html200": "bad_response", "empty": "bad_response", "text": None}
NO_ANSWER = ("html5xx", "cut", "slow")


def per_second_max(times):
    """The most events in any 1-second window (sliding, starting at each event)."""
    times = sorted(times)
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] < t - 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


def outcome_of(stack, wamid):
    rows = stack.query("SELECT m.outcome, e.reason FROM v_messages m LEFT JOIN v_escalations e USING (message_id)"
                       " WHERE m.provider_message_id = ?", wamid)
    return rows[0] if rows else None


def model_storm_flow():
    garbage = harness.Process([sys.executable, GARBAGE, "--mode", "ok"], name="garbage_model")
    base_url = json.loads(garbage.wait_for_line('"listening"'))["base_url"]
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, extra_config={
        "llm": {"base_url": base_url, "timeout_ms": TIMEOUT_MS, "provider_deadline_s": 1}})
    try:
        stack.start_daemon()
        wamids = {}  # wamid -> mode
        for k, mode in enumerate(list(ANSWERED_GARBAGE) + list(NO_ANSWER)):
            for i in range(PER_MODE):
                wamid = f"wamid.STORM.{mode}.{i}"
                sender = f"5215700{k:02d}{i:04d}"
                status, _ = stack.post_webhook(harness.text_webhook(wamid, sender,
                                                                    f"¿Tienen envío? garbage-mode:{mode}"))
                check(f"{mode} {i}: webhook 200", status == 200, status)
                wamids[wamid] = mode
        started = time.time()

        def decided():
            return all((outcome_of(stack, w) or ("pending",))[0] != "pending" for w in wamids)

        try:  # a message the provider left unanswered may wait PROVIDER_WAIT_S before it is taken again
            stack.wait_until(decided, timeout=PROVIDER_WAIT_S + 60, what="every storm message's outcome")
        except AssertionError:
            pass
        print(f"  every storm message decided after {time.time() - started:.1f} s", flush=True)
        for wamid, mode in wamids.items():
            expected = ("escalated", "contract_failed") if mode in ANSWERED_GARBAGE else \
                ("escalated", "provider_unavailable")
            check(f"{wamid}: {expected[0]} {expected[1]}", outcome_of(stack, wamid) == expected,
                  outcome_of(stack, wamid))
        for mode, error_class in ANSWERED_GARBAGE.items():
            rows = stack.query("SELECT a.verdict, a.error_class FROM v_attempts a JOIN v_messages m USING (message_id)"
                               " WHERE m.provider_message_id LIKE ?", f"wamid.STORM.{mode}.%")
            # A body that is not the documented JSON is an `error` attempt; text that fails
            # the contract an `invalid` one (docs/sql.md, v_attempts). Both use the re-ask budget.
            verdict = "error" if error_class else "invalid"
            check(f"{mode}: {1 + MAX_RETRIES} {verdict} attempts per message"
                  + (f", error_class {error_class}" if error_class else ""),
                  len(rows) == PER_MODE * (1 + MAX_RETRIES) and all(v == verdict for v, _ in rows)
                  and (error_class is None or all(c == error_class for _, c in rows)), rows)
        for mode in NO_ANSWER:
            rows = stack.query("SELECT count(*) FROM v_attempts a JOIN v_messages m USING (message_id)"
                               " WHERE m.provider_message_id LIKE ?", f"wamid.STORM.{mode}.%")
            check(f"{mode}: no answer is not an attempt", rows == [(0,)], rows)

        with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/requests", timeout=10) as response:
            requests = json.loads(response.read())["requests"]
        by_mode = collections.defaultdict(list)
        for r in requests:
            by_mode[r["mode"]].append(r["t"])
        elapsed = max(time.time() - started, 1)
        # The bound: an answered call is asked again at once, at most 1 + max_retries calls per
        # message; a call without an answer makes at most HTTP_ATTEMPTS requests (backoff with
        # full jitter may make them close), and the message then waits PROVIDER_WAIT_S before its
        # next call. So in any second a message makes at most max(1 + max_retries, HTTP_ATTEMPTS)
        # requests, and over the run at most HTTP_ATTEMPTS per PROVIDER_WAIT_S started.
        messages = len(wamids)
        rate_bound = messages * max(1 + MAX_RETRIES, HTTP_ATTEMPTS)
        measured = per_second_max([t for ts in by_mode.values() for t in ts])
        print(f"  requests toward the model by garbage: { {m: len(ts) for m, ts in by_mode.items()} };"
              f" at most {measured} in one second (bound {rate_bound} = {messages} messages x"
              f" {max(1 + MAX_RETRIES, HTTP_ATTEMPTS)})", flush=True)
        check("model storm: requests per second under the bound", measured <= rate_bound, (measured, rate_bound))
        for mode in ANSWERED_GARBAGE:
            check(f"{mode}: exactly {1 + MAX_RETRIES} requests per message",
                  len(by_mode[mode]) == PER_MODE * (1 + MAX_RETRIES), len(by_mode[mode]))
        takes = 1 + int(elapsed // PROVIDER_WAIT_S)
        for mode in NO_ANSWER:
            check(f"{mode}: at most {HTTP_ATTEMPTS} requests per message per take ({takes} take(s) possible)",
                  0 < len(by_mode[mode]) <= PER_MODE * HTTP_ATTEMPTS * takes, len(by_mode[mode]))
        check("model storm: nothing was sent to a customer", stack.graph_messages() == [], stack.graph_messages())

        # The model recovers: the next message is answered.
        status, _ = stack.post_webhook(harness.text_webhook("wamid.STORM.after", "5215799990000",
                                                            "¿Tienen envío? garbage-mode:ok"))
        check("after the storm: webhook 200", status == 200, status)
        try:
            stack.wait_until(lambda: (outcome_of(stack, "wamid.STORM.after") or ("pending",))[0] == "replied",
                             timeout=30, what="the reply after the storm")
        except AssertionError:
            pass
        check("after the storm: the next message is replied", outcome_of(stack, "wamid.STORM.after")
              == ("replied", None), outcome_of(stack, "wamid.STORM.after"))
        check("after the storm: the reply went to its sender, once",
              [to for to, _, _ in stack.graph_messages()] == ["5215799990000"], stack.graph_messages())
        verify = stack.audit_verify()
        check("model storm: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
        check("model storm: dispatchd is still running", stack.daemon.proc.poll() is None)
    finally:
        stack.close()
        garbage.stop()


GRAPH_SCRIPT = "http:503,http:500,2,http:502"  # the next four sends; then Graph answers normally
GRAPH_FIRST_DELAY_S = 2                         # WhatsApp's retry_delay after a first failure
IN_FLIGHT_SLACK_S = 0.3                         # sends of the same burst still landing
# Times are the fakes' own (fake_graph's received_ns, fake_gmail's "t"): a loaded machine may
# delay when the test reads a log line, never when the fake saw the request.


def graph_storm_flow():
    stack = harness.Stack(BUILD, SOURCE, scenario=SCENARIO, graph_script=GRAPH_SCRIPT)
    try:
        stack.start_daemon()
        senders = {f"wamid.GSTORM.{i}": f"52158000{i:04d}" for i in range(6)}
        for wamid, sender in senders.items():
            status, _ = stack.post_webhook(harness.text_webhook(wamid, sender, "¿Tienen envío a Monterrey?"))
            check(f"{wamid}: webhook 200", status == 200, status)
        started = time.time()

        def settled():  # every message decided, and every send but the unknown one answered 200
            rows = stack.query("SELECT outcome FROM v_messages WHERE provider_message_id LIKE 'wamid.GSTORM.%'")
            return (len(rows) == len(senders) and all(o in ("replied", "escalated") for o, in rows)
                    and len(stack.graph_messages()) >= len(senders) - 1)

        try:
            stack.wait_until(settled, timeout=90, what="every message replied or escalated")
        except AssertionError:
            pass
        print(f"  graph storm settled after {time.time() - started:.1f} s", flush=True)
        outcomes = {w: outcome_of(stack, w) for w in senders}
        counted = collections.Counter(outcomes.values())
        check("graph storm: the bare 502 is one delivery_unknown escalation, the rest replied",
              counted == {("replied", None): len(senders) - 1, ("escalated", "delivery_unknown"): 1}, outcomes)
        delivered = collections.Counter(to for to, _, _ in stack.graph_messages())
        check("graph storm: no number got two replies", all(n == 1 for n in delivered.values()), delivered)
        unknown = [senders[w] for w, o in outcomes.items() if o == ("escalated", "delivery_unknown")]
        check("graph storm: every replied number got its reply",
              sorted(delivered) == sorted(set(senders.values()) - set(unknown)), (delivered, unknown))

        sends = []
        for line in list(stack.graph.lines):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "request" and event.get("type") == "text":
                sends.append((event["received_ns"] / 1e9, event.get("answered")))
        sends.sort()
        failures = [t for t, answered in sends if answered not in (200, 502)]
        print(f"  sends toward Graph: {[a for _, a in sends]}", flush=True)
        check("graph storm: every scripted failure was met", [a for _, a in sends].count(200) == len(delivered)
              and len(sends) == len(delivered) + 4, sends)
        # The bound: after a retryable failure the channel sends nothing for retry_delay (2 s,
        # doubling), so no send starts within GRAPH_FIRST_DELAY_S (less 0.2 s of timer slack) after
        # a failure unless it was already in flight when the failure came back; the sends in
        # flight at once are the messages at most.
        measured = per_second_max([t for t, _ in sends])
        print(f"  at most {measured} sends in one second (bound {len(senders)}: the messages)", flush=True)
        check("graph storm: sends per second under the bound", measured <= len(senders), measured)
        # Sends already in flight when a failure came back may land just after it (the same
        # burst, within IN_FLIGHT_SLACK_S); nothing new may start until the backoff is over.
        in_backoff = [round(t - f, 2) for f in failures for t, _ in sends
                      if IN_FLIGHT_SLACK_S < t - f < GRAPH_FIRST_DELAY_S - 0.2]
        after = sorted(round(t - max(failures), 2) for t, _ in sends if failures and t > max(failures) + IN_FLIGHT_SLACK_S)
        print(f"  sends after the last retryable failure: {after} s later (backoff at least {GRAPH_FIRST_DELAY_S} s)",
              flush=True)
        check("graph storm: the channel backed off after the failures", failures and not in_backoff
              and after and after[0] >= GRAPH_FIRST_DELAY_S - 0.2, (in_backoff, after))
        verify = stack.audit_verify()
        check("graph storm: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)
    finally:
        stack.close()


GMAIL_POLL_FAILURES = 3  # 2 + 4 + 8 s of backoff
GMAIL_FIRST_DELAY_S = 2  # docs/channels.md: 5xx polls back off from 2 s doubling


def gmail_storm_flow():
    with gmail_harness.started(BUILD, SOURCE, scenario=SCENARIO) as (gmail, stack, daemon):
        gmail.control("script", {"path": "history", "status": 503, "count": GMAIL_POLL_FAILURES})
        gmail.control("script", {"path": "messages/send", "status": 500, "count": 1})
        asked = gmail.deliver(gmail_harness.mail("tormenta@cliente.example", "Envío", "¿Tienen envío a Monterrey?"))
        started = time.time()
        while time.time() - started < 90 and stack.outcome(asked["id"]) in (None, "pending"):
            time.sleep(0.05)
        outcome = stack.outcome(asked["id"])
        print(f"  gmail storm: the mail is {outcome} after {time.time() - started:.1f} s", flush=True)
        check("gmail storm: the waiting mail is replied", outcome == "replied", outcome)
        stack.wait_until(lambda: len(stack.replies_in(asked["threadId"])) >= 1, timeout=30, what="the reply")
        time.sleep(2)
        check("gmail storm: one reply in the thread, never two", len(stack.replies_in(asked["threadId"])) == 1,
              len(stack.replies_in(asked["threadId"])))
        stamped = [(r["t"], r) for r in gmail.state()["requests"]]  # (when fake_gmail answered, request)
        failed_polls = [t for t, r in stamped if "history" in r["path"] and r["status"] >= 500]
        gaps = [round(b - a, 2) for a, b in zip(failed_polls, failed_polls[1:])]
        history = [t for t, r in stamped if "history" in r["path"]]
        print(f"  gmail storm: {len(failed_polls)} polls answered 5xx, gaps {gaps} s; at most"
              f" {per_second_max(history)} history requests in one second", flush=True)
        check(f"gmail storm: {GMAIL_POLL_FAILURES} polls met the storm", len(failed_polls) == GMAIL_POLL_FAILURES,
              len(failed_polls))
        check(f"gmail storm: failed polls at least {GMAIL_FIRST_DELAY_S} s apart (less 0.2 s)",
              all(g >= GMAIL_FIRST_DELAY_S - 0.2 for g in gaps), gaps)
        check("gmail storm: the backoff grows", all(b > a for a, b in zip(gaps, gaps[1:])), gaps)
        check("gmail storm: at most 2 history requests in any second", per_second_max(history) <= 2,
              per_second_max(history))
        sends = [r["status"] for _, r in stamped if r["path"].endswith("messages/send")]
        check("gmail storm: the send answered 500 was not resent blindly (looked up first)",
              sends[:1] == [500] and any("rfc822msgid" in (r.get("query") or "") for _, r in stamped), sends)
        verify = stack.audit_verify()
        check("gmail storm: the audit chain verifies", verify.returncode == 0, verify.stdout + verify.stderr)


sys.exit(harness.run_flows([model_storm_flow, graph_storm_flow, gmail_storm_flow]))
