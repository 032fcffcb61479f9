mod approval_grants;
mod approvals;
mod idempotency;
mod results;
