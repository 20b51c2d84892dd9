#!/usr/bin/env python3
"""dispatchd's own time on a message, the model excluded, from the event timelines the load
generator and the fakes write with --timeline (tests/fakes/timeline.h: "<ns> <event> <key>",
ns on CLOCK_MONOTONIC, which all processes on the machine share; the key is the sender,
unique per message):

  webhook        webhook_load handed the signed webhook to curl
  webhook_acked  webhook_load read dispatchd's answer (after its durable commit)
  model_request  fake_model read the model request's body
  model_answer   fake_model is about to write the answer (after its latency)
  graph_send     fake_graph read the body of a text send

and joins them by key into two intervals: webhook -> model request (receive, verify, store,
claim, build the prompt, send), and model answer -> Graph send (read, validate, decide,
store, send). The first is also split at the webhook's answer, which dispatchd writes once
the message is committed and synced to disk, just before it wakes the agent: webhook ->
answer read, and answer read -> model request (may be below 0: the two race). The first also holds any wait for a free model slot (llm.max_concurrency):
a message counts as having waited when, as its webhook was written, the model fake already
had that many requests in flight, and the interval is also given without those messages.
Keys that do not join (a missing event, a re-ask or a second send) are counted, never
dropped silently.

Used by daemon_bench.py --overhead; `overhead.py --self-test` checks the join on made-up
timelines; `overhead.py WEBHOOK MODEL GRAPH MAX_CONCURRENCY` joins files and prints JSON.
"""
import bisect
import json
import sys


def read_timeline(path):
    """{event: [(ns, key), ...]} in file order."""
    events = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                events.setdefault(parts[1], []).append((int(parts[0]), parts[2]))
    return events


def percentiles(values_ns, prefix):
    """p50, p99 and max in milliseconds, as `prefix`_p50 ..., and the count."""
    ordered = sorted(values_ns)
    pick = (lambda p: ordered[min(len(ordered) - 1, int(p * len(ordered)))] / 1e6) if ordered else (lambda p: 0.0)
    return {f"{prefix}_n": len(ordered), f"{prefix}_ms_p50": round(pick(0.50), 3),
            f"{prefix}_ms_p99": round(pick(0.99), 3), f"{prefix}_ms_max": round(ordered[-1] / 1e6, 3) if ordered else 0.0}


def by_key(pairs):
    out = {}
    for ns, key in pairs:
        out.setdefault(key, []).append(ns)
    return out


def join(webhook_events, model_events, graph_events, max_concurrency):
    """The overhead numbers (a flat dict) from three read_timeline() results. The fakes'
    events from before the first webhook (the benchmark measures them alone first, with the
    same senders) are left out."""
    webhooks = by_key(webhook_events.get("webhook", []))
    acks = by_key(webhook_events.get("webhook_acked", []))
    start = min((t[0] for t in webhooks.values()), default=0)

    def from_start(events):
        return [(ns, key) for ns, key in events if ns >= start]

    requests = by_key(from_start(model_events.get("model_request", [])))
    answers = by_key(from_start(model_events.get("model_answer", [])))
    sends = by_key(from_start(graph_events.get("graph_send", [])))
    # The model fake's requests in flight at an instant: read and not yet answered.
    request_times = sorted(ns for times in requests.values() for ns in times)
    answer_times = sorted(ns for times in answers.values() for ns in times)

    def in_flight(ns):
        return bisect.bisect_right(request_times, ns) - bisect.bisect_right(answer_times, ns)

    to_model, to_model_free, to_graph, to_ack, ack_to_model = [], [], [], [], []
    waited = 0
    for key, written in webhooks.items():
        if key in acks:
            to_ack.append(acks[key][0] - written[0])
        if key not in requests:
            continue
        interval = min(requests[key]) - written[0]
        to_model.append(interval)
        if key in acks:
            ack_to_model.append(min(requests[key]) - acks[key][0])
        if in_flight(written[0]) >= max_concurrency:
            waited += 1
        else:
            to_model_free.append(interval)
    unanswered_sends = 0
    for key, times in sends.items():
        first = times[0]
        before = [ns for ns in answers.get(key, []) if ns <= first]
        if before:
            to_graph.append(first - max(before))
        else:
            unanswered_sends += 1
    result = {
        "overhead_webhooks": len(webhooks),
        "overhead_unmatched": {
            "webhook_without_model_request": sum(1 for k in webhooks if k not in requests),
            "model_request_without_webhook": sum(1 for k in requests if k not in webhooks),
            "graph_send_without_model_answer": unanswered_sends,
            "webhook_without_graph_send": sum(1 for k in webhooks if k not in sends),
            "repeated_webhook": sum(1 for t in webhooks.values() if len(t) > 1),
            "model_reasked": sum(1 for t in requests.values() if len(t) > 1),
            "graph_sent_twice": sum(1 for t in sends.values() if len(t) > 1),
        },
        "overhead_slot_wait_messages": waited,
        "overhead_model_max_in_flight": max((in_flight(ns) for ns in request_times), default=0),
    }
    result.update(percentiles(to_model, "webhook_to_model"))
    result.update(percentiles(to_model_free, "webhook_to_model_no_slot_wait"))
    result.update(percentiles(to_ack, "webhook_to_ack"))
    result.update(percentiles(ack_to_model, "ack_to_model"))
    result.update(percentiles(to_graph, "answer_to_graph"))
    return result


