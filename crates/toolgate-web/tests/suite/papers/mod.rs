//! retrieve_papers against local fakes of the four scholarly APIs (answers written in the
//! shapes of their public documentation), reached through the real egress guard: what each
//! API was asked, merging, rate limits on an injected clock, bad answers, refused redirects,
//! lookups by id, and the agent-facing output.

mod fake;
mod filters;
mod limits;
mod lookup;
mod merged;
mod refused;
