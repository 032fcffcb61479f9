-- Schema 6: pinned tool definitions (R-REG-5), shared: a definition first seen on any
-- replica is the pin on all, a changed one is quarantined on all until an operator approves
-- it through any replica. Columns as the embedded `tool_pins`.
CREATE TABLE tool_pins (
    name              TEXT PRIMARY KEY,
    pinned_hash       TEXT NOT NULL,
    pinned_definition TEXT NOT NULL,
    pinned_at_ms      BIGINT NOT NULL,
    pinned_by         TEXT NOT NULL,
    seen_hash         TEXT,
    seen_definition   TEXT,
    seen_at_ms        BIGINT
);
