mod errors;
mod fixture;
mod idempotency;
mod redaction;
mod restart;
