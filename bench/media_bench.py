#!/usr/bin/env python3
"""Customers' files through the real dispatchd (docs/media.md): how fast media messages are
stored, fetched from the fake Graph API and kept, and how much memory dispatchd needs while
large documents stream through it.

Two phases, each on a fresh stack (tests/e2e/harness.py: fake_graph, fake_model, dispatchd on
SQLite, or PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql):
  photos     COUNT image messages, each with its own 100 KiB photo: webhooks posted as fast
             as dispatchd answers them, then the wait until every file is kept. Reports
             messages/s from the first webhook to the last file kept.
  documents  DOCS documents of DOC_MIB MiB each (under media.max_bytes.document, raised to
             fit), and one of 3 x DOC_MIB MiB over the cap whose lookup states no size, so its
             download streams until the cap stops it. Reports dispatchd's peak RSS (VmHWM) against
             its RSS before the phase: the files go to the store a chunk at a time, so the
             peak must not grow with the files' sizes.
A benchmark, not a test: it fails only when a file is not kept or refused as expected.
Timings on shared machines are noisy: compare runs of one machine, not numbers across.

Usage: media_bench.py BUILD_DIR SOURCE_DIR [--count N] [--docs N] [--doc-mib N] [--json FILE]
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import harness  # noqa: E402


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def stack_with(build, source, served, extra=None):
    config = {"connectors": {"whatsapp": {"message_types": {"image": "ignore", "document": "ignore"}}}}
    if extra:
        harness.merge(config, extra)
    return harness.Stack(build, source, quiet_graph=True, extra_config=config,
                         fake_args={"fake_graph": [a for spec in served for a in ("--media", spec)]})


def photos(build, source, files, count):
    photo = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
    served = []
    for i in range(count):
        path = os.path.join(files, f"p{i}.jpg")
        with open(path, "wb") as f:
            f.write(photo + os.urandom(100 * 1024))
        served.append(f"{100000 + i}:image/jpeg:{path}")
    stack = stack_with(build, source, served)
    try:
        stack.start_daemon()
        started = time.monotonic()
        for i in range(count):
            status, _ = stack.post_webhook(harness.media_webhook(f"wamid.P{i}", f"52155504{i:05d}", "image",
                                                         str(100000 + i), "image/jpeg"))
            if status != 200:
                raise SystemExit(f"webhook {i} answered {status}")
        posted = time.monotonic() - started
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM media WHERE state = 'stored'") == count,
                         timeout=600, what="every photo kept")
        elapsed = time.monotonic() - started
        return {"photos": count, "webhooks_s": round(posted, 2), "kept_s": round(elapsed, 2),
                "messages_per_s": round(count / elapsed, 1)}
    finally:
        stack.close()


def documents(build, source, files, docs, doc_mib):
    size = doc_mib * 1024 * 1024
    served = []
    for i in range(docs):
        path = os.path.join(files, f"d{i}.pdf")
        with open(path, "wb") as f:
            f.write(b"%PDF-1.4\n" + os.urandom(size - 9))
        served.append(f"{200000 + i}:application/pdf:{path}")
    big = os.path.join(files, "big.pdf")
    with open(big, "wb") as f:
        f.write(b"%PDF-1.4\n" + os.urandom(3 * size))
    served.append(f"299999:application/pdf:{big}:nosize")
    stack = stack_with(build, source, served, {"media": {"max_bytes": {"document": size + 1024}}})
    try:
        stack.start_daemon()
        pid = stack.daemon.proc.pid
        time.sleep(1)
        before = rss_kib(pid, "VmRSS")
        started = time.monotonic()
        for i in range(docs):
            stack.post_webhook(harness.media_webhook(f"wamid.D{i}", f"52155505{i:05d}", "document", str(200000 + i),
                                             "application/pdf"))
        stack.post_webhook(harness.media_webhook("wamid.DBIG", "5215550599999", "document", "299999", "application/pdf"))
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM media WHERE state <> 'pending'") == docs + 1,
                         timeout=900, what="every document kept or refused")
        elapsed = time.monotonic() - started
        kept = stack.scalar("SELECT count(*) FROM media WHERE state = 'stored'")
        over = stack.scalar("SELECT state FROM media WHERE provider_ref = '299999'")
        if kept != docs or over != "over_cap":
            raise SystemExit(f"documents: {kept} kept of {docs}, the big one {over}")
        peak = rss_kib(pid, "VmHWM")
        return {"documents": docs, "doc_mib": doc_mib, "streamed_mib": docs * doc_mib + doc_mib,
                "kept_s": round(elapsed, 2), "mib_per_s": round(docs * doc_mib / elapsed, 1),
                "rss_before_mib": round(before / 1024, 1), "peak_rss_mib": round(peak / 1024, 1),
                "peak_over_before_mib": round((peak - before) / 1024, 1)}
    finally:
        stack.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("source")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--docs", type=int, default=4)
    parser.add_argument("--doc-mib", type=int, default=20)
    parser.add_argument("--json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="media-bench-") as files:
        result = {"photos": photos(args.build, args.source, files, args.count),
                  "documents": documents(args.build, args.source, files, args.docs, args.doc_mib),
                  "backend": os.environ.get("DISPATCHD_TEST_BACKEND", "sqlite"), "cpus": os.cpu_count()}
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
