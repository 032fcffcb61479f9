//! The one integration test binary of toolgate-tools: real temp dirs, real processes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
