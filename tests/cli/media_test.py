#!/usr/bin/env python3
"""Black-box test of `dispatchctl media get` (docs/cli.md): a kept file written to a file or
to standard output, byte for byte, over several chunks; a file not kept (exit 1, its state
named); usage errors (exit 2); `dispatchctl trail` listing the message's files (Markdown and
JSON). The database is migrated by dispatchctl and its rows written
as the store writes them (store/media.h's tables).

Usage: media_test.py DISPATCHCTL
"""
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

CTL = sys.argv[1]
failures = []


def check(name, condition, detail=""):
    print(("pass " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))
    if not condition:
        failures.append(name)


def ctl(*args):
    return subprocess.run([CTL, *args], capture_output=True, timeout=60)


with tempfile.TemporaryDirectory(prefix="dispatchctl-media-") as tmp:
    db = os.path.join(tmp, "d.db")
    check("migrate", ctl("--db", db, "migrate").returncode == 0)
    data = bytes(range(256)) * 3000  # 768,000 bytes: three chunks of 256 KiB and a tail
    chunk = 256 * 1024
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO inbox (id, channel, provider_message_id, conversation_id, sender, received_at, text,"
                  " raw_payload) VALUES (1, 'whatsapp', 'wamid.1', '34600', '34600', '2026-12-01T00:00:00Z',"
                  " '[document]', '{}')")
        c.execute("INSERT INTO media_blobs (id, digest, size, created_at) VALUES (1, ?, ?, '2026-12-01T00:00:00Z')",
                  (hashlib.sha256(data).hexdigest(), len(data)))
        for seq, at in enumerate(range(0, len(data), chunk)):
            c.execute("INSERT INTO media_chunks (blob_id, seq, data) VALUES (1, ?, ?)", (seq, data[at:at + chunk]))
        c.execute("INSERT INTO media (id, message_id, position, kind, provider_ref, declared_type, filename, state,"
                  " blob_id, size, sniffed_type, created_at, fetched_at) VALUES (5, 1, 0, 'document', 'r1',"
                  " 'application/pdf', 'factura.pdf', 'stored', 1, ?, 'application/pdf', '2026-12-01T00:00:00Z',"
                  " '2026-12-01T00:00:01Z')", (len(data),))
        c.execute("INSERT INTO media (id, message_id, position, kind, provider_ref, declared_type, state, reason,"
                  " created_at) VALUES (6, 1, 1, 'document', 'r2', 'application/pdf', 'over_cap',"
                  " 'larger than its cap of 26214400 bytes', '2026-12-01T00:00:00Z')")

    out = os.path.join(tmp, "out.pdf")
    run = ctl("--db", db, "media", "get", "5", "-o", out)
    check("get: exit 0", run.returncode == 0, run.stderr)
    with open(out, "rb") as f:
        check("get: the file's bytes, every one", f.read() == data)
    check("get: says what it wrote", b"768000 bytes" in run.stderr and hashlib.sha256(data).hexdigest().encode()
          in run.stderr, run.stderr)
    run = ctl("--db", db, "media", "get", "5", "--output", "-")
    check("get -: the bytes on standard output", run.returncode == 0 and run.stdout == data)
    run = ctl("--db", db, "media", "get", "6", "-o", os.path.join(tmp, "no.pdf"))
    check("a file not kept: exit 1 naming its state and reason",
          run.returncode == 1 and b"over_cap" in run.stderr and b"26214400" in run.stderr, run.stderr)
    check("a file not kept: nothing written", not os.path.exists(os.path.join(tmp, "no.pdf")))
    run = ctl("--db", db, "media", "get", "99", "-o", out)
    check("no such file: exit 1", run.returncode == 1 and b"no file 99" in run.stderr, run.stderr)
    for name, args in [("no -o", ["media", "get", "5"]), ("bad id", ["media", "get", "x5", "-o", out]),
                       ("no verb", ["media", "5", "-o", out]), ("unknown verb", ["media", "list", "5", "-o", out])]:
        run = ctl("--db", db, *args)
        check(f"usage: {name}: exit 2", run.returncode == 2, run.stderr)
    run = ctl("--help")
    check("help names media get", b"media get MEDIA_ID -o FILE" in run.stdout + run.stderr)

    # The message's trail lists its files: kind, state, declared and sniffed type, size, sha256, reason.
    digest = hashlib.sha256(data).hexdigest()
    run = ctl("--db", db, "trail", "1")
    md = run.stdout.decode()
    check("trail: exit 0", run.returncode == 0, run.stderr)
    check("trail: a Files section after the inbound message",
          md.find("## Inbound message") < md.find("## Files") < md.find("## Context given to the model"), md)
    check("trail: the kept file's row",
          f"| 5 | document | factura.pdf | stored | application/pdf | application/pdf | {len(data)} | {digest} | - |"
          in md, md)
    check("trail: the file not kept, with its reason",
          "| 6 | document | - | over\\_cap | application/pdf | - | - | - | larger than its cap of 26214400 bytes |"
          in md, md)
    run = ctl("--db", db, "trail", "1", "--json")
    check("trail --json: exit 0", run.returncode == 0, run.stderr)
    listed = json.loads(run.stdout)["media"] if run.returncode == 0 else []
    check("trail --json: both files, as stored",
          [(f["media_id"], f["kind"], f["state"], f["declared_type"], f["sniffed_type"], f["size"], f["sha256"],
            f["reason"]) for f in listed] ==
          [(5, "document", "stored", "application/pdf", "application/pdf", len(data), digest, None),
           (6, "document", "over_cap", "application/pdf", None, None, None, "larger than its cap of 26214400 bytes")],
          listed)

print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all passed'}")
sys.exit(1 if failures else 0)
