//! The client under test of the official MCP conformance suite in client mode
//! (`npx conformance client --command toolgate-mcp-conformance --scenario …`).
//!
//! The suite starts a mock server per scenario, appends its URL as the last argument and
//! names the scenario in `MCP_CONFORMANCE_SCENARIO` (credentials, when a scenario has them,
//! in `MCP_CONFORMANCE_CONTEXT`). What answers is the product's own client: an [`McpHub`]
//! with the scenario's server as its one `[[mcp.servers]]` entry, exactly as `toolgate
//! serve` federates a server — era negotiation (`server/discover` first, 2026-07-28, then
//! `initialize`), the SSRF-guarded HTTP client (loopback allowlisted, as a local test needs),
//! the standard and `Mcp-Param-*` headers, and for `auth/*` scenarios `toolgate_mcp_client::auth`
//! (discovery, registration or CIMD or a pre-registered client, PKCE, tokens in a throw-away
//! credential store). It lists the catalog the hub fills and calls one tool
//! (`add_numbers {a: 5, b: 3}` when offered, otherwise every tool with arguments built from
//! its schema), as the gateway's execute stage would.
//!
//! The mock authorization server approves at once: the "browser" here fetches the
//! authorization URL without following redirects and delivers the `Location` to the
//! loopback listener of [`toolgate_mcp_client::auth::login()`]. A server that needs a login, or a
//! 403 `insufficient_scope` on a call (scope step-up), starts a login with that challenge,
//! at most [`MAX_LOGINS`] times, as an operator running `toolgate mcp login` would.
//! Elicitation goes to a headless approval channel that accepts the form as offered (the
//! schema's defaults: what toolgate's approval channel sends on approve).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use toolgate_core::{CallerLink, ProgressSink, ToolContext};
use toolgate_mcp_client::auth::{AuthConfig, AuthContext, LoginOptions, login};
use toolgate_mcp_client::elicit::{ElicitationAnswer, ElicitationRequest, Elicitor};
use toolgate_mcp_client::{
    HubOptions, McpHub, NamePrefix, ProtocolChoice, RetryPolicy, ServerConfig, ServerState,
};
use toolgate_net::EgressPolicy;
use toolgate_registry::{Availability, Catalog, Entry};
use toolgate_store::CredentialStore;

/// Logins one run may start (the first one and step-ups) before giving up.
const MAX_LOGINS: usize = 3;
const SERVER: &str = "conformance";
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
const SECRET_VAR: &str = "CONFORMANCE_CLIENT_SECRET";
const STARTUP: Duration = Duration::from_secs(20);
/// The tool of the JSON Schema preservation scenario that echoes a schema back.
const SCHEMA_ECHO: &str = "json_schema_echo";

/// The operator approves every elicitation as offered.
#[derive(Debug)]
struct HeadlessApprover;

#[async_trait]
impl Elicitor for HeadlessApprover {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        ElicitationAnswer::Accept(toolgate_mcp_client::elicit::defaults_of(&request.schema))
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
    // The hub reads a client secret from the environment, as `client_secret_env` says: a
    // scenario's secret is put there by running this binary again with it set.
    if let (Some(secret), None) = (
        context().get("client_secret").and_then(Value::as_str),
        std::env::var_os(SECRET_VAR),
    ) {
        let status = std::env::current_exe().and_then(|me| {
            std::process::Command::new(me)
                .arg(&url)
                .env(SECRET_VAR, secret)
                .status()
        });
        return match status {
            Ok(s) if s.success() => ExitCode::SUCCESS,
            Ok(_) => ExitCode::FAILURE,
            Err(e) => {
                say(&format!("conformance client: cannot run itself again: {e}"));
                ExitCode::FAILURE
            }
        };
    }
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

/// Why one attempt (a hub started, its tools called) did not get through.
enum Failure {
    /// The server needs a (new) login; with the challenge of its 401/403, when it sent one.
    Login(Option<String>),
    Other(String),
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let ctx_json = context();
    let auth = auth_config(scenario, &ctx_json);
    // A throw-away store: SQLite in memory.
    let store = Arc::new(
        CredentialStore::open(std::path::Path::new(":memory:")).map_err(|e| e.to_string())?,
    );
    let auth_ctx = AuthContext::new(egress(), Arc::clone(&store));
    let mut config = ServerConfig::http(SERVER, url)
        .with_protocol(ProtocolChoice::Auto)
        .with_prefix(NamePrefix::Never)
        .with_startup_timeout(STARTUP);
    if let Some(auth) = &auth {
        config = config.with_auth(auth.clone());
    }
    let options = HubOptions::new(RetryPolicy::default(), egress())
        .with_credentials(Arc::clone(&store))
        .with_elicitor(Arc::new(HeadlessApprover));

