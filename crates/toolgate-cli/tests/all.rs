//! The one integration test binary of toolgate-cli: the real `toolgate` binary, run as a
//! separate process against a temp workspace and data dir per test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
