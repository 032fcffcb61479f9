-- Schema 3: what a replica needs to continue a 2025-11-25 Streamable HTTP session another
-- replica opened (the client's `initialize` parameters, as rmcp's session store keeps them),
-- so `Mcp-Session-Id` works on any replica.
CREATE TABLE mcp_sessions (
    id            TEXT PRIMARY KEY,
    state         TEXT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_by_age ON mcp_sessions (updated_at_ms);
