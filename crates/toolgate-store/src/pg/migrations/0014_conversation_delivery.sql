-- Schema 14: a conversation's delivery cursor. A chat app (Telegram, …) is sent what its
-- conversation's journal says, in order; `delivered_seq` is the last event handed over, so a
-- restart or another replica goes on from there. Its partial index finds the conversations
-- with something left to send.
ALTER TABLE conversations ADD COLUMN delivered_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX conversations_undelivered
    ON conversations (entry, updated_at_ms) WHERE last_seq > delivered_seq;
