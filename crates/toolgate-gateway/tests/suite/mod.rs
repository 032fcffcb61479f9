mod errors;
mod fixture;
mod idempotency;
mod policy_rules;
mod quarantine;
mod quotas;
mod redaction;
mod restart;
