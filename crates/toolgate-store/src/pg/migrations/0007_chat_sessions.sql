-- Schema 7: `toolgate run` / `toolgate chat` conversations by session id, so `--session ID`
-- resumes a conversation begun on any host of the cluster. The JSON document is what the
-- model saw (results already governed and secrets masked by the result store).
CREATE TABLE chat_sessions (
    id            TEXT PRIMARY KEY,
    doc           TEXT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
