//! Test fakes shared across the workspace's test suites, written once: tools whose behaviour
//! the arguments script ([`tools`]), the roles the suites test against ([`roles`]), and
//! approval requests as the stores' tests build them ([`approvals`]). The fake model server
//! stays in `toolgate-agent` (feature `fake`), beside the wire formats it speaks.
//!
//! A dev-dependency only: nothing here is part of toolgate.

pub mod approvals;
pub mod roles;
pub mod tools;

pub use tools::{Scripted, SpecOnly, scripted};
