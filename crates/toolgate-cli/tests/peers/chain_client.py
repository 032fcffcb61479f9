"""One MCP client (the Python SDK, default mode) asks server-everything the same questions
directly and through `toolgate serve`, and prints both answers for the Rust test to compare.

Usage: chain_client.py --url http://127.0.0.1:PORT/mcp --prefix mcp__everything__
                       --command NODE --arg SERVER_JS --arg stdio

Prints {"direct": {...}, "via": {...}}, each with the negotiated protocol version and every
call's result as the SDK parsed it (model_dump by alias, without unset fields).
"""

import argparse
import asyncio
import json

from mcp import Client, StdioServerParameters

CALLS = [
    ("get-annotated-message", {"messageType": "success", "includeImage": True}),
    ("get-annotated-message", {"messageType": "error"}),
    ("get-resource-links", {"count": 3}),
    ("get-structured-content", {"location": "New York"}),
    ("get-tiny-image", {}),
]


async def ask(server, prefix):
    async with Client(server) as c:
        results = []
        for name, args in CALLS:
            result = await c.call_tool(prefix + name, args)
            dumped = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
            # The era's framing, not content: a 2026-07-28 answer says resultType "complete",
            # the server (speaking 2025-11-25 to a direct client) has no such field.
            dumped.pop("resultType", None)
            results.append(dumped)
        return {"protocol": c.protocol_version, "results": results}


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--arg", action="append", default=[])
    a = p.parse_args()
    direct = await ask(StdioServerParameters(command=a.command, args=a.arg), "")
    via = await ask(a.url, a.prefix)
    print(json.dumps({"direct": direct, "via": via}))


asyncio.run(main())
