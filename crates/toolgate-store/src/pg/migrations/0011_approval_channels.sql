-- Schema 11: approval channels (chat bots). An approval request records the channel its
-- decision came through (`slack:ops`, `telegram:oncall`; NULL for the console, the API and
-- the CLI); and `approval_posts` says which request was announced as which message of which
-- chat, so that every replica announces a request once and finds the request behind a tapped
-- message. Columns as the embedded `approval_posts`.
ALTER TABLE approvals ADD COLUMN decided_via TEXT;
CREATE TABLE approval_posts (
    approval_id   TEXT NOT NULL,
    channel       TEXT NOT NULL,
    chat          TEXT NOT NULL,
    message_ref   TEXT,
    claimed_at_ms BIGINT NOT NULL,
    closed        TEXT,
    closed_at_ms  BIGINT,
    PRIMARY KEY (approval_id, channel, chat)
);
CREATE INDEX approval_posts_by_message ON approval_posts (channel, chat, message_ref);
CREATE INDEX approval_posts_open ON approval_posts (channel, claimed_at_ms) WHERE closed IS NULL;
CREATE INDEX approval_posts_closed ON approval_posts (closed_at_ms) WHERE closed IS NOT NULL;
