#!/usr/bin/env python3
"""A scripted MCP server over stdio (newline-delimited JSON-RPC) for the client's tests.

Tools: `echo` (answers its `message`), `hang` (never answers), `crash` (exits at once,
status 7), `fail` (answers isError). It answers `initialize` with the revision it is given
(argument 1, default the client's), lists its tools two per page, and prints every message
it receives on stderr as `got: <method>`.
"""
import json
import sys

TOOLS = [{"name": n, "description": n, "inputSchema": {"type": "object"}} for n in ("echo", "hang", "crash", "fail")]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    revision = sys.argv[1] if len(sys.argv) > 1 else None
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
            page = {"tools": TOOLS[start:start + 2]}
            if start + 2 < len(TOOLS):
                page["nextCursor"] = str(start + 2)
            send({"jsonrpc": "2.0", "id": mid, "result": page})
        elif method == "tools/call":
            name = params["name"]
            if name == "echo":
                text = params["arguments"].get("message", "")
                send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
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
