"""A 2025-11-25 session (raw Streamable HTTP, as a session-era host speaks it) listens on its
standalone GET stream, makes a federated server add a prompt, and reports what it heard.

Usage: session_notices_client.py --url http://127.0.0.1:PORT/mcp --adder mcp__py__add_prompt --name NEW

Prints {"heard": [methods of the notifications received within 30 s of the call],
"prompts": [prompt names listed afterwards]}.
"""

import argparse
import asyncio
import json

import httpx2 as httpx
from raw_session import answer, open_session

WANTED = {"notifications/prompts/list_changed", "notifications/resources/list_changed"}


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--adder", required=True)
    p.add_argument("--name", required=True)
    a = p.parse_args()
    heard = []
    all_heard = asyncio.Event()
    async with httpx.AsyncClient(timeout=60) as h:
        headers = await open_session(h, a.url, "session-notices")

        async def listen():
            get_headers = dict(headers, Accept="text/event-stream")
            get_headers.pop("Content-Type")
            async with h.stream("GET", a.url, headers=get_headers) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        method = json.loads(line[5:]).get("method")
                        if method:
                            heard.append(method)
                        if WANTED <= set(heard):
                            all_heard.set()

        listener = asyncio.create_task(listen())
        await asyncio.sleep(0.5)  # the stream is open before the change
        call = {"name": a.adder, "arguments": {"name": a.name}}
        answer(await h.post(a.url, headers=headers,
                            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}), 2)
        try:
            await asyncio.wait_for(all_heard.wait(), 30)
        except asyncio.TimeoutError:
            pass
        listener.cancel()
        listed = answer(await h.post(a.url, headers=headers,
                                     json={"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}), 3)
        prompts = [p["name"] for p in listed["result"]["prompts"]]
    print(json.dumps({"heard": sorted(set(heard) & WANTED), "prompts": prompts}))


asyncio.run(main())
