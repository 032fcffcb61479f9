//! The shared fixture: test tools on a real gateway, "processes" over one store (embedded or
//! PostgreSQL), a scripted model, and helpers that read the journal.

pub(crate) use std::collections::BTreeMap;
pub(crate) use std::path::Path;
pub(crate) use std::sync::Arc;
pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
pub(crate) use std::time::Duration;

pub(crate) use async_trait::async_trait;
pub(crate) use serde_json::{Value, json};
pub(crate) use tokio_util::sync::CancellationToken;
pub(crate) use toolgate_audit::{AuditLog, Durability};
pub(crate) use toolgate_conversations::{
    ConversationDeps, ConversationError, ConversationRow, Conversations, ConversationsConfig,
    Entry, Event, ModelSetup, Posted, Speaker,
};
pub(crate) use toolgate_core::{Tool, ToolContext, ToolError};
pub(crate) use toolgate_gateway::approve::{Ask, Refusal};
pub(crate) use toolgate_gateway::policy::RoleConfig;
pub(crate) use toolgate_gateway::{Arguments, CallRequest, Gateway, GatewayConfig, GatewayDeps};
pub(crate) use toolgate_protocol::{Principal, Risk, ToolOutput, ToolSpec};
pub(crate) use toolgate_registry::Catalog;
pub(crate) use toolgate_store::approvals::DecisionScope;
pub(crate) use toolgate_store::redact::Redactor;
pub(crate) use toolgate_testkit::chat_model::{Say, ScriptedModel as Scripted};

/// How many times `note` and `wipe` acted in this test process.
pub(crate) static NOTES: AtomicU64 = AtomicU64::new(0);
pub(crate) static WIPES: AtomicU64 = AtomicU64::new(0);

pub(crate) struct TestTool(ToolSpec);

#[async_trait]
impl Tool for TestTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match self.0.name.as_str() {
            "note" => {
                let n = NOTES.fetch_add(1, Ordering::SeqCst) + 1;
                Ok(ToolOutput::json(json!({"noted": args["text"], "count": n})))
            }
            "wipe" => {
                WIPES.fetch_add(1, Ordering::SeqCst);
                Ok(ToolOutput::text("wiped"))
            }
            _ => Ok(ToolOutput::json(json!({"echo": args["text"]}))),
        }
    }
}

pub(crate) fn catalog() -> Arc<Catalog> {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                      "additionalProperties": false});
    let catalog = Arc::new(Catalog::new());
    catalog
        .register_many(vec![
            Arc::new(TestTool(
                ToolSpec::new("echo", "Echo the text.", text.clone()).with_risk(Risk::Read),
            )) as Arc<dyn Tool>,
            Arc::new(TestTool(
                ToolSpec::new("note", "Write a note.", text.clone()).with_risk(Risk::Write),
            )),
            Arc::new(TestTool(
                ToolSpec::new("wipe", "Wipe everything.", text).with_risk(Risk::Dangerous),
            )),
        ])
        .unwrap();
    catalog
}

/// The shared data dir of a "cluster": the store every process opens (the embedded database
/// in it, or a PostgreSQL schema of the test's own).
pub(crate) struct Shared {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) pg: Option<toolgate_testkit::pg::Scratch>,
}

