#!/usr/bin/env python3
"""Customers' files end to end (docs/media.md): the real dispatchd with the fake Graph API
serving files (a media lookup, then a short-lived download URL, both with the bearer token).

- a photo (the webhook's sha256 in base64, as WhatsApp sends it), a PDF and a voice note
  are kept: their bytes in the store under their sha256, their sniffed types recorded;
- the voice note's first download URL has expired: it is looked up again and kept;
- a 50 MB document (the lookup states its size) is recorded over_cap, never downloaded;
- a file whose bytes are not the sha256 the webhook declared is recorded mismatch, not kept;
- a media id Graph no longer has is recorded expired;
- dispatchd SIGKILLed while a download is under way: after the restart the file is kept,
  once, with nothing half-written left;
- `dispatchctl erase` removes the photo's bytes from the database file and its WAL (SQLite).

Usage: media_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import base64
import hashlib
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
MARKER = b"PHOTO-MARKER-q81zv"
PHOTO = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + MARKER + os.urandom(300 * 1024) + MARKER
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\n" + b"x" * 5000 + b"\n%%EOF\n"
VOICE = b"OggS\x00\x02" + b"\x00" * 20 + b"OpusHead" + os.urandom(20 * 1024)
SLOW = b"\x89PNG\r\n\x1a\n" + os.urandom(64 * 1024)
SENDER, OTHER = "5215550300001", "5215550300002"


def hexdigest(data):
    return hashlib.sha256(data).hexdigest()


def file_of(stack, media_id):
    rows = stack.query("SELECT m.state, m.reason, m.size, m.sniffed_type, b.digest, m.attempts, m.type_mismatch"
                       " FROM media m LEFT JOIN media_blobs b ON b.id = m.blob_id WHERE m.provider_ref = ?",
                       media_id)
    return rows[0] if rows else None


def settled(stack):
    return stack.scalar("SELECT count(*) FROM media WHERE state = 'pending'") == 0


def media_flow():
    files = tempfile.TemporaryDirectory(prefix="dispatchd-media-")
    paths = {}
    for name, data in [("photo.jpg", PHOTO), ("invoice.pdf", PDF), ("voice.ogg", VOICE), ("slow.png", SLOW)]:
        paths[name] = os.path.join(files.name, name)
        with open(paths[name], "wb") as f:
            f.write(data)
    served = [f"7001:image/jpeg:{paths['photo.jpg']}",
              f"7002:application/pdf:{paths['invoice.pdf']}",
              f"7003:audio/ogg; codecs=opus:{paths['voice.ogg']}:stale=1",
              f"7004:application/pdf:{paths['invoice.pdf']}:size=52428800",
              f"7005:image/jpeg:{paths['photo.jpg']}",
              f"7007:image/png:{paths['slow.png']}:delay=4000"]
    stack = harness.Stack(BUILD, SOURCE, fake_args={"fake_graph": [a for spec in served for a in ("--media", spec)]},
                          extra_config={
        # The files' messages are not for the model here: ignored, so that erase may run.
        "connectors": {"whatsapp": {"message_types": {"image": "ignore", "document": "ignore", "audio": "ignore"}}}})
    try:
        stack.start_daemon()

        photo_b64 = base64.b64encode(hashlib.sha256(PHOTO).digest()).decode()
        sent = [
            harness.media_webhook("wamid.M1", SENDER, "image", "7001", "image/jpeg", photo_b64, {"caption": "roto"}),
            harness.media_webhook("wamid.M2", OTHER, "document", "7002", "application/pdf", hexdigest(PDF),
                          {"filename": "factura.pdf"}),
            harness.media_webhook("wamid.M3", OTHER, "audio", "7003", "audio/ogg; codecs=opus", hexdigest(VOICE),
                          {"voice": True}),
            harness.media_webhook("wamid.M4", OTHER, "document", "7004", "application/pdf", hexdigest(b"big"),
                          {"filename": "big.pdf"}),
            harness.media_webhook("wamid.M5", OTHER, "image", "7005", "image/jpeg", hexdigest(b"something else")),
            harness.media_webhook("wamid.M6", OTHER, "image", "7006", "image/jpeg", hexdigest(b"gone")),
        ]
        for body in sent:
            status, _ = stack.post_webhook(body)
            check("the webhook is answered 200 at once", status == 200, status)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM media") == 6 and settled(stack), timeout=60,
                         what="every file fetched or refused")

        photo = file_of(stack, "7001")
        check("photo: kept", photo and photo[0] == "stored", photo)
        check("photo: under its sha256 (declared in base64)", photo and photo[4] == hexdigest(PHOTO), photo)
        check("photo: its size and sniffed type", photo and photo[2] == len(PHOTO) and photo[3] == "image/jpeg", photo)
        pdf = file_of(stack, "7002")
        check("pdf: kept, sniffed as a PDF", pdf and pdf[0] == "stored" and pdf[3] == "application/pdf", pdf)
        voice = file_of(stack, "7003")
        check("voice note: kept after its expired URL, on the second attempt",
              voice and voice[0] == "stored" and voice[5] == 2 and voice[3] == "audio/ogg", voice)
        big = file_of(stack, "7004")
        check("50 MB document: over_cap", big and big[0] == "over_cap" and "52428800" in (big[1] or ""), big)
        mismatch = file_of(stack, "7005")
        check("another sha256: mismatch, not kept", mismatch and mismatch[0] == "mismatch" and mismatch[4] is None,
              mismatch)
        expired = file_of(stack, "7006")
        check("an id Graph no longer has: expired", expired and expired[0] == "expired", expired)

        requests = stack.graph_requests()
        downloads = [r for r in requests if r.get("target", "").startswith("/media-download/")]
        lookups = [r for r in requests if r.get("target", "").startswith("/v21.0/7")]
        check("every lookup and download was answered with the token (no 401)",
              all(r.get("answered") != 401 for r in downloads + lookups), downloads + lookups)
        check("the 50 MB document was never downloaded",
              not any(r["target"].startswith("/media-download/7004/") for r in downloads), downloads)
        check("the voice note was looked up twice (its first URL had expired)",
              len([r for r in lookups if r["target"].startswith("/v21.0/7003")]) == 2, lookups)
        check("each photo message's file kept once: the photo's bytes in one blob",
              stack.scalar("SELECT count(*) FROM media_blobs WHERE digest = ?", hexdigest(PHOTO)) == 1)
        check("the message itself went on as before (ignored)",
              stack.scalar("SELECT outcome FROM v_messages WHERE provider_message_id = 'wamid.M1'") == "ignored")
        check("every final state is in the audit trail",
              stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'media'") == 6)

        # SIGKILL with a download under way (the fake answers it after 4 s).
        status, _ = stack.post_webhook(harness.media_webhook("wamid.M7", OTHER, "image", "7007", "image/png", hexdigest(SLOW)))
        check("the slow file's webhook is answered 200", status == 200, status)
        stack.wait_until(lambda: any(r.get("target", "").startswith("/media-download/7007/")
                                     for r in stack.graph_requests()), what="the slow download to start")
        stack.daemon.stop(sig=signal.SIGKILL)
        stack.start_daemon()
        stack.wait_until(lambda: (file_of(stack, "7007") or [None])[0] == "stored", timeout=60,
                         what="the slow file kept after the restart")
        slow = file_of(stack, "7007")
        check("after kill -9: kept once, on a second download", slow[5] == 2 and slow[4] == hexdigest(SLOW), slow)
        check("after kill -9: no half-written bytes left",
              stack.scalar("SELECT count(*) FROM media_blobs WHERE digest IS NULL") == 0)
        check("after kill -9: the chunks are exactly the file",
              stack.scalar("SELECT sum(length(c.data)) FROM media_chunks c JOIN media_blobs b ON b.id = c.blob_id"
                           " WHERE b.digest = ?", hexdigest(SLOW)) == len(SLOW))
        check("the audit chain verifies", stack.audit_verify().returncode == 0)

        # Erasure: the photo's customer.
        done = stack.dispatchctl("erase", "--counterpart", SENDER, "--as", "dpo-test")
        check("erase succeeds", done.returncode == 0, done.stdout + done.stderr)
        check("erase: the photo's file is erased",
              (file_of(stack, "[erased]") or [None])[0] == "erased" and file_of(stack, "7001") is None)
        check("erase: the photo's bytes are gone from the store",
              stack.scalar("SELECT count(*) FROM media_blobs WHERE digest = ?", hexdigest(PHOTO)) == 0)
        if not stack.pg:
            stack.daemon.stop()
            raw = b""
            for suffix in ("", "-wal"):
                path = stack.db + suffix
                if os.path.exists(path):
                    with open(path, "rb") as f:
                        raw += f.read()
            check("erase: the photo's bytes are in neither the database file nor its WAL", MARKER not in raw)
        check("the audit chain verifies after the erasure", stack.audit_verify().returncode == 0)
    finally:
        stack.close()
        files.cleanup()


if __name__ == "__main__":
    harness.run_flows([media_flow])
