//! `toolgate eval retrieval`: Tool RAG measured on real data (R-RAG-4). The catalog is
//! BFCL's function docs (all categories, deduplicated, padded with BFCL's other real docs),
//! the queries BFCL's questions with their ground-truth functions as relevant. Reports
//! recall@1/5/10, MRR and nDCG@10 for BM25, dense and hybrid at 100, 1,000 and the full
//! catalog and, with `--references`, the same export scored by rank-bm25 and a numpy
//! vector top-k in the same run. Exit status 0 when the eval ran, 1 when it could not.

use anyhow::{Context, bail};
use std::sync::Arc;
use toolgate_eval::bfcl::BfclData;
use toolgate_eval::retrieval::{EvalSet, ReportRow, Rerank, RunOptions, directory_docs, run};

use crate::cli::RetrievalArgs;
use crate::output;
use toolgate_app::Config;
use toolgate_app::rag::EmbeddingSource;

/// `[rag.reranker]` as the eval's synchronous second stage (the eval itself is synchronous;
/// each question's request runs on this multi-threaded runtime).
fn rerank(settings: &Config) -> anyhow::Result<Rerank> {
    let Some((reranker, depth)) = toolgate_app::rag::reranker(settings)? else {
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
const REFERENCE_SCRIPT: &str = "crates/toolgate-eval/scripts/rag_reference.py";

pub fn run_retrieval(settings: &Config, args: RetrievalArgs) -> anyhow::Result<i32> {
    let data = BfclData::locate(args.data.as_deref())?;
    let mut set = EvalSet::from_bfcl(&data).context("reading the BFCL data")?;
    if let Some(dir) = &args.pad_openapi {
        let want = args.pad_to.saturating_sub(set.docs.len());
        set.pad_with(directory_docs(dir, want)?);
    }
    // `--model-dir`, else `[rag] model_dir`, else the model `toolgate rag model pull` cached.
    let model_dir = args.model_dir.clone().map_or_else(
        || match toolgate_app::rag::embedding_source(settings, &settings.file.rag) {
            EmbeddingSource::ModelDir(d) | EmbeddingSource::Pulled(d) => Some(d),
            EmbeddingSource::Endpoint { .. } | EmbeddingSource::None => None,
        },
        |d| {
            Some(if d.is_absolute() {
                d
            } else {
                settings.workspace.join(d)
            })
        },
    );
    let fusion_specs = if args.fusion.is_empty() {
        vec![settings.file.rag.fusion.clone()]
    } else {
        args.fusion.clone()
    };
    let mut fusions = Vec::new();
    for f in fusion_specs {
        let parsed: toolgate_rag::Fusion = f.parse()?;
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
    toolgate_app::stores::ensure_data_dir(settings)?;
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
