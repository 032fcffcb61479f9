"""The Python SDK's own MCP server with one echo tool: the peer `toolgate-loadgen` compares
toolgate against. Streamable HTTP at http://127.0.0.1:PORT/mcp (stateful sessions, SSE
responses: the SDK's defaults). Usage: echo_server.py PORT"""

import sys

from mcp.server.mcpserver import MCPServer

# WARNING, not the default INFO: uvicorn's per-request access log would slow the peer down.
mcp = MCPServer("peer", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
