//! A gateway on temp stores with scriptable tools.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolgate_audit::{AuditLog, Durability};
use toolgate_gateway::{Arguments, CallRequest, Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::{Envelope, Risk};
use toolgate_registry::Catalog;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;

pub use toolgate_testkit::{Scripted, scripted};

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub gateway: Gateway,
    pub approvals: Arc<ApprovalStore>,
    pub echo: Arc<Scripted>,
    pub writer: Arc<Scripted>,
    pub danger: Arc<Scripted>,
}

pub fn config() -> GatewayConfig {
    let mut cfg = GatewayConfig::default();
    cfg.limits.call_timeout_secs = 1;
    cfg.limits.result_budget_bytes = 100;
    cfg.limits.result_hard_limit_bytes = 10_000;
    cfg.roles = toolgate_testkit::roles::test_roles();
    cfg
}

pub fn audit_path(dir: &Path) -> PathBuf {
    dir.join("logs/tool-audit.jsonl")
}

impl Harness {
    pub fn new() -> Harness {
        Harness::open(tempfile::tempdir().unwrap(), &config())
    }

    /// A gateway over the stores in `dir` (a fresh process would do the same).
    pub fn open(dir: tempfile::TempDir, cfg: &GatewayConfig) -> Harness {
        Harness::open_with(dir, cfg, Catalog::new())
    }

    /// Like [`Harness::open`] with a catalog of the caller's (with a pin book, say).
    pub fn open_with(dir: tempfile::TempDir, cfg: &GatewayConfig, catalog: Catalog) -> Harness {
        let p = dir.path();
        let catalog = Arc::new(catalog);
        let echo = scripted("echo", Risk::Read);
        let writer = scripted("writer", Risk::Write);
        let danger = scripted("danger", Risk::Dangerous);
        catalog
            .register_many(vec![echo.clone(), writer.clone(), danger.clone()])
            .unwrap();
        let approvals = Arc::new(ApprovalStore::open(&p.join("toolgate.db")).unwrap());
        let deps = GatewayDeps {
            catalog,
            audit: Arc::new(
                AuditLog::open(&audit_path(p), &p.join("toolgate.db"), Durability::Durable)
                    .unwrap(),
            ),
            approvals: Arc::clone(&approvals),
            results: Arc::new(ResultStore::open(&p.join("results")).unwrap()),
            idempotency: Arc::new(IdempotencyStore::open(&p.join("toolgate.db")).unwrap()),
            redactor: Arc::new(Redactor::default()),
            approver: None,
            quota_buckets: std::sync::Arc::new(toolgate_store::quotas::MemoryBuckets::default()),
        };
        let gateway = Gateway::new(deps, cfg).unwrap();
        Harness {
            dir,
            gateway,
            approvals,
            echo,
            writer,
            danger,
        }
    }

    pub async fn call(&self, tool: &str, args: Value) -> Envelope {
        self.call_as("default", tool, args).await
    }

    pub async fn call_as(&self, role: &str, tool: &str, args: Value) -> Envelope {
        self.gateway
            .call(CallRequest::new(tool, Arguments::Json(args)).with_role(role))
            .await
    }

    pub async fn call_text(&self, tool: &str, text: &str) -> Envelope {
        self.gateway
            .call(CallRequest::new(tool, Arguments::Text(text.to_owned())))
            .await
    }

    /// The audit file's records as JSON.
    pub fn audit_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(audit_path(self.dir.path()))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

pub fn code(e: &Envelope) -> &'static str {
    e.error.as_ref().map_or("ok", |e| e.code.as_str())
}

pub fn approval_id(e: &Envelope) -> String {
    e.error.as_ref().unwrap().details.as_ref().unwrap()["approval_id"]
        .as_str()
        .unwrap()
        .to_owned()
}
