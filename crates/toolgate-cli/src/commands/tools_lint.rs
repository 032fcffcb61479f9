//! `toolgate tools lint`: every definition in the catalog (built-ins and each federated
//! server's, quarantined ones too) through toolgate-lint; a table, JSON or SARIF. Exit
//! status: 0 when no finding reaches `--fail-on`, 2 when one does, 1 on bad flags.

use anyhow::bail;
use toolgate_app::{Config, Runtime, RuntimeOptions};
use toolgate_lint::confusable::pairs_by_vectors;
use toolgate_lint::render;
use toolgate_lint::{ConfusablePair, LintOptions, Severity, lint_catalog};
use toolgate_protocol::ToolSpec;

use crate::cli::LintArgs;
use crate::output;

/// Every definition in the catalog (quarantined and unavailable ones too), or one source's:
/// `builtin` or an MCP server's name.
pub async fn catalog_specs(
    settings: &Config,
    server: Option<&str>,
) -> anyhow::Result<Vec<ToolSpec>> {
    let runtime = Runtime::open(settings, RuntimeOptions::command()).await?;
    let specs: Vec<ToolSpec> = runtime
        .gateway()
        .catalog()
        .all()
        .into_iter()
        .map(|e| e.spec().clone())
        .filter(|s| match server {
            None => true,
            Some("builtin") => !s.source.starts_with("mcp:"),
            Some(server) => s.source.strip_prefix("mcp:") == Some(server),
        })
        .collect();
    runtime.shutdown().await?;
    Ok(specs)
}

pub async fn run(settings: &Config, args: LintArgs) -> anyhow::Result<i32> {
    let fail_on = match args.fail_on.as_str() {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "note" => Some(Severity::Note),
        "never" => None,
        other => bail!("--fail-on `{other}`: expected error, warning, note or never"),
    };
    if !matches!(args.format.as_str(), "text" | "json" | "sarif") {
        bail!("--format `{}`: expected text, json or sarif", args.format);
    }
    if !(0.0..=1.0).contains(&args.confusable_threshold) {
        bail!("--confusable-threshold must be between 0 and 1");
    }
    if !(0.0..=1.0).contains(&args.encoder_threshold) {
        bail!("--encoder-threshold must be between 0 and 1");
    }
    let specs = catalog_specs(settings, args.server.as_deref()).await?;
    if let Some(server) = &args.server
        && specs.is_empty()
    {
        bail!("no tools from `{server}` in the catalog (see toolgate mcp list)");
    }
    let options = LintOptions {
        confusable_threshold: args.confusable_threshold,
        extra_pairs: encoder_pairs(settings, &specs, args.encoder_threshold).await?,
    };
    let findings = lint_catalog(&specs, &options);
    match args.format.as_str() {
        "json" => output::json(&render::json(specs.len(), &findings))?,
        "sarif" => output::json(&render::sarif(&findings, env!("CARGO_PKG_VERSION")))?,
        _ => {
            if !findings.is_empty() {
                output::table(&render::TEXT_HEADER, &render::text_rows(&findings));
                output::line("");
            }
            let counts = render::counts(&findings);
            output::line(&format!(
                "{} tools: {} errors, {} warnings, {} notes",
                specs.len(),
                counts["error"],
                counts["warning"],
                counts["note"]
            ));
        }
    }
    let failed = fail_on.is_some_and(|level| findings.iter().any(|f| f.severity <= level));
    Ok(if failed { 2 } else { 0 })
}

/// Pairs too alike by Tool RAG's encoder (cosine of the texts it embeds for retrieval), when
/// `[rag]` has an embedding model (configured, or the default one pulled) and is not
/// `mode = "bm25"`; none otherwise — BM25's pairs are always found.
async fn encoder_pairs(
    settings: &Config,
    specs: &[ToolSpec],
    threshold: f32,
) -> anyhow::Result<Vec<ConfusablePair>> {
    if settings.file.rag.mode()? == toolgate_rag::Mode::Bm25 || specs.len() < 2 {
        return Ok(Vec::new());
    }
    let Some(embedder) = toolgate_app::rag::embedder(settings, &settings.file.rag)? else {
        return Ok(Vec::new());
    };
    let texts: Vec<String> = specs
        .iter()
        .map(|s| toolgate_rag::ToolDoc::from_spec(s).embedding_text())
        .collect();
    let vectors = embedder.embed(&texts).await?;
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    Ok(pairs_by_vectors(&names, &vectors, threshold))
}
