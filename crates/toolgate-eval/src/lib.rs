//! toolgate-eval: measuring function calling (R-EVAL-1).
//!
//! # Layout
//! - [`bfcl`]: the BFCL data set ([`bfcl::BfclData`]) and a BFCL-compatible AST checker.
//! - `retrieval` (feature `retrieval`, on by default): Tool RAG's retrieval eval on BFCL's
//!   docs and questions (`retrieval::EvalSet`, `retrieval::run`), against the Python
//!   references. It depends on toolgate-rag; toolgate-rag does not depend on this crate.
//!
//! ```no_run
//! use toolgate_eval::bfcl::{BfclData, Category};
//! let data = BfclData::locate(None)?; // --data, $TOOLGATE_BFCL_DATA, or the installed bfcl-eval
//! let cases = data.load(Category::LiveSimple)?;
//! assert_eq!(cases.len(), 258);
//! # Ok::<(), toolgate_eval::bfcl::DataError>(())
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod bfcl;
#[cfg(feature = "retrieval")]
pub mod retrieval;
