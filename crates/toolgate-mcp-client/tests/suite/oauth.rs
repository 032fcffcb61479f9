//! OAuth 2.1 against a real (small, strict) authorization server and protected MCP resource
//! (`oauth_server.rs`): discovery from the 401 challenge, dynamic registration, PKCE S256
//! checked by the server, the token on MCP calls, refresh on expiry and on 401, a forged
//! `state` refused, the client-credentials grant, nothing sent without an `[egress]` entry,
//! and no token in logs or `Debug` output.

use std::cell::RefCell;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use toolgate_core::ToolError;
use toolgate_mcp_client::auth::{AuthConfig, AuthContext, AuthError, LoginOptions, login};
use toolgate_mcp_client::{HubOptions, McpHub, ProtocolChoice, ServerConfig, ServerState};
use toolgate_net::EgressPolicy;
use toolgate_protocol::ToolOutput;
use toolgate_registry::Catalog;
use toolgate_store::CredentialStore;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::SubscriberExt;

use crate::oauth_server::{CC_CLIENT, CC_SECRET, Event, FakeOAuth, SCOPE};
use crate::peers::{call, quick_retry};

const SERVER: &str = "prot";

/// `[egress]` naming exactly the two fake servers (plain http, loopback).
fn egress(fake: &FakeOAuth) -> EgressPolicy {
    let mut policy = EgressPolicy::default();
    for url in [&fake.as_url, &fake.rs_url] {
        let authority = url.strip_prefix("http://").unwrap();
        policy = policy
            .allow_host(authority)
            .and_then(|p| p.allow_plain_http(authority))
            .unwrap();
    }
    policy
}

struct Setup {
    fake: FakeOAuth,
    ctx: AuthContext,
    store: Arc<CredentialStore>,
    _dir: tempfile::TempDir,
}

async fn setup(first_expires_in: u64) -> Setup {
    let fake = FakeOAuth::start(first_expires_in).await;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(CredentialStore::open(&dir.path().join("toolgate.db")).unwrap());
    let ctx = AuthContext::new(egress(&fake), Arc::clone(&store));
    Setup {
        fake,
        ctx,
        store,
        _dir: dir,
    }
}

/// A successful login with the default options (the browser approves at once).
async fn log_in(s: &Setup) {
    login(
        SERVER,
        &s.fake.mcp_url(),
        &AuthConfig::oauth(),
        &s.ctx,
        LoginOptions::default(),
        browser(None),
    )
    .await
    .unwrap();
}

/// The user's browser: follows the authorization URL to the server (which approves at
/// once), then goes to the redirect it is given — with one parameter replaced by
/// `forge = Some((name, value))`.
fn browser(forge: Option<(&'static str, &'static str)>) -> impl FnOnce(&str) {
    move |auth_url: &str| {
        let auth_url = auth_url.to_owned();
        tokio::spawn(async move {
            let policy = EgressPolicy {
                max_redirects: 0,
                ..EgressPolicy::default()
            }
            .allow_host("127.0.0.1")
            .and_then(|p| p.allow_plain_http("127.0.0.1"))
            .unwrap();
            let client = toolgate_net::client(&policy).unwrap();
            let answer = client.get(&auth_url).send().await.unwrap();
            assert_eq!(answer.status(), 302, "{}", answer.text().await.unwrap());
            let location = answer.headers()["location"].to_str().unwrap().to_owned();
            let mut back = url::Url::parse(&location).unwrap();
            if let Some((name, value)) = forge {
                let pairs: Vec<(String, String)> = back
                    .query_pairs()
                    .map(|(k, v)| {
                        let v = if k == name {
                            value.to_owned()
                        } else {
                            v.into_owned()
                        };
                        (k.into_owned(), v)
                    })
                    .collect();
                back.query_pairs_mut().clear().extend_pairs(pairs);
            }
            let _ = client.get(back.as_str()).send().await;
        });
    }
}

fn oauth_server(fake: &FakeOAuth) -> ServerConfig {
    ServerConfig::http(SERVER, fake.mcp_url())
        .with_protocol(ProtocolChoice::Initialize)
        .with_auth(AuthConfig::oauth())
        .with_startup_timeout(Duration::from_secs(20))
}

async fn hub(s: &Setup, config: ServerConfig) -> (McpHub, Arc<Catalog>) {
    let catalog = Arc::new(Catalog::new());
    let options =
        HubOptions::new(quick_retry(), s.ctx.egress.clone()).with_credentials(Arc::clone(&s.store));
    let hub = McpHub::start(vec![config], Arc::clone(&catalog), options)
        .await
        .unwrap();
    (hub, catalog)
}

