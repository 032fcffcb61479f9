//! `toolgate doctor`: what this machine offers toolgate, each check `ok`, `warn` or `fail`
//! with an explanation. Exits 1 when a check the configuration depends on fails (e.g.
//! `[shell] sandbox = "required"` on a kernel without Landlock), else 0.
//!
//! Checks: Landlock (by the version syscall), seccomp, the process limit, hiding toolgate's
//! own files from commands, the shell sandbox end to end (`true` run through the configured shell tool), the data dir, the workspace,
//! chromium (report only), Tool RAG (`[rag]`: the model loads and embeds, the embeddings
//! endpoint and the reranker answer), and one `mcp server NAME` check per configured MCP
//! server (connected as `serve` would; an enabled server that cannot be reached fails), and
//! with `[telemetry]` exporting, whether the collector accepts connections (warn if not).

use std::path::Path;

use serde::Serialize;
use serde_json::json;
use toolgate_core::{CancellationToken, ToolContext};
use toolgate_tools::sandbox::ProcessLimit;
use toolgate_tools::{Sandbox, SandboxMode};

use crate::cli::DoctorArgs;
use crate::output;
use toolgate_app::Config;

/// Where the browser tool will look for Chromium.
const CHROMIUM: &str = "/usr/bin/chromium";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    name: String,
    status: Status,
    detail: String,
}

fn check(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
    }
}

pub async fn run(settings: &Config, args: DoctorArgs) -> anyhow::Result<i32> {
    let mode = settings.file.shell.sandbox;
    // What a missing sandbox piece means under this configuration.
    let missing = if mode == SandboxMode::Required {
        Status::Fail
    } else {
        Status::Warn
    };
    let support = Sandbox::probe();
    let reason = support.reason.clone().unwrap_or_default();
    let mut checks = vec![
        match &support.namespaces {
            Some(version) => check(
                "namespaces",
                Status::Ok,
                format!(
                    "{version}: sandboxed processes get their own mount, PID, IPC, UTS and \
                     network namespaces and see only the workspace, their grants and the \
                     system trees (read-only)"
                ),
            ),
            None => check("namespaces", missing, reason.clone()),
        },
        match support.landlock_abi {
            Some(abi) => check("landlock", Status::Ok, landlock_detail(abi)),
            None => check("landlock", missing, reason.clone()),
        },
        if support.seccomp {
            check("seccomp", Status::Ok, "seccomp filters can be installed")
        } else {
            check("seccomp", missing, reason)
        },
        match support.process_limit {
            ProcessLimit::CgroupPids => check(
                "process limit",
                Status::Ok,
                "a pids cgroup per command bounds its processes (max_processes)",
            ),
            ProcessLimit::Rlimit => check(
                "process limit",
                Status::Ok,
                "RLIMIT_NPROC bounds a command's processes on top of those the user already runs",
            ),
            ProcessLimit::Unenforced => check(
                "process limit",
                Status::Warn,
                "running as root without a writable pids cgroup: max_processes is not enforced",
            ),
        },
        if support.hides_protected_paths {
            check(
                "protected paths",
                Status::Ok,
                "sandboxed commands see the data dir and toolgate.toml empty and read-only",
            )
        } else {
            check(
                "protected paths",
                missing,
                "no unprivileged user namespaces: sandboxed commands could change the data dir \
                 and toolgate.toml when they are inside the workspace (enable user namespaces, \
                 or keep --data-dir outside the workspace)",
            )
        },
        shell_sandbox(settings, mode).await,
        data_dir(settings),
        match std::fs::read_dir(&settings.workspace) {
            Ok(_) => check(
                "workspace",
                Status::Ok,
                format!("{} is readable", settings.workspace.display()),
            ),
            Err(e) => check(
                "workspace",
                Status::Fail,
                format!("cannot read {}: {e}", settings.workspace.display()),
            ),
        },
        if Path::new(CHROMIUM).is_file() {
            check("chromium", Status::Ok, format!("{CHROMIUM} found"))
        } else {
            check(
                "chromium",
                Status::Warn,
                format!("{CHROMIUM} not found: the browser tool needs Debian's `chromium` package"),
            )
        },
    ];
    checks.extend(rag(settings).await);
    checks.extend(mcp_servers(settings).await);
    checks.extend(telemetry(settings).await);
    checks.extend(approval_channels(settings).await);
    checks.push(conversations(settings).await);
    checks.push(tool_definitions(settings).await);
    let ok = checks.iter().all(|c| c.status != Status::Fail);
    if args.json {
        output::json(&json!({ "ok": ok, "checks": checks }))?;
    } else {
        let rows: Vec<Vec<String>> = checks
            .iter()
            .map(|c| {
                let status = serde_json::to_value(c.status)?;
                Ok(vec![
                    status.as_str().unwrap_or_default().to_owned(),
                    c.name.clone(),
                    c.detail.clone(),
                ])
            })
            .collect::<anyhow::Result<_>>()?;
        output::table(&["STATUS", "CHECK", "DETAIL"], &rows);
    }
    Ok(if ok { 0 } else { 1 })
}

