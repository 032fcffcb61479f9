"""A Python SDK client (default mode) asks `toolgate serve` for federated prompts and
resources; every step's answer or error is reported, so a test can see what a role is shown
and refused.

Usage: prompt_client.py --url URL [--get-prompt NAME] [--read URI ...]

Prints {"prompts": [names], "resources": [uris], "got": text|{"error"}, "read": {uri: text|{"error"}}}.
"""

import argparse
import asyncio
import json

from mcp import Client


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--get-prompt")
    p.add_argument("--read", action="append", default=[])
    a = p.parse_args()
    out = {"read": {}}
    async with Client(a.url) as c:
        out["prompts"] = sorted(x.name for x in (await c.list_prompts()).prompts)
        out["resources"] = sorted(str(r.uri) for r in (await c.list_resources()).resources)
        if a.get_prompt:
            try:
                got = await c.get_prompt(a.get_prompt, {"name": "Ada"})
                out["got"] = [m.content.text for m in got.messages]
            except Exception as e:  # the refusal is what is reported
                out["got"] = {"error": str(e)}
        for uri in a.read:
            try:
                read = await c.read_resource(uri)
                out["read"][uri] = getattr(read.contents[0], "text", None)
            except Exception as e:
                out["read"][uri] = {"error": str(e)}
    print(json.dumps(out))


asyncio.run(main())