fn mcp_tokens(events: &[Event]) -> Vec<usize> {
    let mut serials: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            Event::Mcp { token, .. } => Some(*token),
            _ => None,
        })
        .collect();
    serials.dedup();
    serials
}

/// Log lines (every level) of whatever runs on the capturing thread: a process-wide
/// subscriber whose layer is enabled only on a thread that is capturing, so other tests
/// running beside this one neither pay for it nor end up in the capture. (A thread-local
/// `set_default` subscriber is not reliable when several tests share the process.)
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

thread_local! {
    static CAPTURE: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

struct ThreadWriter;

impl Write for ThreadWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|c| {
            if let Some(cap) = &*c.borrow() {
                cap.0.lock().unwrap().extend_from_slice(buf);
            }
        });
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts capturing this thread's log lines (until the returned guard is dropped).
fn capture_logs() -> (Captured, impl Drop) {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| ThreadWriter)
            .with_filter(filter_fn(|_| CAPTURE.with(|c| c.borrow().is_some())));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("no other global subscriber in this test binary");
    });
    let captured = Captured::default();
    CAPTURE.with(|c| *c.borrow_mut() = Some(captured.clone()));
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            CAPTURE.with(|c| *c.borrow_mut() = None);
        }
    }
    (captured, Stop)
}

