"""The MCP Python SDK's own OAuth support, end to end against `toolgate serve`: a
client_credentials provider (`ClientCredentialsOAuthProvider`) gets a 401 from toolgate, reads
its protected-resource metadata, discovers the authorization server, asks it for a token for
toolgate's resource (RFC 8707) and retries; then the client lists tools and calls one.

Usage: oauth_client.py --url http://127.0.0.1:PORT/mcp --issuer http://127.0.0.1:AS
           --client-id ID --client-secret S --tool NAME [--scope "tools"]
Prints {"tools": [...], "result": <text of the call's first content block>, "is_error": bool,
"token_requests": n} — token_requests counts the provider's token fetches.
"""

import argparse
import asyncio
import json

import httpx2 as httpx
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None
        self.token_sets = 0

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.token_sets += 1
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--issuer", required=True)
    p.add_argument("--client-id", required=True)
    p.add_argument("--client-secret", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--scope", default="tools")
    a = p.parse_args()
    storage = MemoryStorage()
    provider = ClientCredentialsOAuthProvider(
        server_url=a.url, storage=storage, client_id=a.client_id,
        client_secret=a.client_secret, scope=a.scope, issuer=a.issuer)
    async with httpx.AsyncClient(auth=provider, timeout=30) as http:
        async with Client(streamable_http_client(a.url, http_client=http)) as c:
            tools = sorted(t.name for t in (await c.list_tools()).tools)
            result = await c.call_tool(a.tool, {"path": "."})
    print(json.dumps({
        "tools": tools,
        "result": result.content[0].text if result.content else None,
        "is_error": bool(result.is_error),
        "token_requests": storage.token_sets,
    }))


asyncio.run(main())
