-- Schema 2: offloaded results (what `read_result` pages), shared by every replica. The text is
-- stored redacted, as bytes; `bytes` is its length, kept so retention need not read it.
CREATE TABLE offloaded_results (
    id            TEXT PRIMARY KEY,
    call_id       TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    bytes         BIGINT NOT NULL,
    body          BYTEA NOT NULL
);
CREATE INDEX offloaded_results_by_age ON offloaded_results (created_at_ms DESC, id DESC);
