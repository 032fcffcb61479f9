//! The one integration test binary of toolgate-web: local servers on 127.0.0.1 (axum for
//! pages and fake search services, a counting listener for "never connected"), reached
//! through the real egress guard with a static name table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
