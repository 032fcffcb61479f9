-- Schema 4: the cluster's audit log. One chain per writing process (`audit_chains`, its head
-- MACed with the audit key), its records the embedded log's lines with the chain's id inside
-- the hashed text (`audit_records.line`); the other columns are the query index, derived
-- from the line. No foreign key on purpose: `toolgate audit verify` reports rows of unknown
-- chains rather than the database refusing to show them.
CREATE TABLE audit_chains (
    chain         TEXT PRIMARY KEY,
    started_at_ms BIGINT NOT NULL,
    head_seq      BIGINT NOT NULL,
    head_hash     TEXT NOT NULL,
    head_mac      TEXT
);

CREATE TABLE audit_records (
    chain     TEXT NOT NULL,
    seq       BIGINT NOT NULL,
    line      TEXT NOT NULL,
    kind      TEXT NOT NULL,
    ts_us     BIGINT,
    call_id   TEXT NOT NULL,
    session   TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool      TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    PRIMARY KEY (chain, seq)
);
CREATE INDEX audit_records_by_ts ON audit_records (ts_us);
CREATE INDEX audit_records_by_call ON audit_records (call_id);
CREATE INDEX audit_records_by_tool ON audit_records (tool, ts_us);
CREATE INDEX audit_records_by_principal ON audit_records (principal, ts_us);