/// `[conversations]` over `[model]`: off (no model, or switched off) is fine; a model whose
/// settings or key are wrong fails; a model server that does not accept connections warns.
async fn conversations(settings: &Config) -> Check {
    const NAME: &str = "conversations";
    if !settings.file.conversations.enabled {
        return check(NAME, Status::Ok, "off ([conversations] enabled = false)");
    }
    let model = &settings.file.model;
    if model.model.is_empty() {
        return check(
            NAME,
            Status::Ok,
            "off: set [model] to talk to the agent on the console's Chat page and /v1/chat/completions",
        );
    }
    if let Err(e) = toolgate_agent::connect(model, &settings.file.egress) {
        return check(NAME, Status::Fail, format!("[model]: {e}"));
    }
    let base = model.base_url().to_owned();
    match reach(&base).await {
        Reach::NoAddress => check(
            NAME,
            Status::Fail,
            format!("[model] base_url {base} has no host and port"),
        ),
        Reach::Open => check(
            NAME,
            Status::Ok,
            format!(
                "the agent answers with {} at {base} (the server accepts connections)",
                model.model
            ),
        ),
        Reach::Refused(e) => check(
            NAME,
            Status::Warn,
            format!("the model server at {base} refuses connections ({e}): turns will fail"),
        ),
        Reach::Silent => check(
            NAME,
            Status::Warn,
            format!("the model server at {base} did not answer within 3 s: turns will fail"),
        ),
    }
}

/// Whether a TCP connection to a URL's host and port opens within 3 s.
enum Reach {
    NoAddress,
    Open,
    Refused(std::io::Error),
    Silent,
}

async fn reach(url: &str) -> Reach {
    let target = url::Url::parse(url).ok().and_then(|u| {
        let host = u
            .host_str()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        Some((host, u.port_or_known_default()?))
    });
    let Some((host, port)) = target else {
        return Reach::NoAddress;
    };
    let connect = tokio::net::TcpStream::connect((host.as_str(), port));
    match tokio::time::timeout(std::time::Duration::from_secs(3), connect).await {
        Ok(Ok(_)) => Reach::Open,
        Ok(Err(e)) => Reach::Refused(e),
        Err(_) => Reach::Silent,
    }
}

/// The catalog's definitions under `tools lint`'s rules, summarised: a warn when a finding is
/// a warning or an error (a model will guess or confuse tools), never a fail.
async fn tool_definitions(settings: &Config) -> Check {
    let name = "tool definitions";
    let specs = match super::tools_lint::catalog_specs(settings, None).await {
        Ok(specs) => specs,
        Err(e) => {
            return check(
                name,
                Status::Warn,
                format!("cannot read the catalog: {e:#}"),
            );
        }
    };
    let findings = toolgate_lint::lint_catalog(&specs, &toolgate_lint::LintOptions::default());
    let counts = toolgate_lint::render::counts(&findings);
    let status = if counts["error"] + counts["warning"] > 0 {
        Status::Warn
    } else {
        Status::Ok
    };
    check(
        name,
        status,
        format!(
            "{} tools: {} errors, {} warnings, {} notes (details: toolgate tools lint)",
            specs.len(),
            counts["error"],
            counts["warning"],
            counts["note"]
        ),
    )
}

