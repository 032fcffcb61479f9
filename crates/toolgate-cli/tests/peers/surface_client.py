"""A Python SDK client in its default mode (2026-07-28) uses what `toolgate serve` federates
from server-everything besides plain tools: a prompt, a resource and its updates, and a tool
whose server asks the client's model (sampling) mid-call.

Usage: surface_client.py --url http://127.0.0.1:PORT/mcp

Prints {"protocol", "prompts", "prompt", "resources", "read", "honored", "heard", "sampling"}:
the negotiated version, the prompt names listed and the messages of `simple-prompt`, the
resource URIs listed and the text read from the first, the listen filter acknowledged and
whether a resource update arrived, and what the sampling tool returned with the question the
client was asked.
"""

import argparse
import asyncio
import json

from mcp import Client, types

PREFIX = "mcp__everything__"
asked = []


async def sample(context, params):
    asked.append(params.messages[0].content.text)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris, said the client's model"),
        model="test-model",
        stopReason="endTurn",
    )


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    a = p.parse_args()
    out = {}
    async with Client(a.url, sampling_callback=sample) as c:
        out["protocol"] = c.protocol_version
        out["prompts"] = sorted(x.name for x in (await c.list_prompts()).prompts)
        got = await c.get_prompt(PREFIX + "simple-prompt")
        out["prompt"] = [m.content.text for m in got.messages]
        resources = (await c.list_resources()).resources
        out["resources"] = [str(r.uri) for r in resources]
        uri = str(resources[0].uri)
        read = await c.read_resource(uri)
        out["read"] = {"uri": str(read.contents[0].uri), "text": getattr(read.contents[0], "text", None)}
        async with c.listen(resource_subscriptions=[uri]) as sub:
            out["honored"] = sub.honored.model_dump(mode="json", by_alias=True, exclude_none=True)
            await c.call_tool(PREFIX + "toggle-subscriber-updates", {})
            try:
                event = await asyncio.wait_for(sub.__anext__(), 30)
                out["heard"] = {"type": type(event).__name__, "uri": str(event.uri)}
            except (asyncio.TimeoutError, StopAsyncIteration):
                out["heard"] = None
            await c.call_tool(PREFIX + "toggle-subscriber-updates", {})
        result = await c.call_tool(PREFIX + "trigger-sampling-request",
                                   {"prompt": "What is the capital of France?", "maxTokens": 50})
        out["sampling"] = {"isError": result.is_error,
                           "text": [getattr(b, "text", None) for b in result.content],
                           "asked": asked}
    print(json.dumps(out))


asyncio.run(main())
