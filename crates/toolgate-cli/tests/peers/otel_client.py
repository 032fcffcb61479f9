"""Calls tools through `toolgate serve` with the Python SDK client, each call with its own W3C
trace context in `params._meta`, for the telemetry test to find the spans toolgate exported.

Usage: otel_client.py --url http://127.0.0.1:PORT CALL...
where each CALL is a JSON object {"tool", "arguments", "traceparent"}.

First lists the tools, under the trace 5ca1ab1e… of its own.

Prints one JSON array: per call {"is_error", "text"} (the first text content), or {"raised"}
when the SDK raised (a JSON-RPC error).
"""

import argparse
import asyncio
import json

from mcp import Client


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("calls", nargs="+")
    a = p.parse_args()
    out = []
    async with Client(a.url + "/mcp") as c:
        # A request of another method, with a trace of its own (the test looks for its span).
        await c.list_tools(meta={"traceparent": "00-5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e-5ca1ab1e5ca1ab1e-01"})
        for raw in a.calls:
            call = json.loads(raw)
            try:
                result = await c.call_tool(call["tool"], call["arguments"],
                                           meta={"traceparent": call["traceparent"]})
            except Exception as e:  # noqa: BLE001 - reported to the test, which judges it
                out.append({"raised": repr(e)})
                continue
            texts = [x.text for x in result.content if getattr(x, "type", "") == "text"]
            out.append({"is_error": bool(result.is_error), "text": texts[0] if texts else None})
    print(json.dumps(out))


asyncio.run(main())
