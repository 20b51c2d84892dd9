#!/usr/bin/env python3
"""Bursty traffic against dispatchd with burst handling off and on (agent.burst_quiet_ms 0,
then its default): model calls and replies per conversation, and what each decision's
request carries: its input bytes and the share of them in the prefix every request of the
catalog shares (the schema and the system text), which the providers' prompt caches serve.

A generator (seeded) gives each conversation bursts of 1-4 messages, 0.1-0.6 s apart (each
burst within 2 s), posted by several threads against the fake Graph API and the fake model
(tests/e2e/harness.py). Each conversation writes `--rounds` bursts, one round after the
other has been answered, so that the last rounds' requests carry a history as deep as the
default llm.history_messages (10 entries).

  burst_bench.py BUILD_DIR [--conversations N] [--rounds R] [--threads T] [--seed S]

Prints a table per mode and a JSON line with every number. Timings are not its point: the
counts are exact, the byte shares follow from the requests as sent.
"""
import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SOURCE, "tests", "e2e"))
import harness  # noqa: E402

TEXTS = ["hola", "buenas tardes", "¿Tienen envío a Monterrey?", "es para un regalo", "no me ha llegado el paquete",
         "el número es 1234", "gracias", "¿a qué hora abren?", "¿aceptan tarjeta?", "urge, por favor"]


def bursts(rng, conversations, rounds):
    """[round][conversation] -> [(text, gap before it in s)]"""
    out = []
    for _ in range(rounds):
        row = []
        for _ in range(conversations):
            n = rng.randint(1, 4)
            row.append([(rng.choice(TEXTS), 0.0 if i == 0 else rng.uniform(0.1, 0.6)) for i in range(n)])
        out.append(row)
    return out


def request_bytes(body):
    """(prefix bytes, conversation bytes) of one OpenAI-dialect request: the schema and the
    system text are the shared prefix; the user and assistant turns are the conversation."""
    schema = json.dumps(body.get("response_format", {}), separators=(",", ":"), ensure_ascii=False)
    prefix = len(schema.encode())
    conversation = 0
    for m in body["messages"]:
        size = len(m["content"].encode())
        if m["role"] == "system":
            prefix += size
        else:
            conversation += size
    return prefix, conversation


def run(build, plan, threads, quiet_ms, label):
    work = tempfile.TemporaryDirectory(prefix="dispatchd-burst-bench-")
    dump = os.path.join(work.name, "requests.jsonl")
    stack = harness.Stack(build, SOURCE, scenario=os.path.join(SOURCE, "tests", "e2e", "scenario.json"),
                          model_latency_ms=50, workdir=work.name, fake_args={"fake_model": ["--dump-requests", dump]},
                          extra_config={"agent": {"burst_quiet_ms": quiet_ms, "burst_max_ms": 6000},
                                        "llm": {"max_concurrency": 64}})
    conversations = len(plan[0])
    per_round = []
    round_starts = [0]  # requests dumped before each round
    seen = 0
    try:
        stack.start_daemon()
        for r, row in enumerate(plan):
            queue = list(range(conversations))
            lock = threading.Lock()

            def poster():
                while True:
                    with lock:
                        if not queue:
                            return
                        c = queue.pop(0)
                    sender = f"52155700{c:05d}"
                    for i, (text, gap) in enumerate(row[c]):
                        time.sleep(gap)
                        status, _ = stack.post_webhook(harness.text_webhook(f"wamid.{label}.{r}.{c}.{i}", sender, text))
                        assert status == 200, status

            workers = [threading.Thread(target=poster) for _ in range(threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            messages = sum(len(b) for b in row)
            stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM v_messages WHERE outcome <> 'pending'")
                             == seen + messages, timeout=120, what=f"round {r} decided")
            seen += messages
            stack.wait_until(lambda: stack.scalar(
                "SELECT count(*) FROM v_actions WHERE status IN ('approved', 'sending')") == 0, timeout=60,
                what="the outbox drained")
            per_round.append(messages)
            with open(dump, encoding="utf-8") as f:
                round_starts.append(sum(1 for _ in f))
        calls = stack.scalar("SELECT count(*) FROM v_attempts")
        replies = stack.scalar("SELECT count(*) FROM v_actions WHERE status = 'sent'")
        turns = stack.scalar("SELECT count(DISTINCT turn_id) FROM v_messages")
    finally:
        stack.close()
    with open(dump, encoding="utf-8") as f:
        bodies = [json.loads(json.loads(line)["body"]) for line in f if line.strip()]
    work.cleanup()
    shares = []
    for body in bodies:
        prefix, conversation = request_bytes(body)
        shares.append((prefix, conversation))
    last = shares[round_starts[-2]:]
    burst_count = sum(1 for row in plan for b in row if len(b) > 1)
    all_bursts = sum(len(row) for row in plan)
    return {
        "mode": label, "burst_quiet_ms": quiet_ms, "conversations": conversations, "rounds": len(plan),
        "bursts": all_bursts, "bursts_of_several": burst_count, "messages": sum(per_round),
        "model_calls": calls, "replies": replies, "turns": turns,
        "model_calls_per_burst": round(calls / all_bursts, 3), "replies_per_burst": round(replies / all_bursts, 3),
        "input_bytes_per_decision": round(sum(p + c for p, c in shares) / max(1, len(shares))),
        "prefix_share": round(sum(p for p, _ in shares) / max(1, sum(p + c for p, c in shares)), 3),
        "prefix_share_last_round": round(sum(p for p, _ in last) / max(1, sum(p + c for p, c in last)), 3),
        "requests": len(shares),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--conversations", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args()
    plan = bursts(random.Random(args.seed), args.conversations, args.rounds)
    results = [run(args.build, plan, args.threads, 0, "off"), run(args.build, plan, args.threads, 1500, "on")]
    print("| bursts | messages | model calls per burst | replies per burst | input bytes per decision |"
          " prefix share (all / last round) |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['mode']} ({r['burst_quiet_ms']} ms) | {r['messages']} in {r['bursts']} bursts |"
              f" {r['model_calls_per_burst']} | {r['replies_per_burst']} | {r['input_bytes_per_decision']} |"
              f" {r['prefix_share']:.0%} / {r['prefix_share_last_round']:.0%} |")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