def join_files(webhook_path, model_path, graph_path, max_concurrency):
    return join(read_timeline(webhook_path), read_timeline(model_path), read_timeline(graph_path), max_concurrency)


def self_test():
    ms = 1_000_000
    webhook = {"webhook": [(0, "a"), (10 * ms, "b"), (20 * ms, "c"), (30 * ms, "d")],
               "webhook_acked": [(2 * ms, "a"), (11 * ms, "b")]}
    # a: 1 ms to the model, b: 2 ms, c: 3 ms while a and b are both in flight (max_concurrency 2:
    # it waited), d: never reaches the model.
    model = {"model_request": [(-5 * ms, "a"), (1 * ms, "a"), (12 * ms, "b"), (23 * ms, "c"), (40 * ms, "e")],
             "model_answer": [(100 * ms, "a"), (101 * ms, "b"), (102 * ms, "c"), (103 * ms, "c")]}
    graph = {"graph_send": [(100 * ms + 500_000, "a"), (104 * ms, "b"), (106 * ms, "c"), (110 * ms, "f")]}
    got = join(webhook, model, graph, max_concurrency=2)
    expected_unmatched = {"webhook_without_model_request": 1, "model_request_without_webhook": 1,
                          "graph_send_without_model_answer": 1, "webhook_without_graph_send": 1,
                          "repeated_webhook": 0, "model_reasked": 0, "graph_sent_twice": 0}
    checks = [
        (got["overhead_unmatched"], expected_unmatched),
        (got["webhook_to_model_n"], 3), (got["webhook_to_model_ms_p50"], 2.0), (got["webhook_to_model_ms_max"], 3.0),
        (got["overhead_slot_wait_messages"], 1), (got["webhook_to_model_no_slot_wait_n"], 2),
        (got["webhook_to_model_no_slot_wait_ms_max"], 2.0),
        # a: 0.5 ms; b: 3 ms; c: 3 ms after its last answer before the send (103), not its first.
        (got["answer_to_graph_n"], 3), (got["answer_to_graph_ms_p50"], 3.0), (got["answer_to_graph_ms_max"], 3.0),
        (percentiles([], "x")["x_ms_p99"], 0.0),
        # a: acked at 2 ms, asked at 1 ms (the race); b: acked at 1 ms, asked 1 ms later.
        (got["webhook_to_ack_n"], 2), (got["webhook_to_ack_ms_max"], 2.0), (got["ack_to_model_ms_p50"], 1.0),
        (got["ack_to_model_n"], 2),
    ]
    failed = [(g, e) for g, e in checks if g != e]
    for g, e in failed:
        print(f"FAIL: got {g}, expected {e}")
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(join_files(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
