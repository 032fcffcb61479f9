#[macro_use]
mod backends;
mod approval_fixtures;
mod approval_grants;
mod approvals;
mod chat_posts;
mod conversations;
mod credentials;
mod idempotency;
mod pg_tls;
mod pins;
mod quotas;
mod results;
mod schema_parity;
mod tokens;