/// `[[approvals.channels]]`: each channel's secrets set, its token accepted by the service,
/// each chat reachable — or why not (a fail: approvals would not reach anyone there).
async fn approval_channels(settings: &Config) -> Vec<Check> {
    let channels = &settings.file.approvals.channels;
    let bots = toolgate_chatbots::doctor::check(
        &settings.file.bots,
        &settings.file.egress,
        settings.file.server.public_url.as_deref(),
    )
    .await;
    let mut checks: Vec<Check> = toolgate_channels::doctor::check(channels, &settings.file.egress)
        .await
        .into_iter()
        .chain(bots)
        .map(|f| {
            let status = if f.ok { Status::Ok } else { Status::Fail };
            check(f.name, status, f.detail)
        })
        .collect();
    // Mapped principals without the operator right in the configuration: they can decide only
    // through an issued operator token (read at each tap), which may not exist.
    let configured: Vec<&str> = settings
        .file
        .server
        .tokens
        .iter()
        .filter(|t| t.operator)
        .map(|t| t.principal.as_str())
        .chain(settings.file.approvals.operators.iter().map(String::as_str))
        .collect();
    for channel in channels {
        let mut unproven: Vec<&str> = channel
            .operators
            .values()
            .map(String::as_str)
            .filter(|p| !configured.contains(p))
            .collect();
        unproven.sort_unstable();
        unproven.dedup();
        if !unproven.is_empty() {
            checks.push(check(
                format!("approvals: {} operators", channel.via()),
                Status::Warn,
                format!(
                    "{} hold(s) no operator token in [[server.tokens]] and are not in [approvals] \
                     operators: their taps are refused unless an issued operator token stands \
                     for them (toolgate token list)",
                    unproven.join(", ")
                ),
            ));
        }
    }
    checks
}

