//! The fuzz targets of toolgate's attack surface, as plain functions of one input, and the
//! oracles they check against — written independently of the code under test, so a target
//! checks a property rather than re-running the same logic.
//!
//! Two drivers run them:
//! - `fuzz/` (cargo-fuzz, libFuzzer): coverage-guided, from the committed corpus
//!   (`fuzz/corpus/<target>`), with `scripts/fuzz.sh` — the long runs of docs/security.md;
//! - `tests/smoke.rs`, in the test suite's own build: every committed corpus input replayed,
//!   then seeded mutations of them (bit flips, byte edits, inserted and deleted runs,
//!   crossover, dictionary words) for a few seconds per target — the CI smoke.
//!
//! # Layout
//! - [`targets`]: one module per target, each with `run(&[u8])`; [`TARGETS`] lists them.
//! - [`addr`]: which addresses are not public, from the IANA special-purpose registries, as
//!   plain prefix arithmetic (for `egress_check`).
//! - [`schema`]: a small JSON Schema checker for the keywords the built-in tools use (for
//!   `validate_args`).
//! - [`mutate`]: the smoke's mutator.

#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod addr;
pub mod mutate;
pub mod schema;

pub mod targets {
    pub mod audit_verify;
    pub mod chat_inbound;
    pub mod config_toml;
    pub mod egress_check;
    pub mod html_markdown;
    pub mod mcp_server;
    pub mod redact;
    pub mod sse_parser;
    pub mod validate_args;
}

/// A target: its name (its corpus and dictionary under `fuzz/`), the longest input it is
/// given, and its body.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub name: &'static str,
    pub max_len: usize,
    pub run: fn(&[u8]),
}

/// Every target, as `scripts/fuzz.sh` runs them (the same input size caps).
pub const TARGETS: [Target; 9] = [
    Target {
        name: "audit_verify",
        max_len: 4096,
        run: targets::audit_verify::run,
    },
    Target {
        name: "chat_inbound",
        max_len: 8192,
        run: targets::chat_inbound::run,
    },
    Target {
        name: "config_toml",
        max_len: 16384,
        run: targets::config_toml::run,
    },
    Target {
        name: "egress_check",
        max_len: 4096,
        run: targets::egress_check::run,
    },
    Target {
        name: "html_markdown",
        max_len: 16384,
        run: targets::html_markdown::run,
    },
    Target {
        name: "mcp_server",
        max_len: 16384,
        run: targets::mcp_server::run,
    },
    Target {
        name: "redact",
        max_len: 4096,
        run: targets::redact::run,
    },
    Target {
        name: "sse_parser",
        max_len: 4096,
        run: targets::sse_parser::run,
    },
    Target {
        name: "validate_args",
        max_len: 4096,
        run: targets::validate_args::run,
    },
];
