//! Shared pieces of the fuzz targets: oracles written independently of the code under test
//! (so a target checks a property rather than re-running the same logic), and fixtures.
//!
//! - [`addr`]: which addresses are not public, from the IANA special-purpose registries,
//!   as plain prefix arithmetic (for `egress_check`).
//! - [`schema`]: a small JSON Schema checker for the keywords the built-in tools use (for
//!   `validate_args`).

pub mod addr;
pub mod schema;
