//! BFCL (the Berkeley Function Calling Leaderboard): its data and an AST checker that gives
//! the same verdicts as the official one (`bfcl_eval.eval_checker.ast_eval.ast_checker`).
//!
//! - [`category`]: [`Category`], the single-turn categories, with their [`CheckKind`] and
//!   [`Language`].
//! - [`data`]: [`BfclData`], locating and reading the data set shipped in `bfcl-eval`.
//! - [`value`]: [`PyValue`], JSON with Python's types, key order and equality.
//! - [`output`]: [`Call`], one decoded call of a model's output; [`parse_output`].
//! - [`checker`]: [`check`], the verdict on one output.
//! - [`verdict`]: [`Verdict`], [`Failure`], [`ErrorKind`] (the official `error_type`s).
//! - [`cost`]: [`Tokens`], [`Price`] and the [`CostFigures`] (cost per run, pass@1 per
//!   dollar, tokens per solved entry) reported beside accuracy.
//! - [`mutate`]: the ground truth as output and mutations of it (agreement test, bench).
//! - [`prompt`]: the function docs as tool definitions ([`prompt::tool_specs`]).
//! - `run` (feature `runner`, on by default): asking a model every entry (`run_model`),
//!   judging outputs (`score`) and the per-category `Report`.
//! - [`types`]: the type tables and string normalisation; `java` / `js`: the value
//!   converters of the Java and JavaScript categories.

pub mod category;
pub mod checker;
pub mod cost;
pub mod data;
mod java;
mod js;
pub mod mutate;
pub mod output;
pub mod prompt;
#[cfg(feature = "runner")]
pub mod run;
pub mod types;
pub mod value;
pub mod verdict;

pub use category::{Category, CheckKind, Language, UnknownCategory};
pub use checker::{CheckOptions, check};
pub use cost::{CostFigures, Price, Tokens};
pub use data::{
    AnswerError, BfclData, Case, DATA_ENV, DataError, Entry, ExpectedCall, FunctionDoc, Message,
};
pub use output::{ArgumentsError, Call, parse_output};
pub use value::{PyType, PyValue};
pub use verdict::{ErrorKind, Failure, Verdict};
