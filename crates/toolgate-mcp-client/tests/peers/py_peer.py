"""The Python SDK's own MCPServer as a peer for toolgate's MCP client tests. It speaks both
protocol eras: `server/discover` (2026-07-28) and `initialize` (2025-11-25).

Usage: py_peer.py stdio            (stdio)
       py_peer.py http PORT        (Streamable HTTP at http://127.0.0.1:PORT/mcp)
"""

import json
import os
import sys

import anyio
from pydantic import BaseModel
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts import Prompt
from mcp_types import ToolAnnotations

mcp = MCPServer("py-peer", log_level="WARNING")


# PY_PEER_ADD_DESCRIPTION replaces the docstring: a changed definition ("rug pull").
@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), description=os.environ.get("PY_PEER_ADD_DESCRIPTION"))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# PY_PEER_PROMPT_DESCRIPTION replaces the prompt's docstring: a changed prompt.
@mcp.prompt(description=os.environ.get("PY_PEER_PROMPT_DESCRIPTION"))
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Say hello to {name}."


@mcp.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@mcp.tool()
async def sleep(seconds: float, marker: str = "") -> str:
    """Sleep for `seconds`; when the call is cancelled, write `cancelled` into `marker`."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if marker:
            with open(marker, "w") as f:
                f.write("cancelled")
        raise
    return "slept"


class Proceed(BaseModel):
    proceed: bool = True


# A token-shaped secret the server itself puts into its question: the arguments of the call
# never hold it, so only the elicitation can leak it.
ELICIT_SECRET = "ghp_" + "Zq7" * 12


@mcp.tool()
async def ask(ctx: Context) -> str:
    """Ask the client, through elicitation, whether to go on; returns the action taken."""
    result = await ctx.elicit(
        message=f"Log in as the deploy bot with {ELICIT_SECRET} and go on?", schema=Proceed
    )
    return result.action


@mcp.tool()
def trace(ctx: Context) -> str:
    """The W3C trace context this call arrived with (`_meta` traceparent and tracestate), as JSON."""
    meta = ctx.request_context.meta or {}
    return json.dumps({k: meta.get(k) for k in ("traceparent", "tracestate")})


@mcp.tool()
def fail(reason: str) -> str:
    """Always fails with `reason` (an anticipated failure: the client sees the text)."""
    raise ToolError(reason)


@mcp.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a new tool called `name` and announce that the tool list changed."""

    def extra() -> str:
        return name

    mcp.add_tool(extra, name=name, description=f"Added at run time: {name}.")
    # 2026-07-28: delivered on the client's subscriptions/listen stream.
    await ctx.notify_tools_changed()
    # 2025-11-25: a plain notifications/tools/list_changed on the session.
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:  # noqa: BLE001 - not offered on this era's session
        pass
    return "added"


@mcp.tool()
async def add_prompt(name: str, ctx: Context) -> str:
    """Register a new prompt called `name` and announce that the prompt list changed."""

    def extra() -> str:
        return f"The {name} prompt."

    mcp.add_prompt(Prompt.from_function(extra, name=name, description=f"Added at run time: {name}."))
    await ctx.notify_prompts_changed()
    try:
        await ctx.session.send_prompt_list_changed()
    except Exception:  # noqa: BLE001 - not offered on this era's session
        pass
    return "added"


# PY_PEER_LISTEN=silent: `subscriptions/listen` is still offered (listChanged advertised) but
# never answered, as an upstream whose listen stream the client cannot read looks to it.
if os.environ.get("PY_PEER_LISTEN") == "silent":
    _handlers = mcp._lowlevel_server._request_handlers
    _entry = _handlers["subscriptions/listen"]

    async def _never_answers(*_args, **_kwargs):
        await anyio.sleep_forever()

    _handlers["subscriptions/listen"] = type(_entry)(_entry.params_type, _never_answers)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
