"""A real MCP client (the Python SDK 2.x or fastmcp 4.x) against toolgate.

Usage:
  mcp_client.py --client mcp|fastmcp --mode auto|legacy --phase first|retry [--wait]
                (--url http://127.0.0.1:PORT/mcp | --command BIN --arg=A --arg=B ...)

Prints one JSON object on stdout describing what the client saw; the Rust test compares it
with the expected value. Phase `first`: list tools, call list_dir and read_file, call
read_file with invalid arguments and an unknown tool, call write_file (needs approval).
Phase `retry`: the identical write_file call again. Phase `hidden`: list the tools and
call a tool the role cannot see and one that does not exist; report both error objects.

With --wait the calls carry a progressToken (fastmcp always sends one), so the server keeps
write_file waiting until an operator decides; the progress messages received are reported.
"""

import argparse
import asyncio
import json
import sys

WRITE_ARGS = {"path": "out.txt", "content": "written over MCP"}


def field(obj, *names):
    """The first of `names` the object has (the SDKs spell fields differently)."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def block_texts(result):
    return [b.text for b in result.content if getattr(b, "type", None) == "text"]


def summarize(result):
    """The parts of a CallToolResult the test asserts on."""
    texts = block_texts(result)
    is_error = bool(field(result, "is_error", "isError"))
    out = {"is_error": is_error}
    if is_error:
        err = json.loads(texts[0])
        out["code"] = err["code"]
        out["retryable"] = err["retryable"]
        details = err.get("details") or {}
        if "approval_id" in details:
            out["approval_id"] = details["approval_id"]
            out["message_names_id"] = details["approval_id"] in err["message"]
    else:
        out["texts"] = texts
        out["structured"] = field(result, "structured_content", "structuredContent")
    return out


PROGRESS = []


async def on_progress(progress, total, message):
    PROGRESS.append({"progress": progress, "message": message})


async def run_mcp(args, target):
    from mcp import Client, StdioServerParameters

    if args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=args.command, args=args.arg)
    async with Client(server, mode=args.mode) as c:
        return await scenario(
            args.phase,
            c.list_tools,
            lambda name, a: c.call_tool(
                name, a, progress_callback=on_progress if args.wait else None
            ),
            getattr(c, "protocol_version", None),
        )


async def run_fastmcp(args, target):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport, StreamableHttpTransport

    if args.url:
        transport = StreamableHttpTransport(args.url)
    else:
        transport = StdioTransport(args.command, args.arg)
    async with Client(transport, mode=args.mode) as c:

        async def list_tools():
            return await c.list_tools()

        return await scenario(
            args.phase,
            list_tools,
            lambda name, a: c.call_tool(
                name, a, raise_on_error=False, progress_handler=on_progress
            ),
            None,
        )


async def scenario(phase, list_tools, call, protocol_version):
    report = {}
    if phase == "first":
        listed = await list_tools()
        tools = listed.tools if hasattr(listed, "tools") else listed
        report["tools"] = sorted(t.name for t in tools)
        report["list_dir"] = summarize(await call("list_dir", {"path": "."}))
        report["read_file"] = summarize(await call("read_file", {"path": "hello.txt"}))
        report["invalid"] = summarize(await call("read_file", {}))
        report["unknown"] = summarize(await call("no_such_tool", {}))
        report["write"] = summarize(await call("write_file", WRITE_ARGS))
    elif phase == "hidden":
        listed = await list_tools()
        tools = listed.tools if hasattr(listed, "tools") else listed
        report["tools"] = sorted(t.name for t in tools)
        for name in ("write_file", "no_such_tool"):
            result = await call(name, WRITE_ARGS)
            report[name] = json.loads(block_texts(result)[0])
    else:
        report["write"] = summarize(await call("write_file", WRITE_ARGS))
    if PROGRESS:
        report["progress"] = PROGRESS
    return report


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--client", choices=["mcp", "fastmcp"], required=True)
    p.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    p.add_argument("--phase", choices=["first", "retry", "hidden"], required=True)
    p.add_argument("--wait", action="store_true")
    p.add_argument("--url")
    p.add_argument("--command")
    p.add_argument("--arg", action="append", default=[])
    args = p.parse_args()
    run = run_mcp if args.client == "mcp" else run_fastmcp
    report = asyncio.run(asyncio.wait_for(run(args, None), timeout=120))
    json.dump(report, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
