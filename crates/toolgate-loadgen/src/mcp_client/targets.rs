//! The targets of `mcp-client`: a bare rmcp client, the gateway over an `McpHub`, and the
//! Python SDK's client as a child process.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use toolgate_audit::{AuditLog, Durability};
use toolgate_gateway::policy::{DecisionName, RoleConfig, RuleConfig};
use toolgate_gateway::{Arguments, CallRequest, Gateway, GatewayConfig, GatewayDeps};
use toolgate_mcp_client::{McpHub, RetryPolicy, ServerConfig};
use toolgate_registry::Catalog;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;

use super::{ClientResult, EchoCaller};

/// The server's name in the hub, so the tool is `mcp__bench__echo`.
const SERVER: &str = "bench";
const ROLE: &str = "bench";

fn split(server: &[String]) -> anyhow::Result<(&String, &[String])> {
    server.split_first().context("no server command given")
}

struct Direct(RunningService<RoleClient, ()>);

#[async_trait::async_trait]
impl EchoCaller for Direct {
    async fn echo(&self, i: usize) -> Result<(), String> {
        let mut args = serde_json::Map::new();
        args.insert("message".into(), json!(format!("m{i}")));
        let r = self
            .0
            .peer()
            .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
            .await
            .map_err(|e| e.to_string())?;
        if r.is_error == Some(true) {
            return Err(format!("echo failed: {:?}", r.content));
        }
        Ok(())
    }
}

pub async fn rmcp_direct(server: &[String]) -> anyhow::Result<Arc<dyn EchoCaller>> {
    let (program, args) = split(server)?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).stderr(std::process::Stdio::null());
    let transport = TokioChildProcess::new(command).context("starting the server")?;
    let client = ().serve(transport).await.context("initialize")?;
    Ok(Arc::new(Direct(client)))
}

struct ThroughGateway {
    gateway: Gateway,
    _hub: McpHub,
    _dir: tempfile::TempDir,
}

#[async_trait::async_trait]
impl EchoCaller for ThroughGateway {
    async fn echo(&self, i: usize) -> Result<(), String> {
        let request = CallRequest::new(
            format!("mcp__{SERVER}__echo"),
            Arguments::Json(json!({"message": format!("m{i}")})),
        )
        .with_role(ROLE);
        let envelope = self.gateway.call(request).await;
        match envelope.error {
            None => Ok(()),
            Some(e) => Err(format!("{}: {}", e.code.as_str(), e.message)),
        }
    }
}

/// The gateway with toolgate's default layers over stores in a temp dir; the bench role
/// allows every tool (an untrusted MCP tool is `write` risk, which the default role asks for).
pub async fn gateway(
    server: &[String],
    durability: Durability,
) -> anyhow::Result<Arc<dyn EchoCaller>> {
    let (program, args) = split(server)?;
    let dir = tempfile::tempdir().context("temp dir")?;
    let p = dir.path();
    let db = p.join("toolgate.db");
    let catalog = Arc::new(Catalog::new());
    let config = ServerConfig::stdio(SERVER, program.clone())
        .with_args(args.iter().cloned())
        .with_startup_timeout(Duration::from_secs(60));
    let hub = McpHub::start(vec![config], Arc::clone(&catalog), RetryPolicy::default())
        .await
        .context("starting the MCP hub")?;
    if catalog.get(&format!("mcp__{SERVER}__echo")).is_none() {
        bail!("the server has no echo tool (status: {:?})", hub.status());
    }
    let deps = GatewayDeps {
        catalog,
        audit: Arc::new(AuditLog::open(
            &p.join("logs/tool-audit.jsonl"),
            &db,
            durability,
        )?),
        approvals: Arc::new(ApprovalStore::open(&db)?),
        results: Arc::new(ResultStore::open(&p.join("results"))?),
        idempotency: Arc::new(IdempotencyStore::open(&db)?),
        redactor: Arc::new(Redactor::default()),
        approver: None,
        quota_buckets: std::sync::Arc::new(toolgate_store::quotas::MemoryBuckets::default()),
    };
    let cfg = GatewayConfig {
        roles: BTreeMap::from([(
            ROLE.to_owned(),
            RoleConfig {
                rules: vec![RuleConfig {
                    tool: "*".into(),
                    decision: DecisionName::Allow,
                    confirm: None,
                }],
                ..RoleConfig::default()
            },
        )]),
        ..GatewayConfig::default()
    };
    let gateway = Gateway::new(deps, &cfg).context("building the gateway")?;
    Ok(Arc::new(ThroughGateway {
        gateway,
        _hub: hub,
        _dir: dir,
    }))
}

/// Runs the Python SDK's client script and reads its one JSON line.
pub fn python(
    python: &Path,
    script: &Path,
    server: &[String],
    concurrency: usize,
    warmup: usize,
    calls: usize,
) -> anyhow::Result<ClientResult> {
    let out = std::process::Command::new(python)
        .arg(script)
        .args(["--calls", &calls.to_string()])
        .args(["--warmup", &warmup.to_string()])
        .args(["--concurrency", &concurrency.to_string()])
        .arg("--")
        .args(server)
        .stderr(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!("{} failed ({})", script.display(), out.status);
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} printed no JSON", script.display()))?;
    let num = |k: &str| v[k].as_f64().unwrap_or(0.0);
    Ok(ClientResult {
        target: "python-mcp".to_owned(),
        concurrency,
        calls,
        seconds: num("seconds"),
        calls_per_sec: num("calls_per_s"),
        p50_us: num("p50_us") as u64,
        p99_us: num("p99_us") as u64,
        errors: num("errors") as usize,
    })
}
