mod errors;
mod fixture;
mod idempotency;
mod quarantine;
mod redaction;
mod restart;