#[tokio::test(flavor = "current_thread")]
async fn login_discovers_registers_with_pkce_and_the_token_reaches_the_server_unlogged() {
    let (captured, _capturing) = capture_logs();

    let s = setup(3600).await;
    let outcome = login(
        SERVER,
        &s.fake.mcp_url(),
        &AuthConfig::oauth(),
        &s.ctx,
        LoginOptions::default(),
        browser(None),
    )
    .await
    .unwrap();
    assert_eq!(
        (
            &outcome.server,
            &outcome.resource,
            &outcome.issuer,
            &outcome.scopes
        ),
        (
            &SERVER.to_owned(),
            &s.fake.mcp_url(),
            &Some(s.fake.as_url.clone()),
            &vec![SCOPE.to_owned()]
        )
    );
    assert!(outcome.client_id.starts_with("dyn-"), "{outcome:?}");
    // The probe met the 401 challenge; registration, authorization (scope from the
    // challenge) and the code exchange (PKCE verified by the server) followed.
    assert_eq!(
        s.fake.events(),
        vec![
            Event::Unauthorized,
            Event::Register,
            Event::Authorize {
                scope: SCOPE.into()
            },
            Event::Token {
                grant: "authorization_code".into()
            },
        ]
    );

    let (hub, catalog) = hub(&s, oauth_server(&s.fake)).await;
    assert_eq!(
        hub.status()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.status()
    );
    let out = call(&catalog, "mcp__prot__whoami", json!({}))
        .await
        .unwrap();
    assert_eq!(out, ToolOutput::text("token #1"));
    assert_eq!(mcp_tokens(&s.fake.events()), vec![1]);

    // No token in the logs (rmcp's included) nor in any Debug output.
    let shown = format!(
        "{outcome:?} {hub:?} {:?} {:?} {:?}",
        hub.status(),
        s.store.list().await.unwrap(),
        s.ctx
    );
    hub.shutdown().await;
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("rmcp"), "the capture saw rmcp's logs");
    let issued = s.fake.issued();
    assert_eq!(issued.len(), 2, "one access and one refresh token");
    for token in issued {
        assert!(!logs.contains(&token), "a token was logged:\n{logs}");
        assert!(
            !shown.contains(&token),
            "a token is in Debug output: {shown}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_before_use_and_a_revoked_one_after_a_401() {
    let s = setup(0).await;
    log_in(&s).await;
    let (hub, catalog) = hub(&s, oauth_server(&s.fake)).await;
    // Token #1 expired on arrival: the first MCP request already carried #2.
    assert_eq!(
        call(&catalog, "mcp__prot__whoami", json!({}))
            .await
            .unwrap(),
        ToolOutput::text("token #2")
    );
    s.fake.revoke_access_tokens();
    assert_eq!(
        call(&catalog, "mcp__prot__whoami", json!({}))
            .await
            .unwrap(),
        ToolOutput::text("token #3")
    );
    let events = s.fake.events();
    assert_eq!(mcp_tokens(&events), vec![2, 3]);
    let grants: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Token { grant } => Some(grant.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    // The store holds the newest tokens (a restart goes on with them).
    let stored = s
        .store
        .load(SERVER, &s.fake.mcp_url())
        .await
        .unwrap()
        .unwrap();
    let latest_access = s
        .fake
        .issued()
        .into_iter()
        .rev()
        .find(|t| t.starts_with("AT"))
        .unwrap();
    assert!(stored.secret.expose().contains(&latest_access));
    assert_eq!(stored.issuer.as_deref(), Some(s.fake.as_url.as_str()));
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_with_another_state_is_refused_and_nothing_is_stored() {
    let s = setup(3600).await;
    let err = login(
        SERVER,
        &s.fake.mcp_url(),
        &AuthConfig::oauth(),
        &s.ctx,
        LoginOptions::default(),
        browser(Some(("state", "forged"))),
    )
    .await
    .unwrap_err();
    assert_eq!(err, AuthError::StateMismatch);
    assert!(
        !s.fake
            .events()
            .iter()
            .any(|e| matches!(e, Event::Token { .. })),
        "no code was exchanged"
    );
    assert_eq!(s.store.list().await.unwrap(), Vec::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_naming_another_issuer_is_refused() {
    let s = setup(3600).await;
    let err = login(
        SERVER,
        &s.fake.mcp_url(),
        &AuthConfig::oauth(),
        &s.ctx,
        LoginOptions::default(),
        browser(Some(("iss", "https://evil.example"))),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("issuer mismatch"), "{err}");
    assert!(
        !s.fake
            .events()
            .iter()
            .any(|e| matches!(e, Event::Token { .. })),
        "no code was exchanged"
    );
    assert_eq!(s.store.list().await.unwrap(), Vec::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_auth_and_no_login_says_how_to_log_in() {
    let s = setup(3600).await;
    let (hub, _catalog) = hub(&s, oauth_server(&s.fake)).await;
    let status = &hub.status()[0];
    let ServerState::Failed { error, .. } = &status.state else {
        panic!("{status:?}");
    };
    assert_eq!(
        error,
        "MCP server `prot` needs a login: run `toolgate mcp login prot`"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_egress_entry_the_login_sends_nothing() {
    let s = setup(3600).await;
    let strict = AuthContext::new(EgressPolicy::default(), Arc::clone(&s.store));
    let err = login(
        SERVER,
        &s.fake.mcp_url(),
        &AuthConfig::oauth(),
        &strict,
        LoginOptions::default(),
        browser(None),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, AuthError::Egress(_)), "{err:?}");
    assert!(err.to_string().contains("127.0.0.1"), "{err}");
    assert_eq!(s.fake.events(), Vec::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_credentials_grant_needs_no_login() {
    let mut s = setup(3600).await;
    s.ctx = s.ctx.clone().with_env(Arc::new(|name| {
        (name == "PROT_SECRET").then(|| CC_SECRET.to_owned())
    }));
    let config = ServerConfig::http(SERVER, s.fake.mcp_url())
        .with_protocol(ProtocolChoice::Initialize)
        .with_auth(AuthConfig::ClientCredentials {
            client_id: CC_CLIENT.into(),
            client_secret_env: "PROT_SECRET".into(),
            scopes: vec![SCOPE.into()],
        });
    // The hub reads the secret from the process environment; this test passes it through
    // the context instead and drives the transport the hub builds.
    let client = toolgate_mcp_client::auth::authorized_client(
        SERVER,
        &s.fake.mcp_url(),
        config.auth.as_ref().unwrap(),
        &s.ctx,
    )
    .await
    .unwrap();
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(s.fake.mcp_url()),
    );
    let service = ().serve(transport).await.unwrap();
    let result = service
        .call_tool(CallToolRequestParams::new("whoami"))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "token #1");
    service.cancel().await.unwrap();
    let events = s.fake.events();
    assert_eq!(
        events[0],
        Event::Token {
            grant: "client_credentials".into()
        }
    );
    assert_eq!(mcp_tokens(&events), vec![1]);
    let stored = s
        .store
        .load(SERVER, &s.fake.mcp_url())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.client_id, CC_CLIENT);
    assert!(
        !stored.secret.expose().contains(CC_SECRET),
        "the client secret is not stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_a_missing_scope_says_how_to_sign_in_with_it() {
    let s = setup(3600).await;
    log_in(&s).await;
    let (hub, catalog) = hub(&s, oauth_server(&s.fake)).await;
    s.fake.require_scope_for_calls("files:write");
    let err = call(&catalog, "mcp__prot__whoami", json!({}))
        .await
        .unwrap_err();
    let ToolError::Failed {
        message, retryable, ..
    } = err
    else {
        panic!("expected a plain failure, got {err:?}");
    };
    assert!(!retryable);
    assert!(message.contains("files:write"), "{message}");
    assert!(
        message.contains("toolgate mcp login prot --scope SCOPE"),
        "{message}"
    );
    hub.shutdown().await;
}
