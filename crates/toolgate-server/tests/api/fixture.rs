//! A toolgate server on 127.0.0.1:0 over a gateway on temp stores, with scriptable tools and
//! three tokens; plus small HTTP helpers. Every request goes through [`checked::Client`], which
//! holds the answer against the OpenAPI document ([`crate::contract`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate_audit::Durability;
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::Risk;
use toolgate_registry::{Catalog, PinBook};
use toolgate_server::config::TokenConfig;
use toolgate_server::state::{DefinitionCheck, McpStatus};
use toolgate_server::{AppState, Inner, ServeError, ServerConfig};
use toolgate_store::approvals::ApprovalStore;

use crate::checked;

pub use toolgate_testkit::{Scripted, scripted};

/// Tokens of the fixture: `op-token` (alice, default role, operator), `dev-token` (bob,
/// default role), `narrow-token` (carol, role `narrow`: only `echo`).
pub const OP: &str = "op-token";
pub const DEV: &str = "dev-token";
pub const NARROW: &str = "narrow-token";

pub fn tokens() -> Vec<TokenConfig> {
    let t = |token: &str, principal: &str, role: &str, operator: bool| TokenConfig {
        sha256: toolgate_server::auth::hash_token(token),
        principal: principal.into(),
        role: role.into(),
        operator,
    };
    vec![
        t(OP, "alice", "default", true),
        t(DEV, "bob", "default", false),
        t(NARROW, "carol", "narrow", false),
    ]
}

pub fn gateway_config() -> GatewayConfig {
    let mut cfg = GatewayConfig::default();
    cfg.limits.call_timeout_secs = 30;
    cfg.limits.max_argument_bytes = 4096;
    cfg.roles = toolgate_testkit::roles::test_roles();
    cfg
}

/// What a test may change before the server starts.
pub struct Setup {
    pub server: ServerConfig,
    pub gateway: GatewayConfig,
    /// Pretend the server is bound here (e.g. 0.0.0.0) while it listens on 127.0.0.1.
    pub pretend_addr: Option<SocketAddr>,
    /// Where readiness looks for the audit log (default: the real one).
    pub audit_jsonl: Option<PathBuf>,
    /// The catalog's pin book (default: none, nothing is pinned).
    pub pins: Option<Arc<dyn PinBook>>,
    /// The federated MCP servers' status `/v1/ready` shows operators (default: none).
    pub mcp_status: Option<McpStatus>,
    /// How `GET /v1/tools/{name}` checks a definition (default: none).
    pub definition_check: Option<DefinitionCheck>,
    /// The model of the conversations (default: none, and their routes answer 503).
    pub model: Option<Arc<dyn toolgate_agent::ModelClient>>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            server: ServerConfig {
                tokens: tokens(),
                shutdown_grace_secs: 30,
                ..ServerConfig::default()
            },
            gateway: gateway_config(),
            pretend_addr: None,
            audit_jsonl: None,
            pins: None,
            mcp_status: None,
            definition_check: None,
            model: None,
        }
    }
}

pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub base: String,
    pub addr: SocketAddr,
    pub state: AppState,
    pub echo: Arc<Scripted>,
    pub writer: Arc<Scripted>,
    pub client: checked::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ServeError>>>,
}

pub fn db_path(dir: &std::path::Path) -> PathBuf {
    dir.join("toolgate.db")
}

pub fn audit_path(dir: &std::path::Path) -> PathBuf {
    dir.join("logs/tool-audit.jsonl")
}

pub fn client() -> checked::Client {
    checked::Client::new(
        reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap(),
    )
}

impl TestServer {
    /// Tokens configured, `toolgate.internal` an allowed host and
    /// `https://console.example` an allowed origin (the Host/Origin tests).
    pub async fn with_internal_hosts() -> TestServer {
        TestServer::with(Setup {
            server: toolgate_server::ServerConfig {
                tokens: tokens(),
                allowed_hosts: vec!["toolgate.internal".into()],
                allowed_origins: vec!["https://console.example".into()],
                ..toolgate_server::ServerConfig::default()
            },
            ..Setup::default()
        })
        .await
    }

    pub async fn start() -> TestServer {
        TestServer::with(Setup::default()).await
    }

