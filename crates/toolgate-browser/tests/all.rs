//! Browser tests against real Chromium (`/usr/bin/chromium`, Debian's `chromium` package) and
//! pages served on loopback by the test itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
