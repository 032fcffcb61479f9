//! toolgate-app's integration tests: one binary, modules in `suite/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
