"""The Python MCP SDK's own client calling a stdio server's `echo` tool: the reference for
`toolgate-loadgen mcp-client` (the issue-3 benchmark). Not a test.

Usage:
  mcp_echo_client.py --calls N --concurrency C [--warmup W] -- COMMAND ARGS...

Starts the server once, runs W warm-up calls, then N calls of `echo` with C in flight at a
time (C = 1: one after another), and prints one JSON object:
  {"client": "python-mcp", "calls": N, "concurrency": C, "seconds": S,
   "calls_per_s": R, "p50_us": …, "p99_us": …, "errors": E}
"""

import argparse
import asyncio
import json
import sys
import time


def percentile(sorted_us, q):
    if not sorted_us:
        return None
    i = min(len(sorted_us) - 1, max(0, round(q * len(sorted_us) + 0.5) - 1))
    return sorted_us[i]


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("server", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = [a for a in args.server if a != "--"]
    if not command:
        sys.exit("error: give the server command after --")

    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode="legacy") as c:
        errors = 0

        async def one(i):
            nonlocal errors
            t0 = time.perf_counter_ns()
            r = await c.call_tool("echo", {"message": f"m{i}"})
            dt = (time.perf_counter_ns() - t0) // 1000
            if getattr(r, "is_error", False) or getattr(r, "isError", False):
                errors += 1
            return dt

        for i in range(args.warmup):
            await one(i)
        errors = 0
        latencies = []
        sem = asyncio.Semaphore(args.concurrency)

        async def bounded(i):
            async with sem:
                latencies.append(await one(i))

        start = time.perf_counter()
        await asyncio.gather(*(bounded(i) for i in range(args.calls)))
        seconds = time.perf_counter() - start
    latencies.sort()
    print(json.dumps({
        "client": "python-mcp",
        "calls": args.calls,
        "concurrency": args.concurrency,
        "seconds": round(seconds, 3),
        "calls_per_s": round(args.calls / seconds, 1),
        "p50_us": percentile(latencies, 0.50),
        "p99_us": percentile(latencies, 0.99),
        "errors": errors,
    }))


asyncio.run(main())
