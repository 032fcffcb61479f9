//! `toolgate tools search "QUERY" [--role R] [-k N] [--mode M] [--explain] [--json]`: Tool
//! RAG over the live catalog (built-ins, web/browser tools, configured MCP servers), through
//! the filter chain of the role (allowlist → availability → risk policy) before the top K
//! is cut, so nothing the role may not see is ranked, shown or counted by name.

use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::json;
use toolgate_gateway::Gateway;
use toolgate_protocol::ToolSpec;
use toolgate_rag::{FilterChain, Mode};

use crate::cli::SearchArgs;
use crate::output;
use toolgate_app::Config;
use toolgate_app::rag::{UPGRADE_COMMAND, describe, embedding_source, tool_search};
use toolgate_app::{Runtime, RuntimeOptions};

pub async fn run(settings: &Config, args: SearchArgs) -> anyhow::Result<i32> {
    let runtime = Runtime::open(settings, RuntimeOptions::command()).await?;
    let result = search(settings, runtime.gateway(), args).await;
    runtime.shutdown().await?;
    result
}

async fn search(settings: &Config, gateway: &Gateway, args: SearchArgs) -> anyhow::Result<i32> {
    let cfg = &settings.file.rag;
    let role_name = args.role.as_deref().unwrap_or(&settings.role);
    let Some(role) = gateway.roles().get(role_name) else {
        let names: Vec<&str> = gateway.roles().names().collect();
        bail!(
            "unknown role `{role_name}` (configured roles: {})",
            names.join(", ")
        );
    };
    if args.query.trim().is_empty() {
        bail!("the query is empty: describe what the tool should do");
    }
    let k = args.k.unwrap_or(cfg.k);
    if k == 0 {
        bail!("-k must be at least 1");
    }
    let mut mode: Mode = match &args.mode {
        Some(m) => m.parse().map_err(anyhow::Error::msg)?,
        None => cfg.mode().map_err(anyhow::Error::msg)?,
    };
    let active = describe(&embedding_source(settings, cfg), mode);
    let search = Arc::new(tool_search(settings)?);
    let mut note = None;
    if !search.has_embedder() && mode != Mode::Bm25 {
        if mode == Mode::Dense {
            bail!(
                "--mode dense needs an embedding model: run `{UPGRADE_COMMAND}`, or set [rag] model_dir or [rag.endpoint]"
            );
        }
        mode = Mode::Bm25;
        note = Some(active.clone());
    }
    let snap = gateway.catalog().snapshot();
    let specs: Vec<ToolSpec> = snap.entries().map(|e| e.spec().clone()).collect();
    let refreshed = search
        .refresh(&specs)
        .await
        .context("indexing the catalog")?;
    let chain = FilterChain::new(role, &snap);
    let hits = search
        .search(&args.query, k, mode, &|n| chain.admits(n))
        .await
        .context("searching")?;
    if args.json {
        let list: Vec<_> = hits
            .iter()
            .filter_map(|h| {
                let s = snap.get(&h.name)?.spec().clone();
                Some(
                    json!({"name": h.name, "score": h.score, "bm25": h.bm25, "dense": h.dense,
                            "rerank": h.rerank, "risk": s.risk, "description": s.description}),
                )
            })
            .collect();
        output::json(&list)?;
        return Ok(0);
    }
    if args.explain {
        output::line(&format!("retrieval: {active}"));
        note = None;
        let names = search.with_index(|ix| ix.names().map(str::to_owned).collect::<Vec<_>>());
        let tally = chain.tally(names.iter().map(String::as_str));
        output::line(&format!(
            "mode {} · {} tools indexed ({} embedded now, {} from the cache) · role `{role_name}`: {} visible; hidden by role {}, availability {}, risk policy {}",
            serde_json::to_value(mode)?.as_str().unwrap_or("?"),
            names.len(),
            refreshed.embedded,
            refreshed.cached,
            tally.admitted,
            tally.role,
            tally.availability,
            tally.risk
        ));
        match search.reranker_depth() {
            Some(depth) if hits.iter().any(|h| h.rerank.is_some()) => output::line(&format!(
                "reranked: the best {depth} permitted candidates reordered by [rag.reranker]"
            )),
            Some(_) if hits.len() > 1 => output::line(
                "[rag.reranker] did not answer: fused order (`toolgate doctor` says why)",
            ),
            _ => {}
        }
    }
    if let Some(n) = note {
        output::line(&n);
    }
    if hits.is_empty() {
        output::line(&format!(
            "no tool visible to role `{role_name}` matches \"{}\"",
            args.query
        ));
        return Ok(0);
    }
    let show = |r: Option<toolgate_rag::RetrieverScore>| {
        r.map_or("-".to_owned(), |r| format!("#{} {:.3}", r.rank, r.score))
    };
    let reranked = hits.iter().any(|h| h.rerank.is_some());
    let rows: Vec<Vec<String>> = hits
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let s = snap.get(&h.name)?.spec();
            let mut row = vec![
                (i + 1).to_string(),
                h.name.clone(),
                format!("{:.3}", h.score),
            ];
            if args.explain {
                row.push(show(h.bm25));
                row.push(show(h.dense));
                if reranked {
                    row.push(show(h.rerank));
                }
            }
            row.push(s.risk.to_string());
            row.push(output::short(&s.description, 60));
            Some(row)
        })
        .collect();
    if args.explain && reranked {
        output::table(
            &[
                "#",
                "NAME",
                "SCORE",
                "BM25",
                "DENSE",
                "RERANK",
                "RISK",
                "DESCRIPTION",
            ],
            &rows,
        );
    } else if args.explain {
        output::table(
            &["#", "NAME", "SCORE", "BM25", "DENSE", "RISK", "DESCRIPTION"],
            &rows,
        );
    } else {
        output::table(&["#", "NAME", "SCORE", "RISK", "DESCRIPTION"], &rows);
    }
    Ok(0)
}
