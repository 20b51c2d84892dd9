#!/usr/bin/env python3
"""A scripted MCP server over Streamable HTTP for the client's tests (stdlib only).

  mcp_http_server.py [--sse] [--token T] [--resume | --resume-never] [--retry MS]

Prints {"port": N} on stdout, then serves POST /mcp (JSON-RPC; with --sse every answer is a
text/event-stream), DELETE /mcp (ends the session), and control endpoints: POST
/control/expire forgets every session, GET /control/stats answers
{"initializes": N, "deletes": N, "bad_headers": N, "gets": N, "last_event_ids": [...],
"resume_delays_ms": [...], "gets_closed_by_client": N}. Tools as in mcp_script_server.py:
echo, hang (answers after 3 s), fail. It checks what the transport requires of a client: the
Accept header, the session id after initialize (404 without a known one), and the
MCP-Protocol-Version header after initialize (400 without it).

--resume: a tools/call's answer is an event stream that ends after one event with an id and
`retry: MS` (--retry, 300 by default), without the answer; a GET /mcp with that id as
Last-Event-ID gets the answer as an event and its stream is then held open (a comment every
100 ms) until the client closes it. --resume-never: each such GET gets one more event with a
new id and ends again without the answer. Either way it records each GET's Last-Event-ID and
the time from the end of the stream before it to the GET's arrival.
"""
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SSE = "--sse" in sys.argv
TOKEN = sys.argv[sys.argv.index("--token") + 1] if "--token" in sys.argv else None
RESUME = "--resume" in sys.argv
RESUME_NEVER = "--resume-never" in sys.argv
RETRY_MS = int(sys.argv[sys.argv.index("--retry") + 1]) if "--retry" in sys.argv else 300
TOOLS = [{"name": n, "description": n, "inputSchema": {"type": "object"}} for n in ("echo", "hang", "fail")]
lock = threading.Lock()
sessions = {}
stats = {"initializes": 0, "deletes": 0, "bad_headers": 0, "gets": 0, "last_event_ids": [], "resume_delays_ms": [],
         "gets_closed_by_client": 0}
# Resumable streams: event id -> (the answer still owed, when the stream before ended).
owed = {}
next_event = [0]


def new_event_id():
    with lock:
        next_event[0] += 1
        return "ev-%d" % next_event[0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes: without TCP_NODELAY the body waits out the
    # client's delayed ACK (about 40 ms a request).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type=None, headers=None):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def answer(self, message, headers=None):
        if SSE:
            body = b": stream\n\nid: 1\ndata: " + json.dumps(message).encode() + b"\n\n"
            self.reply(200, body, "text/event-stream", headers)
        else:
            self.reply(200, json.dumps(message).encode(), "application/json", headers)

    def authorized(self):
        if TOKEN and self.headers.get("Authorization") != "Bearer " + TOKEN:
            self.reply(401, b'{"error":"unauthorized"}', "application/json")
            return False
        return True

    def do_GET(self):
        if self.path == "/control/stats":
            with lock:
                self.reply(200, json.dumps(stats).encode(), "application/json")
        elif self.path == "/mcp" and (RESUME or RESUME_NEVER) and self.authorized():
            self.resume()
        else:
            self.reply(405)

    def headers_of_session(self, accept_needed):
        """The session's version when the request carries what the transport requires."""
        with lock:
            version = sessions.get(self.headers.get("Mcp-Session-Id"))
        ok = (version is not None and self.headers.get("MCP-Protocol-Version") == version
              and accept_needed in self.headers.get("Accept", ""))
        if not ok:
            with lock:
                stats["bad_headers"] += 1
        return ok

    def end_early(self, answer):
        """An event stream with one event (an id, a retry, no data) and its end: the answer is owed."""
        event_id = new_event_id()
        body = ("id: %s\nretry: %d\ndata:\n\n" % (event_id, RETRY_MS)).encode()
        self.reply(200, body, "text/event-stream")
        self.wfile.flush()
        with lock:
            owed[event_id] = (answer, time.monotonic())

    def resume(self):
        last = self.headers.get("Last-Event-ID")
        arrived = time.monotonic()
        with lock:
            stats["gets"] += 1
            stats["last_event_ids"].append(last)
            entry = owed.pop(last, None)
        if not self.headers_of_session("text/event-stream") or entry is None:
            return self.reply(400, b"Unknown session or Last-Event-ID")
        answer, ended = entry
        with lock:
            stats["resume_delays_ms"].append(round((arrived - ended) * 1000))
        if RESUME_NEVER:
            return self.end_early(answer)
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(("id: %s\ndata: %s\n\n" % (new_event_id(), json.dumps(answer))).encode())
            self.wfile.flush()
            for _ in range(200):
                time.sleep(0.1)
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with lock:
                stats["gets_closed_by_client"] += 1

    def do_DELETE(self):
        if self.path == "/mcp" and self.authorized():
            with lock:
                sessions.pop(self.headers.get("Mcp-Session-Id"), None)
                stats["deletes"] += 1
            self.reply(200)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/control/expire":
            with lock:
                sessions.clear()
            return self.reply(200)
        if self.path != "/mcp" or not self.authorized():
            return None if self.path == "/mcp" else self.reply(404)
        accept = self.headers.get("Accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            with lock:
                stats["bad_headers"] += 1
            return self.reply(406, b"Not Acceptable")
        message = json.loads(body)
        method = message.get("method", "")
        if method == "initialize":
            sid = uuid.uuid4().hex
            version = message["params"]["protocolVersion"]
            with lock:
                sessions[sid] = version
                stats["initializes"] += 1
            return self.answer({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-script", "version": "1"}}}, {"Mcp-Session-Id": sid})
        sid = self.headers.get("Mcp-Session-Id")
        with lock:
            version = sessions.get(sid)
        if version is None:
            return self.reply(404, b"Session not found")
        if self.headers.get("MCP-Protocol-Version") != version:
            with lock:
                stats["bad_headers"] += 1
            return self.reply(400, b"Bad MCP-Protocol-Version header")
        if "id" not in message:
            return self.reply(202)
        mid = message["id"]
        params = message.get("params") or {}
        if method == "tools/list":
            start = int(params.get("cursor", "0"))
            page = {"tools": TOOLS[start:start + 2]}
            if start + 2 < len(TOOLS):
                page["nextCursor"] = str(start + 2)
            return self.answer({"jsonrpc": "2.0", "id": mid, "result": page})
        if method == "tools/call" and (RESUME or RESUME_NEVER) and params["name"] == "echo":
            text = params["arguments"].get("message", "")
            return self.end_early({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        if method == "tools/call":
            name = params["name"]
            if name == "echo":
                text = params["arguments"].get("message", "")
                return self.answer({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
            if name == "fail":
                return self.answer({"jsonrpc": "2.0", "id": mid,
                                    "result": {"content": [{"type": "text", "text": "it failed"}], "isError": True}})
            if name == "hang":
                time.sleep(3)
                return self.answer({"jsonrpc": "2.0", "id": mid, "result": {"content": []}})
        return self.answer({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
