#!/usr/bin/env python3
"""A scripted MCP server over stdio (newline-delimited JSON-RPC) for the client's tests.

Tools: `echo` (answers its `message`), `hang` (never answers), `crash` (exits at once,
status 7), `fail` (answers isError). It answers `initialize` with the revision it is given
(argument 1, default the client's; "-" for the client's), lists its tools two per page, and
prints every message it receives on stderr as `got: <method>`.

With MCP_RECORDS naming a file holding a JSON object (id -> text) in its environment, it
also lists `record` ({"id": string}): the text stored under `id`, or isError when there is
none; the records are data a business's system holds, e.g. poisoned ones (the injection suite).

With MCP_CALLS naming a file, it also lists `book` (any arguments): each call is appended
to that file first, as one JSON line {"key": the call's _meta "dispatchd/idempotency_key",
"arguments": ...}, then answered "booked" (after 60 s when an argument's text holds
"lento", so that a test can kill the caller mid-call).

With a second argument, a file holding a JSON object: `echo`'s inputSchema is read from it
at every listing, and when the file changes the server sends
`notifications/tools/list_changed` (checked every 50 ms). With the object {"drop": true}
`echo` is not listed at all.
"""
import json
import os
import sys
import threading
import time

OUT = threading.Lock()

TOOLS = [{"name": n, "description": n, "inputSchema": {"type": "object"}} for n in ("echo", "hang", "crash", "fail")]


def send(message):
    with OUT:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


RECORD = {"name": "record", "description": "record", "inputSchema": {
    "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}


BOOK = {"name": "book", "description": "book", "inputSchema": {"type": "object"}}


def tools(schema_file):
    extra = ([RECORD] if os.environ.get("MCP_RECORDS") else []) + ([BOOK] if os.environ.get("MCP_CALLS") else [])
    if extra:
        return TOOLS + extra
    if not schema_file:
        return TOOLS
    with open(schema_file) as f:
        schema = json.load(f)
    if schema.get("drop"):
        return [t for t in TOOLS if t["name"] != "echo"]
    return [dict(t, inputSchema=schema) if t["name"] == "echo" else t for t in TOOLS]


def watch(schema_file):
    """Sends list_changed whenever the schema file's contents change."""
    def read():
        try:
            with open(schema_file) as f:
                return f.read()
        except OSError:
            return None
    seen = read()
    while True:
        time.sleep(0.05)
        now = read()
        if now != seen and now:
            seen = now
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def main():
    revision = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    schema_file = sys.argv[2] if len(sys.argv) > 2 else None
    if schema_file:
        threading.Thread(target=watch, args=(schema_file,), daemon=True).start()
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method", "")
        sys.stderr.write(f"got: {method}\n")
        sys.stderr.flush()
        if "id" not in message:
            continue
        mid = message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": revision or params["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "script", "version": "1"}}})
        elif method == "tools/list":
            start = int(params.get("cursor", "0"))
            listed = tools(schema_file)
            page = {"tools": listed[start:start + 2]}
            if start + 2 < len(listed):
                page["nextCursor"] = str(start + 2)
            send({"jsonrpc": "2.0", "id": mid, "result": page})
        elif method == "tools/call":
            name = params["name"]
            if name == "echo":
                text = params["arguments"].get("message", "")
                send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
            elif name == "book" and os.environ.get("MCP_CALLS"):
                key = (params.get("_meta") or {}).get("dispatchd/idempotency_key", "")
                with open(os.environ["MCP_CALLS"], "a") as f:
                    f.write(json.dumps({"key": key, "arguments": params["arguments"]}) + "\n")
                if "lento" in json.dumps(params["arguments"]):
                    time.sleep(60)
                send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "booked"}]}})
            elif name == "record" and os.environ.get("MCP_RECORDS"):
                with open(os.environ["MCP_RECORDS"]) as f:
                    records = json.load(f)
                key = params["arguments"].get("id", "")
                found = key in records
                send({"jsonrpc": "2.0", "id": mid, "result": {
                    "content": [{"type": "text", "text": records[key] if found else "no record " + key}],
                    "isError": not found}})
            elif name == "fail":
                send({"jsonrpc": "2.0", "id": mid,
                      "result": {"content": [{"type": "text", "text": "it failed"}], "isError": True}})
            elif name == "crash":
                sys.exit(7)
            elif name == "hang":
                pass
            else:
                send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "Unknown tool: " + name}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
