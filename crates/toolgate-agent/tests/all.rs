//! The agent crate's one integration test binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
