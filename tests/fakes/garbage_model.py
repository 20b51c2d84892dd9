#!/usr/bin/env python3
"""garbage_model: an OpenAI-compatible model server that answers garbage, for the storm tests.
Python 3 standard library only; listens on 127.0.0.1 only.

  garbage_model.py [--port N] [--mode MODE]

POST .../chat/completions picks its answer by the first `garbage-mode:NAME` found in the request
body (the customer's message carries it), else the current default mode:
  ok         a valid completion whose content is `--reply`'s text with {sender} filled in
  random     200, application/json, 2 KiB of random bytes
  html200    200 with an HTML page (a captive portal's login page)
  html5xx    503 with an HTML error page (a load balancer's), no Retry-After
  empty      200 with an empty body
  text       a well-formed completion whose content is random printable text
  cut        200 announcing 4,000 bytes, sending a random part of a JSON completion, then closing
  slow       200 without a length, then one byte every 0.2 s until the client goes away (or 10 min)
stdout is JSON lines: first {"event":"listening","port":N,"base_url":"http://127.0.0.1:N/v1"},
then one {"event":"request","t":epoch_seconds,"mode":MODE} per completion request.
Control endpoints (JSON): POST /_fake/mode {"mode"} sets the default mode; GET /_fake/requests
-> {"requests":[{"t","mode"}]}. Exit 0 on SIGINT/SIGTERM, 2 on bad flags.
"""
import argparse
import json
import os
import random
import re
import signal
import string
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("ok", "random", "html200", "html5xx", "empty", "text", "cut", "slow")
REPLY = ('{"accion":"enviar_mensaje","destinatario":"{sender}","contenido":"Sí, enviamos a todo México.",'
         '"prioridad":"media"}')
HTML_ERROR = (b"<!DOCTYPE html><html><head><title>503 Service Temporarily Unavailable</title></head>"
              b"<body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center>"
              b"</body></html>\n")
HTML_PORTAL = (b"<!DOCTYPE html><html><head><title>Sign in to the network</title></head><body>"
               b"<form method=post action=/login><input name=user><input type=password name=pass></form>"
               b"</body></html>\n")
MAX_BODY = 4 * 1024 * 1024


class State:
    def __init__(self, mode):
        self.lock = threading.Lock()
        self.mode = mode
        self.requests = []


def completion(content):
    return json.dumps({"id": "chatcmpl-garbage", "object": "chat.completion", "created": int(time.time()),
                       "model": "garbage", "choices": [{"index": 0, "finish_reason": "stop",
                                                        "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 10}}).encode()


def sender_of(body):
    # The sender in the agent's prompt, "... message from <sender>: ..." (as fake_model reads it).
    found = re.search(rb"message from ([^:\s]+):", body)
    return found.group(1).decode() if found else "0"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main

    def log_message(self, *args):
        pass

    def send_bytes(self, status, body, content_type="application/json", length=None, close=False):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is not None or body is not None:
            self.send_header("Content-Length", str(len(body) if length is None else length))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if body:
            self.wfile.write(body)
            self.wfile.flush()

    def do_GET(self):
        if self.path == "/_fake/requests":
            with self.state.lock:
                body = json.dumps({"requests": list(self.state.requests)}).encode()
            return self.send_bytes(200, body)
        self.send_bytes(404, b'{"error":"not found"}')

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self.send_bytes(413, b'{"error":"too large"}', close=True)
        body = self.rfile.read(length)
        if self.path == "/_fake/mode":
            mode = json.loads(body or b"{}").get("mode")
            if mode not in MODES:
                return self.send_bytes(400, b'{"error":"unknown mode"}')
            with self.state.lock:
                self.state.mode = mode
            return self.send_bytes(200, b'{"ok":true}')
        if not self.path.endswith("/chat/completions"):
            return self.send_bytes(404, b'{"error":"not found"}')
        found = re.search(rb"garbage-mode:([a-z0-9]+)", body)
        with self.state.lock:
            mode = found.group(1).decode() if found and found.group(1).decode() in MODES else self.state.mode
            event = {"t": time.time(), "mode": mode}
            self.state.requests.append(event)
        print(json.dumps(dict(event, event="request")), flush=True)
        try:
            getattr(self, "answer_" + mode)(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def answer_ok(self, body):
        self.send_bytes(200, completion(REPLY.replace("{sender}", sender_of(body))))

    def answer_random(self, _body):
        self.send_bytes(200, os.urandom(2048))

    def answer_html200(self, _body):
        self.send_bytes(200, HTML_PORTAL, "text/html")

    def answer_html5xx(self, _body):
        self.send_bytes(503, HTML_ERROR, "text/html")

    def answer_empty(self, _body):
        self.send_bytes(200, b"")

    def answer_text(self, _body):
        printable = string.ascii_letters + string.digits + " {}[]\":,"
        self.send_bytes(200, completion("".join(random.choice(printable) for _ in range(300))))

    def answer_cut(self, body):
        whole = completion(REPLY.replace("{sender}", sender_of(body)))
        self.send_bytes(200, None, length=4000, close=True)
        self.wfile.write(whole[:random.randrange(1, len(whole))])
        self.wfile.flush()

    def answer_slow(self, _body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(b"{")
        deadline = time.time() + 600
        while time.time() < deadline:
            time.sleep(0.2)
            self.wfile.write(b" ")
            self.wfile.flush()


def main(argv):
    parser = argparse.ArgumentParser(description="an OpenAI-compatible model server answering garbage")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", default="ok", choices=MODES)
    try:
        options = parser.parse_args(argv)
    except SystemExit:
        return 2
    Handler.state = State(options.mode)
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    port = server.server_address[1]
    print(json.dumps({"event": "listening", "port": port, "base_url": f"http://127.0.0.1:{port}/v1"}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
