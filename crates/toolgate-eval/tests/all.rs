//! toolgate-eval integration tests against the installed bfcl-eval data (scripts/test.sh
//! installs it into the repository's .venv).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
