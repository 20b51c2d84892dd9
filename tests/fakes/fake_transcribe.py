#!/usr/bin/env python3
"""A fake OpenAI-compatible speech-to-text endpoint for the tests: POST /v1/audio/transcriptions
on 127.0.0.1, as OpenAI documents it (multipart/form-data with `file`, `model` and
`response_format`; the answer {"text": ...} for response_format json).

  fake_transcribe.py --key KEY [--port N] [--text TEXT] [--transcript SHA256=TEXT ...]
                     [--fail SHA256=STATUS[xN] ...]

- every request needs `Authorization: Bearer KEY` (else 401, OpenAI's error shape);
- a body that is not multipart/form-data with a file part and a model is a 400;
- a file whose sha256 (hex) is named by --transcript gets that text, any other --text
  (default "hola");
- --fail SHA256=503x2 answers that file's first 2 requests 503 (then the transcript);
  --fail SHA256=400 answers every request for it 400; without xN, every request fails;
- 503 and 429 carry `Retry-After: 1`.

One JSON line per event on stdout: first {"event":"listening","port":N,"base_url":...} (the
base URL ends in /v1, as OpenAI's does), then per request {"event":"request","path",
"authorized","model","response_format","filename","content_type","sha256","size","answered"}.
"""
import argparse
import email.parser
import email.policy
import hashlib
import http.server
import json
import sys
import threading


def parse_multipart(content_type, body):
    """The form's parts as {name: (filename, content_type, bytes)}; None when it is not multipart/form-data."""
    if not content_type.lower().startswith("multipart/form-data"):
        return None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\nMIME-Version: 1.0\r\n\r\n" + body)
    if not message.is_multipart():
        return None
    parts = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        parts[name] = (part.get_filename(), part.get_content_type(), part.get_payload(decode=True) or b"")
    return parts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="hola")
    parser.add_argument("--transcript", action="append", default=[])
    parser.add_argument("--fail", action="append", default=[])
    args = parser.parse_args()
    transcripts = dict(item.split("=", 1) for item in args.transcript)
    failures = {}  # sha256 -> [status, times left or None for always]
    for item in args.fail:
        sha, spec = item.split("=", 1)
        status, _, times = spec.partition("x")
        failures[sha] = [int(status), int(times) if times else None]
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body, headers=()):
            data = json.dumps(body, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            event = {"event": "request", "path": self.path,
                     "authorized": self.headers.get("Authorization") == "Bearer " + args.key}
            parts = parse_multipart(self.headers.get("Content-Type", ""), body) if self.path == "/v1/audio/transcriptions" else None
            if parts is not None:
                file = parts.get("file")
                event.update(model=parts.get("model", (None, None, b""))[2].decode(errors="replace"),
                             response_format=parts.get("response_format", (None, None, b""))[2].decode(errors="replace"),
                             filename=file[0] if file else None, content_type=file[1] if file else None,
                             sha256=hashlib.sha256(file[2]).hexdigest() if file else None,
                             size=len(file[2]) if file else None)
            status, reply, headers = 200, None, []
            if self.path != "/v1/audio/transcriptions":
                status, reply = 404, {"error": {"message": "Not found", "type": "invalid_request_error"}}
            elif not event["authorized"]:
                status, reply = 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
            elif parts is None or "file" not in parts or not event.get("model"):
                status, reply = 400, {"error": {"message": "Invalid multipart form", "type": "invalid_request_error"}}
            else:
                with lock:
                    failing = failures.get(event["sha256"])
                    if failing and (failing[1] is None or failing[1] > 0):
                        status = failing[0]
                        if failing[1] is not None:
                            failing[1] -= 1
                if status != 200:
                    reply = {"error": {"message": f"scripted {status}", "type": "server_error"}}
                    if status in (429, 503):
                        headers.append(("Retry-After", "1"))
                else:
                    reply = {"text": transcripts.get(event["sha256"], args.text)}
            event["answered"] = status
            with lock:  # one whole line at a time: requests are answered on threads of their own
                sys.stdout.write(json.dumps(event) + "\n")
                sys.stdout.flush()
            self.answer(status, reply, headers)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    print(json.dumps({"event": "listening", "port": port, "base_url": f"http://127.0.0.1:{port}/v1"}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
