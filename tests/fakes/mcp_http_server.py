#!/usr/bin/env python3
"""A scripted MCP server over Streamable HTTP for the client's tests (stdlib only).

  mcp_http_server.py [--sse] [--token T]

Prints {"port": N} on stdout, then serves POST /mcp (JSON-RPC; with --sse every answer is a
text/event-stream), DELETE /mcp (ends the session), and control endpoints: POST
/control/expire forgets every session, GET /control/stats answers
{"initializes": N, "deletes": N, "bad_headers": N}. Tools as in mcp_script_server.py: echo,
hang (answers after 3 s), fail. It checks what the transport requires of a client: the
Accept header, the session id after initialize (404 without a known one), and the
MCP-Protocol-Version header after initialize (400 without it).
"""
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SSE = "--sse" in sys.argv
TOKEN = sys.argv[sys.argv.index("--token") + 1] if "--token" in sys.argv else None
TOOLS = [{"name": n, "description": n, "inputSchema": {"type": "object"}} for n in ("echo", "hang", "fail")]
lock = threading.Lock()
sessions = {}
stats = {"initializes": 0, "deletes": 0, "bad_headers": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

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
        else:
            self.reply(405)

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
