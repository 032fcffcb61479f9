#[macro_use]
mod backends;
mod approval_fixtures;
mod approval_grants;
mod approvals;
mod audit_chain;
mod audit_cluster;
mod audit_fixtures;
mod audit_keyed;
mod audit_query;
mod audit_verify;
mod credentials;
mod idempotency;
mod pg_tls;
mod pins;
mod redact;
mod redact_credentials;
mod results;
