"""A Python SDK client in its default mode (2026-07-28) listens to `toolgate serve` for tool
list changes, then makes a federated server add a tool, and reports what it heard.

Usage: listen_client.py --url http://127.0.0.1:PORT/mcp --adder mcp__py__add_tool --name NEW

Prints {"protocol", "honored", "heard", "listed"}: the negotiated version, the filter the
server acknowledged, whether a tools/list_changed event arrived within 30 s of the call, and
the tool names listed afterwards.
"""

import argparse
import asyncio
import json

from mcp import Client


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--adder", required=True)
    p.add_argument("--name", required=True)
    a = p.parse_args()
    async with Client(a.url) as c:
        async with c.listen(tools_list_changed=True) as sub:
            honored = sub.honored.model_dump(mode="json", by_alias=True, exclude_none=True)
            await c.call_tool(a.adder, {"name": a.name})
            try:
                event = await asyncio.wait_for(sub.__anext__(), 30)
                heard = type(event).__name__
            except (asyncio.TimeoutError, StopAsyncIteration):
                heard = None
        listed = [t.name for t in (await c.list_tools()).tools]
        print(json.dumps({"protocol": c.protocol_version, "honored": honored,
                          "heard": heard, "listed": listed}))


asyncio.run(main())
