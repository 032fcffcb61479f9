"""A Python SDK client (default mode) asks `toolgate serve` for federated prompts and
resources; every step's answer or error is reported, so a test can see what a role is shown
and refused.

Usage: prompt_client.py --url URL [--get-prompt NAME] [--prompt-arg K=V ...] [--read URI ...]
                        [--times N]

Prints {"prompts": [names], "resources": [uris], "got": text|{"error"}, "read": {uri: text|{"error"}},
"attempts": {name|uri: ["ok" | error text, ...]}}: with --times N each get and read is made N
times; "got" and "read" report the first, "attempts" every one.
"""

import argparse
import asyncio
import json

from mcp import Client


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--get-prompt")
    p.add_argument("--prompt-arg", action="append", default=[])
    p.add_argument("--read", action="append", default=[])
    p.add_argument("--times", type=int, default=1)
    a = p.parse_args()
    prompt_args = dict(kv.split("=", 1) for kv in a.prompt_arg) or {"name": "Ada"}
    out = {"read": {}, "attempts": {}}
    async with Client(a.url) as c:
        out["prompts"] = sorted(x.name for x in (await c.list_prompts()).prompts)
        out["resources"] = sorted(str(r.uri) for r in (await c.list_resources()).resources)
        if a.get_prompt:
            attempts = out["attempts"].setdefault(a.get_prompt, [])
            for i in range(a.times):
                try:
                    got = await c.get_prompt(a.get_prompt, prompt_args)
                    text = [m.content.text for m in got.messages]
                    attempts.append("ok")
                except Exception as e:  # the refusal is what is reported
                    text = {"error": str(e)}
                    attempts.append(str(e))
                if i == 0:
                    out["got"] = text
        for uri in a.read:
            attempts = out["attempts"].setdefault(uri, [])
            for i in range(a.times):
                try:
                    read = await c.read_resource(uri)
                    text = getattr(read.contents[0], "text", None)
                    attempts.append("ok")
                except Exception as e:
                    text = {"error": str(e)}
                    attempts.append(str(e))
                if i == 0:
                    out["read"][uri] = text
    print(json.dumps(out))


asyncio.run(main())
