//! The whole pipeline, wired to real stores in a temp directory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
