#!/usr/bin/env python3
"""fake_hook: a fake incoming-webhook receiver (Slack/Mattermost style) on 127.0.0.1, for the
escalation notification tests. Python 3 standard library only.

  fake_hook.py [--port N] [--address A]

stdout: one JSON line, {"event":"listening","port":N,"url":"http://127.0.0.1:N/hooks/test"}.
Exit 0 on SIGINT/SIGTERM. Every POST outside /_fake/ is recorded and answered 200 "ok" (as
Slack does), unless told otherwise. "Down" is a stopped process: start it again with the same
--port and the sender's next try connects.

Control endpoints (JSON in and out):
  POST /_fake/fail {"status": 500, "count": 1, "retry_after"?: seconds}
                       the next `count` POSTs are recorded and answered `status`
  GET  /_fake/state -> {"posts": [{"path", "content_type", "body" (the raw text), "json" (parsed,
                       or null), "status" (what was answered)}]}
  POST /_fake/reset    forget the posts and any failures scripted
"""

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1024 * 1024


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.posts = []
        self.failures = []  # (status, retry_after) for the next POSTs, in order

    def reset(self):
        with self.lock:
            self.posts.clear()
            self.failures.clear()


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # stdout carries the JSON lines only
        pass

    def _answer(self, status, body, content_type="application/json", headers=None):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return None
        return self.rfile.read(length)

    def do_GET(self):
        if self.path == "/_fake/state":
            with STATE.lock:
                return self._answer(200, json.dumps({"posts": STATE.posts}))
        self._answer(404, json.dumps({"error": "not found"}))

    def do_POST(self):
        raw = self._body()
        if raw is None:
            return self._answer(413, json.dumps({"error": "too large"}))
        if self.path == "/_fake/reset":
            STATE.reset()
            return self._answer(200, "{}")
        if self.path == "/_fake/fail":
            order = json.loads(raw or b"{}")
            with STATE.lock:
                for _ in range(int(order.get("count", 1))):
                    STATE.failures.append((int(order.get("status", 500)), order.get("retry_after")))
            return self._answer(200, "{}")
        text = raw.decode("utf-8", errors="replace")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        with STATE.lock:
            status, retry_after = STATE.failures.pop(0) if STATE.failures else (200, None)
            STATE.posts.append({"path": self.path, "content_type": self.headers.get("Content-Type"), "body": text,
                                "json": parsed, "status": status})
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        self._answer(status, "ok" if status == 200 else "error", "text/plain", headers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--address", default="127.0.0.1")
    args = parser.parse_args()
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer((args.address, args.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(json.dumps({"event": "listening", "port": port, "url": f"http://{args.address}:{port}/hooks/test"}),
          flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
