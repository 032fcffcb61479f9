//! The unified execution gateway (R-EXE-1): one entry point, [`Gateway::call`], for every
//! call from every front end, through layers whose one order is declared in [`pipeline`].
//!
//! # Layout
//! - [`call`]: [`CallRequest`] (what a front end asks: a tool, a prompt or a resource,
//!   [`Target`]) and [`Call`] (the call in flight); [`caller`]: [`Caller`], who a front
//!   end's request acts as.
//! - [`layer`]: the [`Layer`] trait and [`Next`].
//! - one folder per layer: [`telemetry`], [`audit`], [`admit`], [`lookup`], [`authorize`], [`validate`], [`policy`],
//!   [`idempotency`], [`approve`], [`govern`], [`execute`].
//! - [`pipeline`]: the order, and [`Gateway`].
//! - [`config`]: the gateway's part of `toolgate.toml`.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod admit;
pub mod approve;
pub mod audit;
pub mod authorize;
pub mod call;
pub mod caller;
pub mod config;
pub mod execute;
pub mod govern;
pub mod idempotency;
pub mod inflight;
pub mod layer;
pub mod lookup;
pub mod pipeline;
pub mod policy;
pub mod quota;
pub mod telemetry;
pub mod validate;

#[cfg(test)]
mod testing;

pub use call::{
    ApprovalInfo, Arguments, Call, CallEvent, CallRequest, Identity, Outcome, Target, TargetKind,
    new_call_id,
};
pub use caller::Caller;
pub use config::{ApprovalsConfig, GatewayConfig, LimitsConfig};
pub use layer::{Layer, Next};
pub use pipeline::{Gateway, GatewayDeps};
