#!/usr/bin/env python3
"""The IMAP library decision's numbers (docs/channels.md, "IMAP and SMTP"): fetching a mailbox
over IMAPS with libcurl (the IMAP client of connectors/imap/, bench/imap_bench.cpp) and with
VMime (bench/imap_vmime_bench.cpp, when built), and IDLE's latency with libcurl, against the
Dovecot and Postfix pair of tests/mail/servers.sh (root, Debian's dovecot-imapd,
dovecot-lmtpd and postfix).

  imap_fetch_bench.py BUILD_DIR [--messages 200] [--size 4096] [--runs 7] [--idle-rounds 10]

The messages (about --size bytes each: headers and lines of text) are written straight into
soporte's Maildir; each client then fetches all of them, one UID FETCH each on one connection
(connect, TLS and login included), --runs times, the two clients alternating after one
unmeasured warm-up each. IDLE: the IMAP client idles on INBOX while the SMTP client submits a
mail through Postfix (STARTTLS, AUTH), which hands it to Dovecot over LMTP; measured from the
submission's start and from its acceptance to the EXISTS, --idle-rounds times.

Prints one JSON object: the medians, their ratio (vmime / libcurl) and every run. Exits 77
when the mail servers cannot run here (no packages, not root)."""

import argparse
import imaplib
import json
import os
import random
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "mail"))
from servers_test import read_env, servers  # noqa: E402 - the mail pair's own helpers
WORDS = ("pedido envio factura devolucion cliente gracias hola saludos numero referencia tienda "
         "producto cantidad precio direccion semana lunes martes problema ayuda").split()


def message(i, size, rng):
    head = (f"From: Cliente {i} <cliente{i}@example.test>\r\nTo: soporte@example.test\r\n"
            f"Subject: pedido {i}\r\nMessage-ID: <bench-{i}@example.test>\r\n"
            "Date: Mon, 07 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n\r\n")
    lines = []
    total = len(head)
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(10))
        lines.append(line)
        total += len(line) + 2
    return (head + "\r\n".join(lines) + "\r\n").encode()


def fill_maildir(env, count, size):
    maildir = os.path.join(env["MAILDIR_ROOT"], "example.test", "soporte", "Maildir")
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(maildir, sub), exist_ok=True)
    rng = random.Random(42)
    now = int(time.time())
    for i in range(count):
        with open(os.path.join(maildir, "new", f"{now}.bench{i}.dispatchd"), "wb") as f:
            f.write(message(i, size, rng))
    subprocess.run(["chown", "-R", "dovecot:dovecot", os.path.join(env["MAILDIR_ROOT"], "example.test")], check=True)


def uidvalidity(env):
    context = ssl.create_default_context(cafile=env["CA_FILE"])
    with imaplib.IMAP4_SSL("127.0.0.1", int(env["IMAPS_PORT"]), ssl_context=context, timeout=30) as conn:
        conn.login(env["SUPPORT_USER"], env["SUPPORT_PASSWORD"])
        _, data = conn.select("INBOX", readonly=True)
        count = int(data[0])
        return int(conn.response("UIDVALIDITY")[1][0]), count


def run(command):
    # libvmime keeps a few process-long allocations that LeakSanitizer reports at exit (the
    # sanitizer build runs this too); they are the library's, not the benchmark's.
    env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env=env if "vmime" in os.path.basename(command[0]) else None)
    if done.returncode != 0:
        raise RuntimeError(f"{os.path.basename(command[0])}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--idle-rounds", type=int, default=10)
    args = parser.parse_args()
    libcurl = os.path.join(args.build_dir, "bench", "imap_bench")
    vmime = os.path.join(args.build_dir, "bench", "imap_vmime_bench")
    have_vmime = os.path.exists(vmime)

    directory = tempfile.mkdtemp(prefix="dispatchd-imap-bench.")
    os.chmod(directory, 0o755)
    started = servers("start", directory)
    try:
        if started.returncode == 2:  # no packages, not root: CTest's skip
            print(f"imap_fetch_bench: skipped: {started.stderr.strip()}")
            sys.exit(77)
        if started.returncode != 0:
            sys.exit(f"imap_fetch_bench: the mail servers did not start: {started.stderr.strip()}")
        env = read_env(directory)
        env_file = os.path.join(directory, "env")
        fill_maildir(env, args.messages, args.size)
        validity, count = uidvalidity(env)
        if count != args.messages:
            sys.exit(f"imap_fetch_bench: INBOX holds {count} messages, not {args.messages}")

        fetch_curl = [libcurl, "fetch", env_file, str(validity)]
        fetch_vmime = [vmime, env_file]
        run(fetch_curl)  # warm-up: Dovecot's indexes, the page cache
        if have_vmime:
            run(fetch_vmime)
        runs = {"libcurl": [], "vmime": []}
        for _ in range(args.runs):
            for name, command in (("libcurl", fetch_curl), ("vmime", fetch_vmime)):
                if name == "vmime" and not have_vmime:
                    continue
                result = run(command)
                if result["messages"] != args.messages:
                    sys.exit(f"imap_fetch_bench: {name} fetched {result['messages']} messages")
                runs[name].append(result)

        idle = run([libcurl, "idle", env_file, str(args.idle_rounds)]) if args.idle_rounds > 0 else None

        medians = {name: statistics.median(r["seconds"] for r in results)
                   for name, results in runs.items() if results}
        summary = {
            "messages": args.messages,
            "bytes_per_fetch": runs["libcurl"][0]["bytes"],
            "runs": args.runs,
            "fetch_median_s": medians,
            "ratio_vmime_over_libcurl": (medians["vmime"] / medians["libcurl"]) if "vmime" in medians else None,
            "messages_per_s": {name: args.messages / m for name, m in medians.items()},
            "idle": idle,
            "load_average": os.getloadavg(),
            "fetch_runs_s": {name: [round(r["seconds"], 4) for r in results] for name, results in runs.items()},
        }
        print(json.dumps(summary, indent=1))
    finally:
        servers("stop", directory)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
