#!/usr/bin/env python3
"""mail_decode_bench.py: single-threaded throughput of Python's `email` package, the
counterpart of mail_decode_bench.cpp (same options, same output lines).

Reads every *.eml file of a folder (default: tests/data/mail) into memory once, then per
message: email.message_from_bytes(raw, policy=email.policy.default),
msg.get_body(preferencelist=('plain', 'html')) and get_content() on it, the way a consumer
would read the text. An exception on a message is caught and counted (a real consumer would
log it and move on), as is a message with no such body. The whole set is decoded REPEAT
times per run, RUNS runs; per run it prints messages/s, MB/s (10^6 bytes of raw input) and a
checksum (total characters of the bodies read), then the median run.

    mail_decode_bench.py [--dir DIR] [--repeat N] [--runs N]

A benchmark, not a test: it exits 1 only when the corpus cannot be read or a run does not
decode the same as the first one, never on timing.
"""
import argparse
import email
import email.policy
import os
import platform
import statistics
import sys
import time

DEFAULT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mail")


def decode_all(messages, repeat):
    """(text characters, exceptions, messages without a plain or HTML body) over REPEAT passes."""
    chars = errors = no_body = 0
    policy = email.policy.default
    for _ in range(repeat):
        for raw in messages:
            try:
                msg = email.message_from_bytes(raw, policy=policy)
                body = msg.get_body(preferencelist=("plain", "html"))
                if body is None:
                    no_body += 1
                    continue
                chars += len(body.get_content())
            except Exception:  # noqa: BLE001 -- what a consumer does: count it, go on
                errors += 1
    return chars, errors, no_body


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=DEFAULT_DIR)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if args.repeat <= 0 or args.runs <= 0:
        parser.error("--repeat and --runs must be positive")

    try:
        names = sorted(n for n in os.listdir(args.dir) if n.endswith(".eml"))
        messages = []
        for name in names:
            with open(os.path.join(args.dir, name), "rb") as f:
                messages.append(f.read())
    except OSError as e:
        print(f"mail_decode_bench.py: {e}", file=sys.stderr)
        return 1
    if not messages:
        print(f"mail_decode_bench.py: no .eml files in {args.dir}", file=sys.stderr)
        return 1

    size = sum(len(m) for m in messages)
    n = len(messages) * args.repeat
    mb = size * args.repeat / 1e6
    print(f"impl:     Python {platform.python_version()} email (policy=default, get_body plain/html, "
          "get_content; single thread)")
    print(f"corpus:   {len(messages)} .eml files, {size} bytes, from {os.path.normpath(args.dir)}; "
          f"{args.repeat} x per run = {n} messages, {mb:.2f} MB")

    expected = decode_all(messages, 1)  # warm-up (imports, codec lookups)
    rates, mbs = [], []
    for run in range(1, args.runs + 1):
        t0 = time.perf_counter()
        chars, errors, no_body = decode_all(messages, args.repeat)
        s = time.perf_counter() - t0
        if (chars, errors, no_body) != tuple(v * args.repeat for v in expected):
            print(f"FAIL: run {run} decoded differently from the warm-up pass")
            return 1
        rates.append(n / s)
        mbs.append(mb / s)
        print(f"run {run}:    {s:.3f} s  {rates[-1]:.0f} messages/s  {mbs[-1]:.2f} MB/s  "
              f"checksum text_chars={chars} errors={errors} no_body={no_body}")
    rate, mbps = statistics.median(rates), statistics.median(mbs)
    print(f"median:   {rate:.0f} messages/s  {mbps:.2f} MB/s")
    print(f"result messages_per_s={rate:.0f} mb_per_s={mbps:.3f} checksum={expected[0]} "
          f"errors_per_pass={expected[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
