"""An MCP host (the Python SDK's client, default mode) spawns `toolgate serve --stdio` exactly
as the Rust test describes it, lists the tools and calls one.

Usage: stdio_call_client.py --spec JSON --tool NAME --args JSON

--spec is {"command": path, "args": [...], "env": {...}, "cwd": path}: the server's
environment is PATH and HOME plus `env`, nothing else of this process's.
Prints {"protocol": version, "tools": [{"name", "annotations"}], "result": the call's
result as the SDK parsed it (model_dump by alias)}.
"""

import argparse
import asyncio
import json
import os

from mcp import Client, StdioServerParameters


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spec", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--args", required=True)
    a = p.parse_args()
    spec = json.loads(a.spec)
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env.update(spec.get("env", {}))
    server = StdioServerParameters(
        command=spec["command"], args=spec["args"], env=env, cwd=spec.get("cwd")
    )
    async with Client(server) as c:
        tools = (await c.list_tools()).tools
        result = await c.call_tool(a.tool, json.loads(a.args))
        print(
            json.dumps(
                {
                    "protocol": c.protocol_version,
                    "tools": [
                        {
                            "name": t.name,
                            "annotations": t.annotations.model_dump(
                                mode="json", by_alias=True, exclude_none=True
                            )
                            if t.annotations
                            else None,
                        }
                        for t in tools
                    ],
                    "result": result.model_dump(mode="json", by_alias=True, exclude_unset=True),
                }
            )
        )


asyncio.run(main())
