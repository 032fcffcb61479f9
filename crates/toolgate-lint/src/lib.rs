//! toolgate-lint: what in a tool definition will make a model guess. The design toolgate
//! follows puts schema design first among the foundations of reliable tool calling: names
//! in snake_case starting with a verb, descriptions that say when to use a tool and when not
//! to, every parameter described with its enum, unit and format. This crate checks a whole
//! catalog against those rules, finds pairs of tools a model (or Tool RAG) will confuse, and
//! gives every finding a concrete fix. Pure: no IO, the binary renders and prints.
//!
//! # Layout
//! - [`finding`]: [`Finding`], [`Rule`] (the closed list of rule ids), [`Severity`].
//! - [`name`]: name style (snake_case) and verb first.
//! - [`description`]: length and the "when not to use" boundary.
//! - [`schema`]: every parameter described, enums for closed sets, units and formats,
//!   `required` lists, depth and size.
//! - [`hints`]: MCP annotations that contradict the risk the operator gave the tool.
//! - [`confusable`]: pairs of tools too alike by BM25 (Tool RAG's own index), or by given
//!   vectors.
//! - [`lint`](mod@lint): [`lint_catalog`], every rule over every tool, sorted.
//! - [`render`]: text, JSON and SARIF 2.1.0.
//!
//! ```
//! use serde_json::json;
//! use toolgate_lint::{LintOptions, Rule, lint_catalog};
//! use toolgate_protocol::ToolSpec;
//!
//! let spec = ToolSpec::new("FetchData", "Gets data.", json!({
//!     "type": "object",
//!     "properties": {"timeout": {"type": "integer"}},
//! }));
//! let findings = lint_catalog(&[spec], &LintOptions::default());
//! let rules: Vec<Rule> = findings.iter().map(|f| f.rule).collect();
//! assert!(rules.contains(&Rule::NameStyle));
//! assert!(rules.contains(&Rule::ParamDescription));
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod confusable;
pub mod description;
pub mod finding;
pub mod hints;
pub mod lint;
pub mod name;
pub mod render;
pub mod schema;

pub use confusable::{ConfusablePair, confusable_pairs};
pub use finding::{Finding, Rule, Severity};
pub use lint::{LintOptions, lint_catalog};
