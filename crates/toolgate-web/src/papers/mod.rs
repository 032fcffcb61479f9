//! `retrieve_papers` and its sources, one concern per file:
//! - [`paper`]: [`PaperQuery`], [`Filters`], [`PaperId`] (DOI / arXiv id, normalised),
//!   [`Paper`].
//! - [`source`]: the [`PaperSource`] trait and [`PapersError`].
//! - [`http`]: [`PaperHttp`], the one GET every source makes (spacing, 429 / `Retry-After`
//!   backoff, size cap, scrubbed error excerpts) through the guarded client.
//! - [`clock`]: [`Clock`], the time those waits use ([`TokioClock`]; tests inject their own).
//! - [`arxiv`], [`openalex`], [`semantic_scholar`], [`crossref`]: the four indexes.
//! - [`merge`](mod@merge): de-duplication by DOI / arXiv id and reciprocal rank fusion.
//! - [`config`]: [`PapersConfig`], the `[web.papers]` table; [`build`]: the table → the tool.
//! - [`tool`]: the tool itself, [`RetrievePapersTool`].

pub mod arxiv;
pub mod build;
pub mod clock;
pub mod config;
pub mod crossref;
pub mod http;
pub mod merge;
pub mod openalex;
pub mod paper;
pub mod semantic_scholar;
pub mod source;
pub mod tool;

pub use arxiv::ArxivSource;
pub use build::papers_tool;
pub use clock::{Clock, TokioClock};
pub use config::{PaperSourceKind, PapersConfig, PapersConfigError};
pub use crossref::CrossrefSource;
pub use http::{HttpLimits, PaperHttp};
pub use openalex::OpenAlexSource;
pub use paper::{Filters, Paper, PaperId, PaperQuery};
pub use semantic_scholar::SemanticScholarSource;
pub use source::{PaperSource, PapersError};
pub use tool::{PapersLimits, RetrievePapersTool};
