#!/usr/bin/env python3
"""The IMAP channel's inbound rate: messages read, decoded and stored per second when a burst
waits in the mailbox, with the real dispatchd against the Dovecot and Postfix pair of
tests/mail/servers.sh (root, Debian's dovecot-imapd, dovecot-lmtpd and postfix).

  imap_burst_bench.py BUILD_DIR [--messages 1000] [--size 4096] [--runs 3]

Each run: a fresh database; dispatchd starts and records the mailbox's position (its first
start), stops (SIGTERM); --messages messages (about --size bytes: headers and lines of text)
are written straight into the support Maildir; dispatchd starts again and the clock runs from
its start to the last of them stored. Every mail type is "ignore"d (connectors.imap.
message_types), so that the model, the agent and SMTP take nothing: what is measured is IMAP
(EXAMINE, UID SEARCH, one UID FETCH each, in batches of 50), MIME decoding and the store's
transactions, with dispatchd's own start (about as long as an empty start) included.

Prints one JSON object: the median messages/s, every run's, and the machine's load. Exits 77
when the mail servers cannot run here."""

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import harness  # noqa: E402
import imap_harness  # noqa: E402
from imap_fetch_bench import fill_maildir  # noqa: E402 - the same messages as the library's bench


def stored(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        return conn.execute("SELECT count(*) FROM inbox WHERE channel = 'imap'").fetchone()[0]


def one_run(build, env, messages, size):
    config = imap_harness.imap_config(env)
    config["connectors"]["imap"]["message_types"] = {"email": "ignore", "undecodable": "ignore"}
    stack = harness.Stack(build, ROOT, extra_config=config, env_extra={"IMAP_SOPORTE_PASSWORD":
                                                                       env["SUPPORT_PASSWORD"]})
    try:
        daemon = stack.start_daemon()
        daemon.wait_for_line("imap: soporte: first start", timeout=60)
        daemon.stop(signal.SIGTERM)
        fill_maildir(env, messages, size)
        began = time.monotonic()
        stack.start_daemon()
        deadline = began + 600
        while stored(stack.db) < messages:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {stored(stack.db)} of {messages} stored in 600 s")
            time.sleep(0.05)
        return messages / (time.monotonic() - began)
    finally:
        stack.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="dispatchd-imap-burst.")
    try:
        env, why_not = imap_harness.start_pair(directory)
        if env is None:
            print(f"imap_burst_bench: skipped: {why_not}")
            return 77
        rates = [one_run(os.path.abspath(args.build), env, args.messages, args.size) for _ in range(args.runs)]
        print(json.dumps({"messages": args.messages, "size": args.size, "runs": args.runs,
                          "stored_per_s_median": round(statistics.median(rates), 1),
                          "stored_per_s": [round(r, 1) for r in rates], "cores": os.cpu_count(),
                          "load_1m_after": os.getloadavg()[0]}, indent=1))
        return 0
    finally:
        imap_harness.stop_pair(directory)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
