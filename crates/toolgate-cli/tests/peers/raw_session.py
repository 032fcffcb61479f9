"""A 2025-11-25 Streamable HTTP session spoken by hand (httpx2), for the peer scripts that
test what the SDKs hide: the JSON-RPC answer to a request, whether it came as JSON or on an
SSE stream, and opening a session (initialize + initialized) whose headers later requests
carry."""

import json


def answer(response, want_id):
    """The JSON-RPC answer with id `want_id`, whether sent as JSON or on an SSE stream."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == want_id:
                return message
    raise RuntimeError(f"no answer to {want_id}: {response.status_code} {response.text!r}")


async def open_session(h, url, name):
    """Initializes a 2025-11-25 session at `url`; returns the headers of its later requests."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}
    r = await h.post(url, headers=headers,
                     json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    answer(r, 1)
    headers["mcp-session-id"] = r.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    await h.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers
