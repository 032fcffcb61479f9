-- Schema 5: OAuth credentials of federated MCP servers, shared by the replicas: a login made
-- through one replica serves them all. `secret` is AES-256-GCM ciphertext (nonce ‖ data ‖
-- tag) under TOOLGATE_CREDENTIALS_KEY, bound to (server, resource); never plaintext.
CREATE TABLE mcp_credentials (
    server        TEXT NOT NULL,
    resource      TEXT NOT NULL,
    issuer        TEXT,
    client_id     TEXT NOT NULL,
    secret        BYTEA NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (server, resource)
);
