#!/usr/bin/env python3
"""A mail's attachments as customers' files end to end (docs/media.md, "Gmail"): the real
dispatchd polling fake_gmail.py, whose messages.get?format=full names each part and whose
messages.attachments.get serves the files (base64url, with the bearer token).

- a mail that is a PDF alone: the message goes on as before (the model, reading only its
  subject and the attachment's name, hands it to staff: escalated), and its PDF is kept under
  its sha256, sniffed application/pdf; staff download the exact bytes with a staff token
  (Content-Disposition: attachment) and with `dispatchctl media get`;
- an attachment Gmail no longer has (404): recorded expired with its reason; the message is
  answered as before;
- an attachment answered 503 once (Retry-After 1): kept on the second attempt;
- a video over its cap (media.max_bytes.video): over_cap from the size Gmail states, never
  downloaded.

Usage: gmail_media_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import email.message
import email.policy
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gmail_harness  # noqa: E402
import harness  # noqa: E402
from harness import check  # noqa: E402

BUILD, SOURCE = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SOURCE, "tests", "e2e", "gmail_media_scenario.json")
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\n" + os.urandom(300 * 1024) + b"\n%%EOF\n"
PHOTO = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + os.urandom(40 * 1024)
VIDEO = b"\x00\x00\x00\x18ftypmp42" + os.urandom(64 * 1024)
VIDEO_CAP = 16 * 1024


def mail_with(sender, subject, text, files):
    """An RFC 822 mail as a mail client writes it: `text` (None: no text part at all) and
    each (name, type, bytes) as a base64 attachment."""
    m = email.message.EmailMessage(policy=email.policy.SMTP)
    m["From"], m["To"], m["Subject"] = sender, gmail_harness.ADDRESS, subject
    m["Message-ID"] = f"<{sender.split('@')[0]}.{os.urandom(6).hex()}@mail.example>"
    m["Date"] = "Tue, 01 Dec 2026 10:00:00 +0000"
    if text is None and len(files) == 1:
        name, kind, data = files[0]
        m.set_content(data, maintype=kind.split("/")[0], subtype=kind.split("/")[1], filename=name)
        return m.as_bytes()
    m.set_content(text or "")
    for name, kind, data in files:
        m.add_attachment(data, maintype=kind.split("/")[0], subtype=kind.split("/")[1], filename=name)
    return m.as_bytes()


def files_of(stack, gmail_id):
    return stack.query("SELECT m.id, m.state, m.reason, m.kind, m.declared_type, m.filename, m.sniffed_type, m.size,"
                       " b.digest, m.attempts FROM media m JOIN inbox i ON i.id = m.message_id"
                       " LEFT JOIN media_blobs b ON b.id = m.blob_id WHERE i.provider_message_id = ?"
                       " ORDER BY m.position", gmail_id)


def staff_get(stack, path, token):
    request = urllib.request.Request(stack.url(path), headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def media_flow():
    config = {"media": {"max_bytes": {"video": VIDEO_CAP}}}
    with gmail_harness.started(BUILD, SOURCE, scenario=SCENARIO, extra_config=config) as (gmail, stack, _daemon):
        scan = gmail.deliver(mail_with("ana@cliente.example", "Escaneo", None,
                                       [("factura marzo.pdf", "application/pdf", PDF)]))
        gone = gmail.deliver(mail_with("beto@cliente.example", "Foto del paquete", "Les mando la foto.",
                                       [("paquete.jpg", "image/jpeg", PHOTO)]),
                             attachment_failures=[{"status": 404, "count": 100}])
        later = gmail.deliver(mail_with("carla@cliente.example", "Comprobante", "Adjunto el comprobante.",
                                        [("comprobante.pdf", "application/pdf", PDF)]),
                              attachment_failures=[{"status": 503, "count": 1, "retry_after": 1}])
        big = gmail.deliver(mail_with("dora@cliente.example", "Video", "Así llegó la caja.",
                                      [("caja.mp4", "video/mp4", VIDEO)]))

        check("the PDF-only mail is escalated, as before", stack.wait_outcome(scan["id"]) == "escalated")
        check("the mail whose photo is gone is answered, as before", stack.wait_outcome(gone["id"]) == "replied")
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM media WHERE state = 'pending'") == 0 and
                         stack.scalar("SELECT count(*) FROM media") == 4, timeout=60, what="every file settled")

        rows = files_of(stack, scan["id"])
        check("the PDF-only mail has one file", len(rows) == 1, rows)
        media_id, state, _reason, kind, declared, filename, sniffed, size, digest, _attempts = rows[0]
        check("its PDF is kept", state == "stored", rows[0])
        check("as a document, declared application/pdf, with its file name",
              (kind, declared, filename) == ("document", "application/pdf", "factura marzo.pdf"), rows[0])
        check("under its sha256, sniffed application/pdf, every byte",
              digest == hashlib.sha256(PDF).hexdigest() and sniffed == "application/pdf" and size == len(PDF), rows[0])

        token = stack.add_staff("ines")
        status, headers, body = staff_get(stack, f"/api/media/{media_id}", token)
        check("staff download it: 200, the exact bytes", status == 200 and body == PDF, (status, len(body)))
        check("as an attachment, never inline",
              headers.get("Content-Disposition", "").startswith("attachment") and
              headers.get("X-Content-Type-Options") == "nosniff", headers)
        check("without a token: 401", staff_get(stack, f"/api/media/{media_id}", "nope")[0] == 401)
        with tempfile.TemporaryDirectory(prefix="dispatchd-gmail-media-") as out:
            path = os.path.join(out, "scan.pdf")
            done = stack.dispatchctl("media", "get", str(media_id), "-o", path)
            with open(path, "rb") as f:
                check("dispatchctl media get writes the same bytes", done.returncode == 0 and f.read() == PDF,
                      done.stderr)

        rows = files_of(stack, gone["id"])
        check("the photo Gmail no longer has: expired, with the reason",
              len(rows) == 1 and rows[0][1] == "expired" and "404" in (rows[0][2] or "") and rows[0][3] == "image",
              rows)
        rows = files_of(stack, later["id"])
        check("the file answered 503 once: kept on the second attempt",
              len(rows) == 1 and rows[0][1] == "stored" and rows[0][9] == 2 and
              rows[0][8] == hashlib.sha256(PDF).hexdigest(), rows)
        rows = files_of(stack, big["id"])
        check("the video over its cap: over_cap, from the size Gmail states",
              len(rows) == 1 and rows[0][1] == "over_cap" and str(len(VIDEO)) in (rows[0][2] or "") and
              rows[0][3] == "video", rows)
        check("the same PDF twice is kept once",
              stack.scalar("SELECT count(*) FROM media_blobs WHERE digest = ?", hashlib.sha256(PDF).hexdigest()) == 1)

        requests = gmail.state()["requests"]
        downloads = [r for r in requests if "/attachments/" in r["path"]]
        parts = [r for r in requests if "format=full" in r["query"]]
        check("each file looked up with format=full, its fields limited",
              len(parts) >= 4 and all("fields=" in r["query"] for r in parts), parts)
        check("every download carried a valid token (no 401)", downloads and all(r["status"] != 401 for r in downloads),
              downloads)
        check("the video over its cap was never downloaded",
              not any(r["path"].startswith(f"/gmail/v1/users/me/messages/{big['id']}/attachments/") for r in downloads),
              downloads)
        check("the audit trail has each file's final state",
              stack.scalar("SELECT count(*) FROM v_audit WHERE event = 'media'") == 4)
        check("the audit chain verifies", stack.audit_verify().returncode == 0)


if __name__ == "__main__":
    harness.run_flows([media_flow])
