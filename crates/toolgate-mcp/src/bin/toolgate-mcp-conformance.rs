//! The client under test of the official MCP conformance suite in client mode
//! (`npx conformance client --command toolgate-mcp-conformance --scenario …`).
//!
//! The suite starts a mock server per scenario, appends its URL as the last argument and
//! names the scenario in `MCP_CONFORMANCE_SCENARIO` (credentials, when a scenario has them,
//! in `MCP_CONFORMANCE_CONTEXT`). This client connects over Streamable HTTP with the
//! `initialize` handshake through the same pieces the gateway uses — the SSRF-guarded
//! client (loopback allowlisted, as a local test needs), and for `auth/*` scenarios
//! `toolgate_mcp::auth` (discovery, registration or CIMD or a pre-registered client, PKCE,
//! tokens in a throw-away credential store) — lists the tools and calls one
//! (`add_numbers {a: 5, b: 3}` when offered, otherwise the first tool with `{}`).
//!
//! The mock authorization server approves at once: the "browser" here fetches the
//! authorization URL without following redirects and delivers the `Location` to the
//! loopback listener of [`toolgate_mcp::auth::login()`]. A 401 or 403 `insufficient_scope`
//! challenge starts a new login with that challenge (scope step-up), at most
//! [`MAX_LOGINS`] times. Elicitation is not offered (toolgate routes it to the approval
//! channel, which this harness has not); servers asking anyway get a decline.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Map, Value, json};
use toolgate_mcp::auth::{
    AuthConfig, AuthContext, AuthError, LoginOptions, authorized_client, login,
};
use toolgate_net::EgressPolicy;
use toolgate_store::CredentialStore;

/// Logins one run may start (the first one and step-ups) before giving up.
const MAX_LOGINS: usize = 3;
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
const SECRET_VAR: &str = "CONFORMANCE_CLIENT_SECRET";

