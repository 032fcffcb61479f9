-- Schema 1: approvals and standing grants, idempotency keys and their reservations, and the
-- notifications of the change feed. Column meanings match the embedded SQLite tables
-- (crates/toolgate-store/src/approvals/schema.rs, idempotency.rs); `seq` orders requests
-- created in the same millisecond, as SQLite's rowid does.

CREATE TABLE approvals (
    id                    TEXT PRIMARY KEY,
    seq                   BIGSERIAL NOT NULL,
    created_at_ms         BIGINT NOT NULL,
    expires_at_ms         BIGINT NOT NULL,
    status                TEXT NOT NULL,
    principal             TEXT NOT NULL,
    session               TEXT NOT NULL,
    role                  TEXT NOT NULL,
    tool                  TEXT NOT NULL,
    risk                  TEXT NOT NULL,
    args_hash             TEXT NOT NULL,
    arguments             TEXT NOT NULL,
    requires_confirmation BOOLEAN NOT NULL,
    decided_by            TEXT,
    decided_at_ms         BIGINT,
    scope                 TEXT,
    pattern               TEXT,
    reason                TEXT,
    consumed              BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX approvals_by_call ON approvals (principal, tool, args_hash, created_at_ms);
CREATE INDEX approvals_by_status ON approvals (status, created_at_ms);
CREATE INDEX approvals_by_created ON approvals (created_at_ms DESC, seq DESC);

CREATE TABLE approval_grants (
    id            BIGSERIAL PRIMARY KEY,
    scope         TEXT NOT NULL,
    principal     TEXT NOT NULL,
    session       TEXT,
    tool          TEXT NOT NULL,
    args_hash     TEXT,
    pattern       TEXT,
    created_by    TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    approval_id   TEXT NOT NULL
);
CREATE INDEX approval_grants_by_tool ON approval_grants (principal, tool);

CREATE TABLE idempotency_keys (
    principal     TEXT NOT NULL,
    tool          TEXT NOT NULL,
    key           TEXT NOT NULL,
    args_hash     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    PRIMARY KEY (principal, tool, key)
);

-- A call holding a key while it runs; the owner renews the lease, a crashed owner's lapses.
CREATE TABLE idempotency_reservations (
    principal      TEXT NOT NULL,
    tool           TEXT NOT NULL,
    key            TEXT NOT NULL,
    args_hash      TEXT NOT NULL,
    owner          TEXT NOT NULL,
    lease_until_ms BIGINT NOT NULL,
    PRIMARY KEY (principal, tool, key)
);

-- The change feed: every committed change of a request names it on toolgate_approvals; a
-- reservation let go names its key's digest on toolgate_idempotency. NOTIFY is delivered at
-- commit, so a listener never re-reads before the change is visible.
CREATE FUNCTION toolgate_notify_approval() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('toolgate_approvals', NEW.id);
    RETURN NULL;
END $$;
CREATE TRIGGER approvals_notify AFTER INSERT OR UPDATE ON approvals
    FOR EACH ROW EXECUTE FUNCTION toolgate_notify_approval();

CREATE FUNCTION toolgate_notify_idempotency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('toolgate_idempotency',
        md5(OLD.principal || chr(31) || OLD.tool || chr(31) || OLD.key));
    RETURN NULL;
END $$;
CREATE TRIGGER idempotency_notify AFTER DELETE ON idempotency_reservations
    FOR EACH ROW EXECUTE FUNCTION toolgate_notify_idempotency();
