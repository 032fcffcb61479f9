-- Schema 10: an approval request records who vouched for its caller — the access token's
-- issuer and subject (or `toolgate` and the token id) — as the audit does.
ALTER TABLE approvals ADD COLUMN issuer TEXT, ADD COLUMN subject TEXT;