    pub async fn with(setup: Setup) -> TestServer {
        // As `toolgate serve` does: metrics are collected for /metrics (each test is its
        // own process, so this is per test).
        toolgate_telemetry::Telemetry::install(&toolgate_telemetry::TelemetryConfig::default())
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let catalog = Arc::new(match setup.pins {
            Some(pins) => Catalog::new().with_pins(pins),
            None => Catalog::new(),
        });
        let echo = scripted("echo", Risk::Read);
        let writer = scripted("writer", Risk::Write);
        let danger = scripted("danger", Risk::Dangerous);
        catalog
            .register_many(vec![echo.clone(), writer.clone(), danger])
            .unwrap();
        let db = db_path(p);
        let deps = GatewayDeps::open_dir(p, catalog, Durability::Durable).unwrap();
        let gateway = Arc::new(Gateway::new(deps, &setup.gateway).unwrap());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let tokens =
            toolgate_server::auth::TokenBook::open(toolgate_store::TokenStore::open(&db).unwrap())
                .await
                .unwrap();
        let conversations = setup.model.map(|client| {
            toolgate_conversations::Conversations::new(toolgate_conversations::ConversationDeps {
                store: toolgate_store::Store::open_embedded(&db, &p.join("results"))
                    .unwrap()
                    .conversations(),
                gateway: Arc::clone(&gateway),
                model: toolgate_conversations::ModelSetup {
                    client,
                    system: None,
                    max_steps: 6,
                    max_tokens: None,
                    parallel_tool_calls: None,
                    selector: None,
                },
                config: toolgate_conversations::ConversationsConfig::default(),
            })
        });
        let mut state = AppState::new(Inner {
            gateway,
            approvals: Arc::new(ApprovalStore::open(&db).unwrap()),
            audit_jsonl: setup.audit_jsonl.unwrap_or_else(|| audit_path(p)),
            audit_db: db,
            config: setup.server,
            local_addr: setup.pretend_addr.unwrap_or(addr),
            started: Instant::now(),
            shutdown: CancellationToken::new(),
        })
        .with_max_argument_bytes(setup.gateway.limits.max_argument_bytes)
        .with_tokens(tokens);
        if let Some(status) = setup.mcp_status {
            state = state.with_mcp_status(status);
        }
        if let Some(check) = setup.definition_check {
            state = state.with_definition_check(check);
        }
        if let Some(conversations) = conversations {
            state = state.with_conversations(Ok(conversations));
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(toolgate_server::serve(
            listener,
            state.clone(),
            async move {
                let _ = stopped.await;
            },
        ));
        TestServer {
            dir,
            base: format!("http://{addr}"),
            addr,
            state,
            echo,
            writer,
            client: client(),
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> checked::Request {
        with_token(self.client.get(self.url(path)), token)
    }

    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> checked::Request {
        with_token(self.client.post(self.url(path)), token).json(body)
    }

    /// GET, expecting `status`; returns the JSON body.
    pub async fn get_json(&self, path: &str, token: Option<&str>, status: u16) -> Value {
        answer(self.get(path, token).send().await.unwrap(), status).await
    }

    /// POST a JSON body, expecting `status`; returns the JSON body.
    pub async fn post_json(
        &self,
        path: &str,
        token: Option<&str>,
        body: &Value,
        status: u16,
    ) -> Value {
        answer(self.post(path, token, body).send().await.unwrap(), status).await
    }

    /// POST /v1/calls; returns the envelope (the answer is always 200).
    pub async fn call(&self, token: Option<&str>, body: Value) -> Value {
        self.post_json("/v1/calls", token, &body, 200).await
    }

    /// Begins shutdown and waits for `serve` to return.
    pub async fn shutdown(&mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => tokio::time::timeout(Duration::from_secs(60), task)
                .await
                .expect("serve returns")
                .unwrap(),
            None => Ok(()),
        }
    }

    /// The audit file's records, as written.
    pub fn audit_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(audit_path(self.dir.path()))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

pub fn with_token(rb: checked::Request, token: Option<&str>) -> checked::Request {
    match token {
        Some(t) => rb.bearer_auth(t),
        None => rb,
    }
}

/// Asserts the status and returns the JSON body.
pub async fn answer(resp: reqwest::Response, status: u16) -> Value {
    let got = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    assert_eq!(got, status, "body: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The code of an envelope (`ok` for a success) or of an error body.
pub fn code(v: &Value) -> String {
    if v["ok"] == json!(true) {
        return "ok".into();
    }
    let e = if v.get("error").is_some() {
        &v["error"]
    } else {
        v
    };
    e["code"].as_str().unwrap_or("?").to_owned()
}

/// An envelope's `error.details.approval_id`.
pub fn approval_id(envelope: &Value) -> String {
    envelope["error"]["details"]["approval_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval id in {envelope}"))
        .to_owned()
}

/// Polls `check` every 20 ms until it returns `Some`, for at most 20 s.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads server-sent events from a response.
pub struct SseReader {
    resp: reqwest::Response,
    buf: String,
}

impl SseReader {
    pub fn new(resp: reqwest::Response) -> SseReader {
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(
            resp.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        SseReader {
            resp,
            buf: String::new(),
        }
    }

    /// The next `approval` event as (event name, data as JSON), skipping comments and the
    /// `synced` marker; `None` when the stream ended. Panics after 20 s without one.
    pub async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            match self.next_any().await {
                Some((name, _)) if name == "synced" => continue,
                other => return other,
            }
        }
    }

    /// The next event of any name, `synced` included.
    pub async fn next_any(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if name.is_empty() && data.is_empty() {
                    continue; // a keep-alive comment
                }
                let data = serde_json::from_str(&data).unwrap();
                crate::contract::assert_event(&name, &data);
                return Some((name, data));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.resp.chunk())
                .await
                .expect("an event within 20 s")
                .unwrap();
            match chunk {
                Some(bytes) => self.buf.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }
}