    let mut logins = 0;
    let mut challenge: Option<String> = None;
    loop {
        let catalog = Arc::new(Catalog::new());
        let hub = McpHub::start(vec![config.clone()], Arc::clone(&catalog), options.clone())
            .await
            .map_err(|e| e.to_string())?;
        let outcome = exercise(&hub, &catalog, planned_calls(&ctx_json)).await;
        hub.shutdown().await;
        match outcome {
            Ok(()) => return Ok(()),
            Err(Failure::Login(c)) if logins < MAX_LOGINS && auth.is_some() => {
                logins += 1;
                challenge = c.or(challenge);
                let auth = auth.as_ref().ok_or("no auth")?;
                let options = LoginOptions {
                    challenge: challenge.clone(),
                    ..LoginOptions::default()
                };
                let outcome = login(SERVER, url, auth, &auth_ctx, options, headless_browser)
                    .await
                    .map_err(|e| format!("login {logins}: {e}"))?;
                say(&format!("logged in: scopes {:?}", outcome.scopes));
            }
            Err(Failure::Login(c)) => {
                return Err(format!(
                    "still refused after {logins} logins: {}",
                    c.unwrap_or_default()
                ));
            }
            Err(Failure::Other(e)) => return Err(e),
        }
    }
}

/// What an error text says about logging in: the hub's and the tools' messages name
/// `toolgate mcp login` and carry the server's challenge.
fn failure(text: String) -> Failure {
    for marker in [
        "authorization required: ",
        "insufficient scope: ",
        "lacks a scope (",
    ] {
        if let Some(at) = text.find(marker) {
            let rest = &text[at + marker.len()..];
            let end = rest
                .find("); sign in")
                .or_else(|| rest.find(": "))
                .unwrap_or(rest.len());
            return Failure::Login(Some(rest[..end].to_owned()));
        }
    }
    if text.contains("needs a login") || text.contains("mcp login") || text.contains("401") {
        return Failure::Login(None);
    }
    Failure::Other(text)
}

/// The calls a scenario asks for in its context (`toolCalls: [{name, arguments}]`).
fn planned_calls(ctx: &Map<String, Value>) -> Option<Vec<(String, Value)>> {
    let calls = ctx.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?.to_owned();
                Some((name, c.get("arguments").cloned().unwrap_or(json!({}))))
            })
            .collect(),
    )
}

/// Lists what the hub federated and calls it as the gateway's execute stage does: the
/// scenario's planned calls, or `add_numbers`, or every tool.
async fn exercise(
    hub: &McpHub,
    catalog: &Catalog,
    planned: Option<Vec<(String, Value)>>,
) -> Result<(), Failure> {
    if let Some(ServerState::Failed { error, .. }) = hub.status().first().map(|s| s.state.clone()) {
        return Err(failure(error));
    }
    let entries: Vec<Entry> = catalog
        .all()
        .into_iter()
        .filter(|e| matches!(e.availability, Availability::Available))
        .collect();
    say(&format!(
        "protocol {}, tools {:?}",
        hub.status()
            .first()
            .and_then(|s| s.protocol_version.clone())
            .unwrap_or_default(),
        entries
            .iter()
            .map(|e| e.tool.spec().name.as_str())
            .collect::<Vec<_>>()
    ));
    let named = |name: &str| entries.iter().find(|e| e.tool.spec().name == name);
    let calls: Vec<(&Entry, Value)> = match (planned, named("add_numbers")) {
        (Some(planned), _) => planned
            .into_iter()
            .filter_map(|(name, args)| Some((named(&name)?, args)))
            .collect(),
        (None, Some(add)) => vec![(add, json!({"a": 5, "b": 3}))],
        // The schema-preservation probe: what the catalog holds of the other tool's
        // inputSchema, passed back verbatim.
        (None, None) if named(SCHEMA_ECHO).is_some() => entries
            .iter()
            .find(|e| e.tool.spec().name != SCHEMA_ECHO)
            .zip(named(SCHEMA_ECHO))
            .map(|(focal, echo)| (echo, json!({"schema": focal.tool.spec().input_schema})))
            .into_iter()
            .collect(),
        (None, None) => entries
            .iter()
            .map(|e| (e, arguments_for(&e.tool.spec().input_schema)))
            .collect(),
    };
    for (n, (entry, args)) in calls.into_iter().enumerate() {
        let ctx = ToolContext {
            call_id: format!("conformance-{n}"),
            session_id: SERVER.into(),
            principal: "conformance".into(),
            role: "default".into(),
            cancel: tokio_util::sync::CancellationToken::new(),
            progress: ProgressSink::none(),
            caller: CallerLink::none(),
            trace: None,
        };
        let name = entry.tool.spec().name.as_str().to_owned();
        match entry.tool.call(args, ctx).await {
            Ok(out) => say(&format!("{name}: {:?}", out.content)),
            Err(e) => match failure(e.to_string()) {
                Failure::Other(text) => say(&format!("{name}: {text}")),
                login => return Err(login),
            },
        }
    }
    Ok(())
}

/// Arguments a schema accepts: each required property's default, first enum value or an
/// example of its type (strings `"conformance"`, numbers 1, booleans true).
fn arguments_for(schema: &Value) -> Value {
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    for (name, prop) in props.into_iter().flatten() {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = prop
            .get("default")
            .or_else(|| prop.get("enum").and_then(|e| e.get(0)))
            .cloned()
            .unwrap_or_else(|| match prop.get("type").and_then(Value::as_str) {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("object") => json!({}),
                Some("array") => json!([]),
                _ => json!("conformance"),
            });
        args.insert(name.clone(), value);
    }
    Value::Object(args)
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
