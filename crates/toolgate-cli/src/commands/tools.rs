//! `toolgate tools list | show | export | approve-change`. Over `[rag] threshold` the catalog
//! has `search_tools`, and `export` can retrieve (`--query`) or defer (`--deferred`).

use anyhow::{Context, bail};
use serde_json::json;
use toolgate_protocol::export::export_deferred;
use toolgate_protocol::{ExportFormat, ToolSpec, export as export_as};
use toolgate_rag::{SEARCH_TOOLS, is_meta_tool};
use toolgate_registry::{Availability, Entry, description_flags};

use crate::cli::ToolsCommand;
use crate::output;
use toolgate_app::Config;
use toolgate_app::rag::Rag;
use toolgate_app::{Runtime, RuntimeOptions};

fn availability(e: &Entry) -> String {
    match &e.availability {
        Availability::Available => "available".to_owned(),
        Availability::Unavailable(r) => format!("unavailable: {r}"),
        Availability::Quarantined(r) => format!("quarantined: {r}"),
    }
}

pub async fn run(settings: &Config, cmd: ToolsCommand) -> anyhow::Result<i32> {
    if let ToolsCommand::ApproveChange { name, yes, by } = cmd {
        return crate::commands::approve_change::run(settings, &name, yes, by).await;
    }
    if let ToolsCommand::Search(args) = cmd {
        return crate::commands::tools_search::run(settings, args).await;
    }
    if let ToolsCommand::Lint(args) = cmd {
        return crate::commands::tools_lint::run(settings, args).await;
    }
    let runtime = Runtime::open(settings, RuntimeOptions::command().with_rag(true)).await?;
    let shown = show(settings, runtime.gateway(), runtime.rag(), cmd).await;
    runtime.shutdown().await?;
    shown
}

async fn show(
    settings: &Config,
    gateway: &toolgate_gateway::Gateway,
    rag: Option<&Rag>,
    cmd: ToolsCommand,
) -> anyhow::Result<i32> {
    let role = &settings.role;
    let visible: Vec<Entry> = gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| gateway.visible_to(role, e))
        .collect();
    match cmd {
        ToolsCommand::List { json } => {
            if json {
                let list: Vec<_> = visible
                    .iter()
                    .map(|e| {
                        let s = e.spec();
                        json!({"name": s.name, "risk": s.risk, "source": s.source,
                               "availability": e.availability, "description": s.description,
                               "tags": s.tags})
                    })
                    .collect();
                output::json(&list)?;
            } else {
                let rows: Vec<Vec<String>> = visible
                    .iter()
                    .map(|e| {
                        let s = e.spec();
                        vec![
                            s.name.clone(),
                            s.risk.to_string(),
                            s.source.clone(),
                            availability(e),
                            output::short(&s.description, 70),
                        ]
                    })
                    .collect();
                output::table(&["NAME", "RISK", "SOURCE", "STATUS", "DESCRIPTION"], &rows);
            }
        }
        ToolsCommand::Show { name, json } => {
            let Some(e) = visible.iter().find(|e| e.spec().name == name) else {
                bail!(
                    "no tool named `{name}` is visible to role `{role}` (see `toolgate tools list`)"
                );
            };
            let others: Vec<String> = gateway
                .catalog()
                .all()
                .iter()
                .map(|o| o.spec().name.clone())
                .filter(|n| *n != name)
                .collect();
            let flags = description_flags(e.spec(), &others);
            let mut doc = serde_json::to_value(e.spec()).context("serialising the tool")?;
            doc["availability"] = json!(e.availability);
            doc["description_flags"] = json!(flags);
            if json {
                output::json(&doc)?;
            } else {
                let s = e.spec();
                output::text_line(&format!(
                    "{}  ({} risk, {}, {})",
                    s.name,
                    s.risk,
                    s.source,
                    availability(e)
                ));
                output::line("");
                output::text_line(&s.description);
                output::line("");
                output::line("input schema:");
                output::text_line(&serde_json::to_string_pretty(&s.input_schema)?);
                if !s.annotations.is_empty() {
                    output::line("annotations:");
                    output::text_line(&serde_json::to_string_pretty(&s.annotations)?);
                }
                if !flags.is_empty() {
                    output::line("suspicious text (review before trusting this tool):");
                    for flag in &flags {
                        output::text_line(&format!("  - {flag}"));
                    }
                }
            }
        }
        ToolsCommand::ApproveChange { name, yes, by } => {
            return crate::commands::approve_change::run(settings, &name, yes, by).await;
        }
        // Answered by `run` before the catalog is listed.
        ToolsCommand::Search(_) | ToolsCommand::Lint(_) => {}
        ToolsCommand::Export {
            format,
            query,
            k,
            deferred,
        } => {
            let format: ExportFormat = format.parse().map_err(anyhow::Error::msg)?;
            let request = ExportRequest {
                format,
                query: query.as_deref(),
                k: k.unwrap_or(settings.file.rag.k),
                deferred,
            };
            let tools = export(gateway, rag, role, &request).await?;
            output::json(&tools)?;
        }
    }
    Ok(0)
}

