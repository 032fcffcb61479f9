//! Test fakes shared across the workspace's test suites, written once: tools whose behaviour
//! the arguments script ([`tools`]), the roles the suites test against ([`roles`]),
//! approval requests as the stores' tests build them ([`approvals`]), a Hugging Face Hub
//! stand-in for model pulls ([`hub`]), the packaged test embedding model ([`model`]) and a
//! scratch PostgreSQL schema per test ([`pg`]) and an OTLP/HTTP collector that keeps what
//! it receives ([`otlp`]); a language model in process answering from a script
//! ([`chat_model`]).
//! The fake model server stays in `toolgate-agent` (feature `fake`), beside the wire formats it speaks.
//!
//! A dev-dependency only: nothing here is part of toolgate.

// A test kit makes its own clients and scratch databases.
#![allow(clippy::disallowed_methods)]

pub mod approvals;
pub mod chat_model;
pub mod hub;
pub mod model;
pub mod otlp;
pub mod pg;
pub mod roles;
pub mod tools;

pub use hub::{FakeHub, HubRequest};
pub use model::packaged_model_dir;
pub use otlp::{OtlpSink, ReceivedSpan};
pub use tools::{Scripted, SpecOnly, scripted};
