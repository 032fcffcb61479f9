//! The retrieval eval (R-RAG-4, feature `retrieval`): Tool RAG measured on real data, as
//! `toolgate eval retrieval` runs it. It measures toolgate-rag from outside, through its
//! public index, embedder and vector cache; toolgate-rag knows nothing of it.
//!
//! - [`set`]: [`EvalSet`], BFCL's function docs as the catalog and its questions as queries
//!   ([`EvalQuery`]), with deterministic smaller catalogs ([`Subset`]).
//! - [`openapi`]: real tools from OpenAPI documents (one per operation) to pad the catalog.
//! - [`metrics`]: [`Metrics`] (recall@1/5/10, MRR, nDCG@10) and their mean, [`MetricsSum`].
//! - [`run`](mod@run): [`evaluate`] (every retriever on one catalog size, optionally a
//!   [`Rerank`] second stage), [`run`](fn@run) (every size, vectors through the cache), and
//!   [`export`] for the Python references (`crates/toolgate-eval/scripts/rag_reference.py`:
//!   rank-bm25 and a numpy vector top-k on the same export).
//!
//! ```
//! use std::collections::HashSet;
//! use toolgate_eval::retrieval::Metrics;
//! let relevant: HashSet<String> = ["get_weather".to_owned()].into();
//! let m = Metrics::of(&["get_forecast", "get_weather"], &relevant);
//! assert_eq!((m.recall_at_1, m.recall_at_5, m.mrr), (0.0, 1.0, 0.5));
//! ```

pub mod metrics;
pub mod openapi;
pub mod run;
pub mod set;

pub use metrics::{Metrics, MetricsSum};
pub use openapi::{OpenApiError, directory_docs};
pub use run::{
    ReportRow, Rerank, RerankFn, RetrievalError, RunOptions, Vectors, evaluate, export, run,
};
pub use set::{EvalQuery, EvalSet, Subset};