/// One toolgate process over the shared store: its own gateway and audit log, its
/// conversations, and the signal that stops it.
pub(crate) struct Process {
    pub(crate) gateway: Arc<Gateway>,
    pub(crate) desk: Conversations,
    pub(crate) stop: CancellationToken,
    pub(crate) audit_path: std::path::PathBuf,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared {
            dir: tempfile::tempdir().unwrap(),
            pg: None,
        }
    }

    pub(crate) async fn postgres() -> Shared {
        Shared {
            dir: tempfile::tempdir().unwrap(),
            pg: Some(toolgate_testkit::pg::Scratch::new().await),
        }
    }

    /// A new connection to the shared store (another process, or replica).
    pub(crate) async fn store(&self) -> toolgate_store::Store {
        let p = self.dir.path();
        match &self.pg {
            None => {
                toolgate_store::Store::open_embedded(&p.join("toolgate.db"), &p.join("results"))
                    .unwrap()
            }
            Some(scratch) => {
                let url: toolgate_store::pg::PgUrl = scratch.url().parse().unwrap();
                let backend = toolgate_store::PgBackend::open(&url, CancellationToken::new())
                    .await
                    .unwrap();
                toolgate_store::Store::postgres(backend)
            }
        }
    }

    pub(crate) async fn process(
        &self,
        name: &str,
        model: Arc<Scripted>,
        config: ConversationsConfig,
    ) -> Process {
        let store = self.store().await;
        let own = self.dir.path().join(name);
        std::fs::create_dir_all(&own).unwrap();
        let audit_path = own.join("tool-audit.jsonl");
        let deps = GatewayDeps {
            catalog: catalog(),
            audit: Arc::new(
                AuditLog::open(&audit_path, &own.join("audit.db"), Durability::Durable).unwrap(),
            ),
            approvals: Arc::new(store.approvals()),
            results: Arc::new(store.results().unwrap()),
            idempotency: Arc::new(store.idempotency()),
            redactor: Arc::new(Redactor::default()),
            approver: None,
            quota_buckets: Arc::new(toolgate_store::quotas::MemoryBuckets::default()),
        };
        let cfg = GatewayConfig {
            roles: BTreeMap::from([
                ("default".to_owned(), RoleConfig::default()),
                // Sees `echo` only.
                (
                    "reader".to_owned(),
                    RoleConfig {
                        tools: vec!["echo".into()],
                        ..RoleConfig::default()
                    },
                ),
            ]),
            ..GatewayConfig::default()
        };
        let gateway = Arc::new(Gateway::new(deps, &cfg).unwrap());
        let desk = Conversations::new(ConversationDeps {
            store: store.conversations(),
            gateway: Arc::clone(&gateway),
            model: ModelSetup {
                client: model,
                system: None,
                max_steps: 6,
                max_tokens: None,
                parallel_tool_calls: None,
                selector: None,
            },
            config,
        });
        let stop = CancellationToken::new();
        desk.start(&stop);
        Process {
            gateway,
            desk,
            stop,
            audit_path,
        }
    }
}

impl Process {
    /// Stops the process where it stands (its turns journal nothing more).
    pub(crate) async fn kill(&self) {
        self.stop.cancel();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    pub(crate) async fn audit(&self) -> Vec<Value> {
        self.gateway.audit().flush().await.unwrap();
        read_lines(&self.audit_path)
    }
}

pub(crate) fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(crate) fn fast() -> ConversationsConfig {
    ConversationsConfig {
        lease_secs: 3,
        sweep_secs: 1,
        ..ConversationsConfig::default()
    }
}

pub(crate) fn alice() -> Speaker {
    Speaker {
        entry: "web".into(),
        chat: "chat-1".into(),
        user_ref: "alice".into(),
        principal: "alice".into(),
        role: "default".into(),
    }
}

pub(crate) async fn entries(desk: &Conversations, id: &str) -> Vec<Entry> {
    desk.entries(id, 0, 100_000).await.unwrap()
}

/// Waits (up to 15 s) until the journal holds an entry `pick` finds.
pub(crate) async fn wait_for<T>(
    desk: &Conversations,
    id: &str,
    pick: impl Fn(&Event) -> Option<T>,
) -> T {
    for _ in 0..750 {
        if let Some(found) = entries(desk, id).await.iter().find_map(|e| pick(&e.event)) {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "never journaled; the journal: {:#?}",
        entries(desk, id).await
    );
}

pub(crate) fn answer(e: &Event) -> Option<String> {
    match e {
        Event::Answer { text, .. } => Some(text.clone()),
        _ => None,
    }
}

pub(crate) fn card(e: &Event) -> Option<String> {
    match e {
        Event::Approval { approval_id, .. } => Some(approval_id.clone()),
        _ => None,
    }
}

pub(crate) fn kinds(entries: &[Entry]) -> Vec<&'static str> {
    entries.iter().map(|e| e.event.kind()).collect()
}

pub(crate) fn approve() -> Ask {
    Ask::approve(DecisionScope::Once)
}

pub(crate) async fn open(p: &Process) -> ConversationRow {
    p.desk.open(&alice()).await.unwrap()
}
