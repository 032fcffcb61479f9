#!/usr/bin/env python3
"""A minimal stdio MCP server for the soak test: one tool, `echo`, answered at once.

Plain JSON-RPC lines on stdin/stdout and only the standard library, so it runs under the
stdio sandbox with nothing but the system Python. Its argv carries a marker the soak uses to
find children left behind.
"""
import json
import sys


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


TOOL = {
    "name": "echo",
    "description": "Returns its text.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "annotations": {"readOnlyHint": True},
}

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        continue
    if method == "initialize":
        version = msg.get("params", {}).get("protocolVersion", "2025-11-25")
        reply(msg_id, {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "soak-echo", "version": "1"},
        })
    elif method == "tools/list":
        reply(msg_id, {"tools": [TOOL]})
    elif method == "tools/call":
        text = msg.get("params", {}).get("arguments", {}).get("text", "")
        reply(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
    elif method == "ping":
        reply(msg_id, {})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                                     "error": {"code": -32601, "message": "method not found"}}) + "\n")
        sys.stdout.flush()
