//! The one integration test binary of toolgate-audit; the tests live in `suite/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
