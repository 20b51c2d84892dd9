#!/usr/bin/env python3
"""Customers' files on the staff page in headless Chromium (docs/staff.md, "The staff page"
and "Customers' files"): the real dispatchd, the fake Graph API serving the files
(`--media`), each file a WhatsApp message of its own that the default message types escalate,
fetched and kept through the real pipeline (docs/media.md).

- a real PNG (a 64 x 48 picture), a real WAV (PCM that Chromium plays), a PDF, an SVG that
  declares itself image/png, an SVG declared image/svg+xml and an HTML page declared
  image/jpeg, each with a script that would open a dialog; and a photo Graph no longer has;
- on the page (media_test.mjs): the photo is shown (naturalWidth > 0) and opens full size,
  the WAV plays (play() resolves and the clip ends or moves on), the PDF is a download link,
  the SVGs and the HTML are download links, never an <img>, answered with
  Content-Disposition: attachment, and opening one directly downloads it: no script runs; the
  expired photo says so; the files come with the session cookie alone (without it: 401);
- the page's Content-Security-Policy is exactly the one docs/staff.md documents, and no
  securitypolicyviolation event fires (one made on purpose at the end shows the listener
  works).

Exit 77 (skipped) only when chromium or node is missing.

Usage: media_test.py BUILD_DIR SOURCE_DIR (on PostgreSQL with DISPATCHD_TEST_BACKEND=postgresql)
"""
import hashlib
import io
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile
import wave
import zlib

BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "tests", "browser"))
import browser_support as support  # noqa: E402
from browser_support import escalation_of, harness  # noqa: E402

WORK = support.work_dir(BUILD)
SENDER = "5215550400001"
SCREENSHOTS = ("media-image-1366", "media-files-1366", "media-audio-1366", "media-svg-1366", "media-image-375")
check = harness.check


def png(width, height):
    """A real PNG: 8-bit RGB, a colour per pixel."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)

    rows = b"".join(b"\x00" + b"".join(bytes((4 * x % 256, 5 * y % 256, 200)) for x in range(width))
                    for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def wav(seconds=0.6, rate=8000):
    """A real WAV: 16-bit mono PCM, a 440 Hz tone."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / rate)))
                               for i in range(int(seconds * rate))))
    return out.getvalue()


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><script>alert("svg ran")</script>'
       b'<rect width="40" height="40" fill="red"/></svg>')
HTML = b"<!doctype html><html><body><script>alert('html ran')</script><p>not an image</p></body></html>"

# name: (media id at Graph, webhook type, declared type, bytes or None (Graph does not have it), extra)
FILES = {
    "png": ("8101", "image", "image/png", png(64, 48), {"caption": "la caja rota"}),
    "wav": ("8102", "audio", "audio/wav", wav(), {}),
    "pdf": ("8103", "document", "application/pdf", PDF, {"filename": "factura.pdf"}),
    "svg_png": ("8104", "image", "image/png", SVG, {}),
    "svg": ("8105", "image", "image/svg+xml", SVG, {}),
    "html": ("8106", "image", "image/jpeg", HTML, {}),
    "gone": ("8107", "image", "image/jpeg", None, {}),
}


def documented_csp():
    """The page's Content-Security-Policy as docs/staff.md states it."""
    with open(os.path.join(SOURCE, "docs", "staff.md"), encoding="utf-8") as f:
        found = re.findall(r"^Content-Security-Policy: (default-src 'none'; script-src .*)$", f.read(), re.M)
    check("docs/staff.md states the page's CSP once", len(found) == 1, found)
    return found[0] if found else ""


def media_on_the_page(chromium, node):
    folder = tempfile.TemporaryDirectory(prefix="dispatchd-browser-media-")
    served = []
    for name, (ref, _, mime, data, _) in FILES.items():
        if data is None:
            continue
        path = os.path.join(folder.name, name)
        with open(path, "wb") as f:
            f.write(data)
        served += ["--media", f"{ref}:{mime}:{path}"]
    stack = harness.Stack(BUILD, SOURCE, fake_args={"fake_graph": served})
    try:
        stack.start_daemon()
        token = stack.add_staff("ana")
        for name, (ref, kind, mime, data, extra) in FILES.items():
            digest = hashlib.sha256(data or b"gone").hexdigest()
            status, _ = stack.post_webhook(harness.media_webhook(f"wamid.BM{ref}", SENDER, kind, ref, mime, digest,
                                                                 extra))
            check(f"{name}: the webhook is accepted", status == 200, status)
        stack.wait_until(lambda: stack.scalar("SELECT count(*) FROM media") == len(FILES) and
                         stack.scalar("SELECT count(*) FROM media WHERE state = 'pending'") == 0, timeout=60,
                         what="every file fetched or refused")
        stack.wait_until(lambda: all(escalation_of(stack, f"wamid.BM{f[0]}") for f in FILES.values()), timeout=60,
                         what="every file's message escalated")
        cases, media = {}, {}
        for name, (ref, *_rest) in FILES.items():
            cases[name] = escalation_of(stack, f"wamid.BM{ref}")[0]
            media[name], state, sniffed = stack.query("SELECT id, state, sniffed_type FROM media WHERE provider_ref = ?",
                                                      ref)[0]
            want = ("expired", None) if name == "gone" else ("stored", {
                "png": "image/png", "wav": "audio/wav", "pdf": "application/pdf", "svg_png": "image/svg+xml",
                "svg": "image/svg+xml", "html": "text/html"}[name])
            check(f"{name}: {want[0]}, sniffed {want[1]}", (state, sniffed or None) == want, (state, sniffed))

        shots = os.path.join(WORK, "screenshots", "media")
        shutil.rmtree(shots, ignore_errors=True)
        env = dict(os.environ, STAFF_URL=stack.url(""), STAFF_A="ana", STAFF_A_TOKEN=token, CASES=json.dumps(cases),
                   MEDIA=json.dumps(media), CSP=documented_csp(), SCREENSHOTS=shots, CHROMIUM=chromium)
        code = support.run_node([node, os.path.join(WORK, "media_test.mjs")], WORK, env)
        check("the browser checks (media_test.mjs)", code == 0, f"exit {code}")
        check("nothing was sent to the customer", stack.graph_messages() == [], stack.graph_messages())
        check("the audit chain verifies", stack.audit_verify().returncode == 0)
        support.check_screenshots(shots, SCREENSHOTS)
    except Exception:
        print("media:", stack.query("SELECT id, provider_ref, state, reason, sniffed_type FROM media"))
        print("daemon:", "\n".join(stack.daemon.lines[-20:]) if stack.daemon else "")
        raise
    finally:
        stack.close()
        folder.cleanup()


if __name__ == "__main__":
    sys.exit(support.main(BUILD, media_on_the_page))
