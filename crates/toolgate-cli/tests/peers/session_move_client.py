"""A 2025-11-25 session (raw Streamable HTTP) opened on one `toolgate serve` replica and
continued on another: initialize and initialized on A, then tools/list and tools/call on B
with A's Mcp-Session-Id, then DELETE on B.

Usage: session_move_client.py --a http://127.0.0.1:PORT/mcp --b http://127.0.0.1:PORT/mcp --tool NAME

Prints {"session", "listed" (names B listed), "called" (B's tools/call result),
"deleted" (B's status for DELETE), "after" (B's status for a request in the deleted session)}.
"""

import argparse
import asyncio
import json

import httpx2 as httpx
from raw_session import answer, open_session


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--tool", required=True)
    a = p.parse_args()
    async with httpx.AsyncClient(timeout=60) as h:
        headers = await open_session(h, a.a, "session-move")
        session = headers["mcp-session-id"]
        listed = answer(await h.post(a.b, headers=headers,
                                     json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), 2)
        called = answer(await h.post(a.b, headers=headers, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": a.tool, "arguments": {"path": "."}}}), 3)
        deleted = await h.delete(a.b, headers=headers)
        after = await h.post(a.b, headers=headers,
                             json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    print(json.dumps({
        "session": session,
        "listed": [t["name"] for t in listed.get("result", {}).get("tools", [])],
        "listed_raw": listed if "result" not in listed else None,
        "called": called.get("result"),
        "called_raw": called if "result" not in called else None,
        "deleted": deleted.status_code,
        "after": after.status_code,
    }))


asyncio.run(main())