/// What `tools export` was asked for.
struct ExportRequest<'a> {
    format: ExportFormat,
    query: Option<&'a str>,
    k: usize,
    deferred: bool,
}

fn refs(specs: &[ToolSpec]) -> Vec<&ToolSpec> {
    specs.iter().collect()
}

/// Notes for whoever reads the export (stderr: stdout is the JSON).
#[allow(clippy::print_stderr)]
fn note(text: &str) {
    eprintln!("toolgate: {text}");
}

/// The export: every visible tool at or below the threshold; over it, the top K for
/// `--query` plus `search_tools`, or the deferred form, or (neither) every tool plus
/// `search_tools`.
async fn export(
    gateway: &toolgate_gateway::Gateway,
    rag: Option<&Rag>,
    role: &str,
    req: &ExportRequest<'_>,
) -> anyhow::Result<serde_json::Value> {
    if req.k == 0 {
        bail!("-k must be at least 1");
    }
    if req.query.is_some_and(|q| q.trim().is_empty()) {
        bail!("--query is empty: give the user's request in words");
    }
    let visible: Vec<ToolSpec> = gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| e.is_available() && gateway.visible_to(role, e))
        .map(|e| e.spec().clone())
        .collect();
    let retrieval = rag.filter(|r| r.applies_to(role));
    let Some(rag) = retrieval else {
        let tools: Vec<ToolSpec> = visible
            .into_iter()
            .filter(|s| s.name != SEARCH_TOOLS)
            .collect();
        if req.query.is_some() || req.deferred {
            note(&format!(
                "role `{role}` sees {} tools, not more than [rag] threshold: retrieval is off and every tool is exported",
                tools.iter().filter(|s| !is_meta_tool(&s.name)).count()
            ));
        }
        return Ok(export_as(&refs(&tools), req.format));
    };
    let search_tools: Vec<ToolSpec> = visible
        .iter()
        .filter(|s| s.name == SEARCH_TOOLS)
        .cloned()
        .collect();
    let top = match req.query {
        Some(q) => {
            let policy = gateway
                .roles()
                .get(role)
                .with_context(|| format!("unknown role `{role}`"))?;
            rag.search
                .find(policy, q, req.k)
                .await
                .context("searching the catalog")?
                .into_iter()
                .map(|f| f.spec)
                .collect()
        }
        None => Vec::new(),
    };
    if req.deferred && req.format.has_deferred_form() {
        let tools: Vec<ToolSpec> = visible
            .into_iter()
            .filter(|s| s.name != SEARCH_TOOLS)
            .collect();
        let loaded: Vec<&str> = top.iter().map(|s| s.name.as_str()).collect();
        return export_deferred(&refs(&tools), &loaded, req.format)
            .context("no deferred form for this format");
    }
    if req.query.is_none() {
        if req.deferred {
            bail!(
                "{} has no deferred-loading form; give --query \"the user's request\" for its top K plus search_tools",
                req.format
            );
        }
        note(&format!(
            "role `{role}` sees more than [rag] threshold ({}) tools: exporting all of them plus search_tools; --query \"the user's request\" exports the top {} instead{}",
            rag.threshold,
            req.k,
            if req.format.has_deferred_form() {
                ", --deferred the API's deferred-loading form"
            } else {
                ""
            }
        ));
        return Ok(export_as(&refs(&visible), req.format));
    }
    if req.deferred {
        note(&format!(
            "{} has no deferred-loading form: exporting the top {} for the query plus search_tools",
            req.format, req.k
        ));
    }
    let tools: Vec<ToolSpec> = top.into_iter().chain(search_tools).collect();
    Ok(export_as(&refs(&tools), req.format))
}
