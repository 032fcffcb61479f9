-- Schema 8: the bearer tokens toolgate issues (R-SRV-5), shared: a token made or revoked
-- through any replica admits or refuses its bearer on all of them. Only the token's SHA-256
-- is stored. Columns as the embedded `api_tokens`.
CREATE TABLE api_tokens (
    id              TEXT PRIMARY KEY,
    sha256          TEXT NOT NULL UNIQUE,
    principal       TEXT NOT NULL,
    role            TEXT NOT NULL,
    operator        BOOLEAN NOT NULL,
    note            TEXT,
    created_at_ms   BIGINT NOT NULL,
    created_by      TEXT NOT NULL,
    expires_at_ms   BIGINT,
    revoked_at_ms   BIGINT,
    last_used_at_ms BIGINT,
    replaces        TEXT
);
