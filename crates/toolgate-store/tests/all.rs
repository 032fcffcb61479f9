//! The one integration test binary of toolgate-store; the tests live in `suite/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