/// `[telemetry]`, when it exports: whether the collector accepts connections. A warning at
/// worst — a collector that is down never fails a call, its spans are dropped.
async fn telemetry(settings: &Config) -> Option<Check> {
    let cfg = &settings.file.telemetry;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if !cfg.exports(env) {
        return None;
    }
    let url = cfg
        .signal_url("traces")
        .or_else(|| env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .unwrap_or_else(|| "http://localhost:4318".to_owned());
    Some(match reach(&url).await {
        Reach::NoAddress => check(
            "telemetry",
            Status::Warn,
            format!("the collector URL {url} has no host and port"),
        ),
        Reach::Open => check(
            "telemetry",
            Status::Ok,
            format!("exporting over OTLP/HTTP to {url}: the collector accepts connections"),
        ),
        Reach::Refused(e) => check(
            "telemetry",
            Status::Warn,
            format!(
                "the collector at {url} refuses connections ({e}): spans and metrics are dropped, calls are unaffected"
            ),
        ),
        Reach::Silent => check(
            "telemetry",
            Status::Warn,
            format!(
                "the collector at {url} did not answer within 3 s: spans and metrics are dropped, calls are unaffected"
            ),
        ),
    })
}

/// `[rag]`: which retrieval is active (BM25 only names the command that upgrades it), one
/// embedding through the embedder (`model_dir`, the endpoint, or the pulled model), one
/// scoring through `[rag.reranker]`; without an embedder, BM25 only is fine.
async fn rag(settings: &Config) -> Vec<Check> {
    use toolgate_app::rag::{describe, embedder, embedding_source, reranker};
    let cfg = &settings.file.rag;
    let mut checks = Vec::new();
    let probe = "toolgate doctor".to_owned();
    let active = describe(
        &embedding_source(settings, cfg),
        cfg.mode().unwrap_or(toolgate_rag::Mode::Hybrid),
    );
    let started = std::time::Instant::now();
    checks.push(match embedder(settings, cfg) {
        Ok(None) => check("tool rag", Status::Ok, active),
        Ok(Some(e)) => {
            let loaded = started.elapsed();
            let started = std::time::Instant::now();
            match e.embed(std::slice::from_ref(&probe)).await {
                Ok(v) => check(
                    "tool rag",
                    Status::Ok,
                    format!(
                        "{active}: {}, {} dimensions, loaded in {} ms, one query embedded in {} ms",
                        e.id(),
                        v.first().map_or(0, Vec::len),
                        loaded.as_millis(),
                        started.elapsed().as_millis()
                    ),
                ),
                Err(err) => check(
                    "tool rag",
                    Status::Fail,
                    format!("{active}: {}: {err}", e.id()),
                ),
            }
        }
        Err(err) => check("tool rag", Status::Fail, format!("{active}: {err:#}")),
    });
    match reranker(settings) {
        Ok(None) => {}
        Ok(Some((r, depth))) => {
            let docs = [probe.clone(), "tide tables".to_owned()];
            checks.push(match r.scores(&probe, &docs).await {
                Ok(_) => check(
                    "tool rag reranker",
                    Status::Ok,
                    format!("answers; reorders the best {depth} candidates"),
                ),
                Err(err) => check("tool rag reranker", Status::Fail, err.to_string()),
            });
        }
        Err(err) => checks.push(check("tool rag reranker", Status::Fail, format!("{err:#}"))),
    }
    checks
}

fn landlock_detail(abi: u32) -> String {
    let mut covers = vec!["file system"];
    if abi >= 4 {
        covers.push("TCP connect/bind");
    }
    if abi >= 6 {
        covers.push("signal and abstract-socket scoping");
    }
    format!("Landlock ABI {abi}: {}", covers.join(", "))
}

/// Runs `true` through the shell tool exactly as configured.
async fn shell_sandbox(settings: &Config, mode: SandboxMode) -> Check {
    let tools = match toolgate_app::assemble::workspace_tools(settings) {
        Ok(tools) => tools,
        Err(e) => return check("shell sandbox", Status::Fail, format!("{e:#}")),
    };
    let Some(shell) = tools.iter().find(|t| t.spec().name == "shell") else {
        return check("shell sandbox", Status::Fail, "no shell tool");
    };
    let ctx = ToolContext {
        call_id: "doctor".to_owned(),
        session_id: "doctor".into(),
        principal: format!("cli:{}", crate::user::local_user()).into(),
        role: settings.role.clone().into(),
        cancel: CancellationToken::new(),
        progress: toolgate_core::ProgressSink::none(),
        caller: toolgate_core::CallerLink::none(),
        trace: None,
    };
    let outcome = shell.call(json!({"command": "true"}), ctx).await;
    match outcome {
        Ok(out) => {
            let label = out.data["sandbox"].as_str().unwrap_or("none").to_owned();
            let status = match (mode, label.as_str()) {
                (_, "namespaces+landlock+seccomp") => Status::Ok,
                (SandboxMode::Off, _) => Status::Warn,
                (SandboxMode::Required, _) => Status::Fail,
                (SandboxMode::IfAvailable, _) => Status::Warn,
            };
            let how = if label == "none" {
                "WITHOUT a sandbox".to_owned()
            } else {
                format!("in {label}")
            };
            check(
                "shell sandbox",
                status,
                format!(
                    "sandbox = \"{}\": commands run {how} (ran `true`)",
                    mode.as_str()
                ),
            )
        }
        Err(e) => check(
            "shell sandbox",
            Status::Fail,
            format!("sandbox = \"{}\": `true` failed: {e}", mode.as_str()),
        ),
    }
}

/// Created if missing (as any command would), then written to.
fn data_dir(settings: &Config) -> Check {
    match toolgate_app::stores::ensure_data_dir(settings) {
        Ok(()) => check(
            "data dir",
            Status::Ok,
            format!("{} is writable", settings.data_dir.display()),
        ),
        Err(e) => check("data dir", Status::Fail, format!("{e:#}")),
    }
}

/// Each configured MCP server, connected the way `serve` connects it (same `[egress]`).
async fn mcp_servers(settings: &Config) -> Vec<Check> {
    use toolgate_mcp_client::ServerState;
    let statuses = match super::mcp::probe(settings).await {
        Ok(s) => s,
        Err(e) => return vec![check("mcp servers", Status::Fail, format!("{e:#}"))],
    };
    statuses
        .into_iter()
        .map(|s| {
            let name = format!("mcp server {}", s.name);
            let sandbox = super::mcp::sandbox_label(settings, &s.name);
            let confined = !(sandbox.starts_with("OFF") || sandbox.starts_with("NONE"));
            match s.state {
                ServerState::Ready => check(
                    name,
                    if confined { Status::Ok } else { Status::Warn },
                    format!(
                        "reachable: protocol {}, {} tools; sandbox: {sandbox}",
                        s.protocol_version.as_deref().unwrap_or("?"),
                        s.tools
                    ),
                ),
                ServerState::Disabled => check(name, Status::Ok, "disabled (enabled = false)"),
                ServerState::Failed { error, .. } => {
                    check(name, Status::Fail, format!("not reachable: {error}"))
                }
                other => check(name, Status::Fail, format!("not ready: {other:?}")),
            }
        })
        .collect()
}
