-- Schema 13: the agent's conversations under `toolgate serve` (web, chat apps, the
-- OpenAI-compatible endpoint) and their journals. A conversation is who talks where (entry
-- point, chat, user → principal and role); its events, numbered from 1, are its history,
-- what readers stream, and what a turn interrupted by a crash continues from. One runner at
-- a time holds a conversation's lease (`runner`, `lease_until_ms`); `pending` marks a message
-- no runner has settled. Columns as the embedded tables.
CREATE TABLE conversations (
    id             TEXT PRIMARY KEY,
    entry          TEXT NOT NULL,
    chat           TEXT NOT NULL,
    user_ref       TEXT NOT NULL,
    principal      TEXT NOT NULL,
    role           TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    created_at_ms  BIGINT NOT NULL,
    updated_at_ms  BIGINT NOT NULL,
    closed_at_ms   BIGINT,
    last_seq       BIGINT NOT NULL DEFAULT 0,
    runner         TEXT,
    lease_until_ms BIGINT NOT NULL DEFAULT 0,
    pending        BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX conversations_open
    ON conversations (entry, chat, user_ref) WHERE closed_at_ms IS NULL;
CREATE INDEX conversations_by_principal ON conversations (principal, updated_at_ms);
CREATE INDEX conversations_pending ON conversations (updated_at_ms) WHERE pending;
CREATE TABLE conversation_events (
    conversation TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    body         TEXT NOT NULL,
    at_ms        BIGINT NOT NULL,
    PRIMARY KEY (conversation, seq)
);