#[derive(Clone)]
struct Handler;

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        let mut elicitation = rmcp::model::ElicitationCapability::new();
        elicitation.form = Some(rmcp::model::FormElicitationCapability::default());
        capabilities.elicitation = Some(elicitation);
        ClientConfig::new(
            capabilities,
            Implementation::new("toolgate-conformance", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    /// Headless approval, as for logins: the operator accepts the form as offered, i.e.
    /// with the schema's defaults (what toolgate's approval channel sends on approve).
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        Ok(match request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => {
                let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(Value::Object(toolgate_mcp::elicit::defaults_of(&schema)))
            }
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        say("usage: toolgate-mcp-conformance SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("conformance client: {scenario}: {e}"));
            ExitCode::FAILURE
        }
    }
}

fn egress() -> EgressPolicy {
    ["127.0.0.1", "localhost", "[::1]"]
        .into_iter()
        .try_fold(EgressPolicy::default(), |p, h| {
            p.allow_host(h).and_then(|p| p.allow_plain_http(h))
        })
        .unwrap_or_default()
}

/// `MCP_CONFORMANCE_CONTEXT` (credentials of some auth scenarios), or an empty object.
fn context() -> Map<String, Value> {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default()
}

fn auth_config(scenario: &str, ctx: &Map<String, Value>) -> Option<AuthConfig> {
    if !scenario.starts_with("auth/") {
        return None;
    }
    let client_id = ctx
        .get("client_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let has_secret = ctx.contains_key("client_secret");
    Some(if scenario.starts_with("auth/client-credentials") {
        AuthConfig::ClientCredentials {
            client_id: client_id.unwrap_or_default(),
            client_secret_env: SECRET_VAR.into(),
            scopes: Vec::new(),
        }
    } else if client_id.is_some() {
        AuthConfig::Oauth {
            client_id,
            client_secret_env: has_secret.then(|| SECRET_VAR.into()),
            client_metadata_url: None,
            scopes: Vec::new(),
            redirect_port: None,
        }
    } else {
        AuthConfig::Oauth {
            client_id: None,
            client_secret_env: None,
            client_metadata_url: Some(CIMD_URL.into()),
            scopes: Vec::new(),
            redirect_port: None,
        }
    })
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let ctx_json = context();
    let auth = auth_config(scenario, &ctx_json);
    // A throw-away store: SQLite in memory.
    let store = Arc::new(
        CredentialStore::open(std::path::Path::new(":memory:")).map_err(|e| e.to_string())?,
    );
    let secret = ctx_json
        .get("client_secret")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let auth_ctx = AuthContext::new(egress(), store).with_env(Arc::new(move |name| {
        (name == SECRET_VAR).then(|| secret.clone()).flatten()
    }));

    let mut logins = 0;
    let mut challenge: Option<String> = None;
    loop {
        let outcome = match &auth {
            None => {
                let client = toolgate_mcp::connect::http_client(&auth_ctx.egress)
                    .map_err(|e| e.to_string())?;
                session(client, url).await
            }
            Some(auth) => match authorized_client("conformance", url, auth, &auth_ctx).await {
                Ok(client) => session(client, url).await,
                Err(AuthError::LoginRequired { .. }) => Err(Failure::Challenge(None)),
                Err(e) => Err(Failure::Other(e.to_string())),
            },
        };
        match outcome {
            Ok(()) => return Ok(()),
            Err(Failure::Challenge(c)) if logins < MAX_LOGINS && auth.is_some() => {
                logins += 1;
                challenge = c.or(challenge);
                let auth = auth.as_ref().ok_or("no auth")?;
                let options = LoginOptions {
                    challenge: challenge.clone(),
                    ..LoginOptions::default()
                };
                let outcome = login(
                    "conformance",
                    url,
                    auth,
                    &auth_ctx,
                    options,
                    headless_browser,
                )
                .await
                .map_err(|e| format!("login {logins}: {e}"))?;
                say(&format!("logged in: scopes {:?}", outcome.scopes));
            }
            Err(Failure::Challenge(c)) => {
                return Err(format!(
                    "still refused after {logins} logins: {}",
                    c.unwrap_or_default()
                ));
            }
            Err(Failure::Other(e)) => return Err(e),
        }
    }
}

enum Failure {
    /// A 401 or 403 with this `WWW-Authenticate` (if any): log in (again).
    Challenge(Option<String>),
    Other(String),
}

fn failure(e: &dyn std::error::Error) -> Failure {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    for marker in ["authorization required: ", "insufficient scope: "] {
        if let Some(at) = text.find(marker) {
            let rest = &text[at + marker.len()..];
            return Failure::Challenge(Some(rest.split(": ").next().unwrap_or(rest).to_owned()));
        }
    }
    if text.contains("Auth required") || text.contains("401") {
        return Failure::Challenge(None);
    }
    Failure::Other(text)
}

async fn session<C: StreamableHttpClient>(client: C, url: &str) -> Result<(), Failure> {
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    let service: RunningService<RoleClient, Handler> =
        Handler.serve(transport).await.map_err(|e| failure(&e))?;
    let result = exercise(&service).await;
    let _ = service.cancel().await;
    result
}

async fn exercise(service: &RunningService<RoleClient, Handler>) -> Result<(), Failure> {
    let tools = service.list_all_tools().await.map_err(|e| failure(&e))?;
    say(&format!(
        "tools: {:?}",
        tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>()
    ));
    let (name, args) = if tools.iter().any(|t| t.name == "add_numbers") {
        ("add_numbers".to_owned(), json!({"a": 5, "b": 3}))
    } else if let Some(first) = tools.first() {
        (first.name.to_string(), json!({}))
    } else {
        return Ok(());
    };
    let mut params = CallToolRequestParams::new(name.clone());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = service.call_tool(params).await.map_err(|e| failure(&e))?;
    say(&format!("{name}: {:?}", result.content));
    Ok(())
}

/// Plays the user's browser against an authorization server that approves at once.
fn headless_browser(auth_url: &str) {
    let auth_url = auth_url.to_owned();
    tokio::spawn(async move {
        let policy = EgressPolicy {
            max_redirects: 0,
            ..egress()
        };
        let Ok(client) = toolgate_net::client(&policy) else {
            return;
        };
        let location = match client.get(&auth_url).send().await {
            Ok(r) => r
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned),
            Err(e) => {
                say(&format!("authorization request failed: {e}"));
                None
            }
        };
        match location {
            Some(back) => {
                let _ = client.get(back).send().await;
            }
            None => say("the authorization server did not redirect back"),
        }
    });
}
