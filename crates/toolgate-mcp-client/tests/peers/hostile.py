"""A hostile stdio MCP server (2025-11-25, stdlib only) whose results break the client's
limits: one over the 16 MiB message cap (with its id first or last, or last with no newline
after it) and one nested deeper
than a JSON decoder's recursion limit. `ok` answers normally, to show the connection lives on.
"""

import json
import sys

HUGE = 17 * 1024 * 1024


def tool(name):
    return {"name": name, "description": name, "inputSchema": {"type": "object"}}


def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    elif method == "tools/list":
        names = ["huge", "huge_id_last", "huge_unended", "deep", "ok"]
        result = {"tools": [tool(n) for n in names]}
    elif method == "tools/call" and msg["params"]["name"] == "huge":
        result = text_result("x" * HUGE)
    elif method == "tools/call" and msg["params"]["name"] == "huge_id_last":
        body = json.dumps(text_result("y" * HUGE))
        send('{"jsonrpc":"2.0","result":' + body + ',"id":' + json.dumps(rid) + "}")
        continue
    elif method == "tools/call" and msg["params"]["name"] == "huge_unended":
        # Over the cap, its id last, and no newline: the server then waits for more requests.
        body = json.dumps(text_result("z" * HUGE))
        sys.stdout.write('{"jsonrpc":"2.0","result":' + body + ',"id":' + json.dumps(rid) + "}")
        sys.stdout.flush()
        continue
    elif method == "tools/call" and msg["params"]["name"] == "deep":
        nested = "[" * 200 + "]" * 200
        send(
            '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":{"content":[],'
            '"structuredContent":{"deep":' + nested + "}}}"
        )
        continue
    elif method == "tools/call":
        result = text_result("fine")
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}}))
        continue
    send(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
