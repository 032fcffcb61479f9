"""Calls a federated tool that reports the trace context it received, through `toolgate serve`,
once per way a caller can send one, and prints what the upstream saw each time.

Usage: trace_client.py --url http://127.0.0.1:PORT --tool mcp__py__trace

Prints {"sdk", "meta", "header", "api", "none", "session_stream"}: the upstream's view ({"traceparent",
"tracestate"}) of a call
- sdk: the Python SDK client in its default mode (2026-07-28), the context in `_meta`;
- meta: a 2025-11-25 session, the context in `params._meta`, a different one in the headers;
- header: the same session, the context only in the POST's headers;
- api: `POST /v1/calls` with the headers;
- none: the session with no context at all;
- session_stream: the session, `_meta` with a progress token (rmcp's path, not the JSON one).
"""

import argparse
import asyncio
import json

import httpx2 as httpx
from mcp import Client
from raw_session import answer, open_session

SDK = "00-11111111111111111111111111111111-1111111111111111-01"
META = "00-22222222222222222222222222222222-2222222222222222-01"
HEADER = "00-33333333333333333333333333333333-3333333333333333-00"
API = "00-44444444444444444444444444444444-4444444444444444-01"
STREAM = "00-55555555555555555555555555555555-5555555555555555-01"


def seen(result):
    """What the upstream's trace tool returned."""
    return json.loads(result["content"][0]["text"])


async def session_calls(url, tool):
    async with httpx.AsyncClient(timeout=60) as h:
        headers = await open_session(h, url, "trace-client")

        async def call(n, extra_headers, meta):
            params = {"name": tool, "arguments": {}}
            if meta:
                params["_meta"] = meta
            r = await h.post(url, headers=headers | extra_headers,
                             json={"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
            return seen(answer(r, n)["result"])

        return {
            "meta": await call(2, {"traceparent": HEADER},
                               {"traceparent": META, "tracestate": "vendor=meta"}),
            "header": await call(3, {"traceparent": HEADER, "tracestate": "vendor=header"}, None),
            "none": await call(4, {}, None),
            # A progress token takes the call off the JSON fast path onto rmcp's session path.
            "session_stream": await call(5, {}, {"traceparent": STREAM, "progressToken": 5}),
        }


async def api_call(base, tool):
    async with httpx.AsyncClient(timeout=60) as h:
        r = await h.post(base + "/v1/calls", json={"tool": tool, "arguments": {}},
                         headers={"traceparent": API, "tracestate": "vendor=api"})
        envelope = r.json()
        data = envelope.get("data")
        if isinstance(data, dict) and "result" in data:  # structuredContent {"result": text}
            data = data["result"]
        return json.loads(data) if isinstance(data, str) else envelope


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--tool", required=True)
    a = p.parse_args()
    async with Client(a.url + "/mcp") as c:
        result = await c.call_tool(a.tool, {}, meta={"traceparent": SDK, "tracestate": "vendor=sdk"})
        sdk = json.loads(result.content[0].text)
    out = {"sdk": sdk} | await session_calls(a.url + "/mcp", a.tool)
    out["api"] = await api_call(a.url, a.tool)
    print(json.dumps(out))


asyncio.run(main())
