//! A small but strict OAuth 2.1 authorization server and an MCP resource it protects, on two
//! loopback ports, for the OAuth tests.
//!
//! The authorization server publishes RFC 8414 metadata, registers clients (RFC 7591),
//! answers `/authorize` by redirecting at once (the user "approves"), and at `/token`
//! verifies the PKCE S256 verifier against the challenge, the redirect URI, the client and
//! the `resource` (RFC 8707); it issues refresh tokens and serves the refresh and
//! client-credentials grants. The resource publishes RFC 9728 metadata, answers requests
//! without a valid token with 401 and a `WWW-Authenticate` naming that metadata, and speaks
//! just enough MCP (JSON responses) for `initialize`, `tools/list` and `tools/call whoami`.
//! Everything that happens is recorded as [`Event`]s.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const SCOPE: &str = "mcp:read";
pub const CC_CLIENT: &str = "machine";
pub const CC_SECRET: &str = "machine-secret-value";

/// What the servers saw, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Register,
    Authorize {
        scope: String,
    },
    Token {
        grant: String,
    },
    TokenRefused {
        grant: String,
        reason: String,
    },
    /// An MCP request carrying a valid token (which one: its serial number).
    Mcp {
        method: String,
        token: usize,
    },
    Unauthorized,
}

#[derive(Default)]
struct Inner {
    events: Vec<Event>,
    clients: HashMap<String, Vec<String>>,
    /// code → (client, challenge, redirect_uri, scope)
    codes: HashMap<String, (String, String, String, String)>,
    /// access token → serial number
    access: HashMap<String, usize>,
    revoked: HashSet<String>,
    refresh: HashSet<String>,
    issued: Vec<String>,
    serial: usize,
    /// `expires_in` of the token issued by the authorization-code grant.
    first_expires_in: u64,
    /// A scope every `tools/call` needs and no token has: 403 `insufficient_scope`.
    call_scope: Option<String>,
}

#[derive(Clone)]
pub struct FakeOAuth {
    inner: Arc<Mutex<Inner>>,
    pub as_url: String,
    pub rs_url: String,
}

impl FakeOAuth {
    /// Starts both servers; tokens from the code grant expire after `first_expires_in`
    /// seconds (0: already expired when stored, so the first use refreshes).
    pub async fn start(first_expires_in: u64) -> FakeOAuth {
        let as_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let rs_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = FakeOAuth {
            inner: Arc::new(Mutex::new(Inner {
                first_expires_in,
                ..Inner::default()
            })),
            as_url: format!("http://{}", as_listener.local_addr().unwrap()),
            rs_url: format!("http://{}", rs_listener.local_addr().unwrap()),
        };
        let auth_server = Router::new()
            .route("/.well-known/oauth-authorization-server", get(as_metadata))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(fake.clone());
        let resource = Router::new()
            .route("/.well-known/oauth-protected-resource/mcp", get(prm))
            .route("/mcp", post(mcp).get(no_stream).delete(no_stream))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(as_listener, auth_server).await });
        tokio::spawn(async move { axum::serve(rs_listener, resource).await });
        fake
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.rs_url)
    }

    pub fn events(&self) -> Vec<Event> {
        self.inner.lock().unwrap().events.clone()
    }

    /// Every access and refresh token issued so far (to look for them in logs).
    pub fn issued(&self) -> Vec<String> {
        self.inner.lock().unwrap().issued.clone()
    }

    /// Revokes every access token issued so far (the next request gets 401).
    pub fn revoke_access_tokens(&self) {
        let mut inner = self.inner.lock().unwrap();
        let all: Vec<String> = inner.access.keys().cloned().collect();
        inner.revoked.extend(all);
    }

    /// From now on `tools/call` answers 403 `insufficient_scope` naming `scope`.
    pub fn require_scope_for_calls(&self, scope: &str) {
        self.inner.lock().unwrap().call_scope = Some(scope.to_owned());
    }

    fn record(&self, event: Event) {
        self.inner.lock().unwrap().events.push(event);
    }

    /// Issues an access token (and a refresh token unless `refresh` is false).
    fn issue(&self, expires_in: u64, scope: &str, refresh: bool) -> Value {
        let mut inner = self.inner.lock().unwrap();
        inner.serial += 1;
        let serial = inner.serial;
        let access = format!("AT{serial}-{}", random());
        inner.access.insert(access.clone(), serial);
        inner.issued.push(access.clone());
        let mut body = json!({
            "access_token": access, "token_type": "Bearer",
            "expires_in": expires_in, "scope": scope,
        });
        if refresh {
            let rt = format!("RT{serial}-{}", random());
            inner.refresh.insert(rt.clone());
            inner.issued.push(rt.clone());
            body["refresh_token"] = json!(rt);
        }
        body
    }
}

fn random() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    URL_SAFE_NO_PAD.encode(bytes)
}

async fn as_metadata(State(f): State<FakeOAuth>) -> Json<Value> {
    let base = &f.as_url;
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "scopes_supported": [SCOPE],
    }))
}

async fn register(State(f): State<FakeOAuth>, Json(body): Json<Value>) -> Response {
    let redirect_uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if redirect_uris.is_empty() {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_redirect_uri"})),
        )
            .into_response();
    }
    let client_id = format!("dyn-{}", random());
    f.inner
        .lock()
        .unwrap()
        .clients
        .insert(client_id.clone(), redirect_uris.clone());
    f.record(Event::Register);
    (
        StatusCode::CREATED,
        Json(
            json!({"client_id": client_id, "redirect_uris": redirect_uris,
                    "token_endpoint_auth_method": "none"}),
        ),
    )
        .into_response()
}

async fn authorize(
    State(f): State<FakeOAuth>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    let client = get("client_id");
    let redirect_uri = get("redirect_uri");
    let registered = f
        .inner
        .lock()
        .unwrap()
        .clients
        .get(&client)
        .is_some_and(|uris| uris.contains(&redirect_uri));
    let problem = if get("response_type") != "code" {
        Some("response_type must be code")
    } else if get("code_challenge_method") != "S256" || get("code_challenge").len() < 43 {
        Some("PKCE S256 is required")
    } else if get("resource") != f.mcp_url() {
        Some("resource must name the MCP server")
    } else if !registered {
        Some("unknown client or redirect_uri")
    } else if get("state").is_empty() {
        Some("state is required")
    } else {
        None
    };
    if let Some(p) = problem {
        return (StatusCode::BAD_REQUEST, p.to_owned()).into_response();
    }
    let code = format!("code-{}", random());
    f.inner.lock().unwrap().codes.insert(
        code.clone(),
        (
            client,
            get("code_challenge"),
            redirect_uri.clone(),
            get("scope"),
        ),
    );
    f.record(Event::Authorize {
        scope: get("scope"),
    });
    let mut location = url::Url::parse(&redirect_uri).unwrap();
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &get("state"))
        .append_pair("iss", &f.as_url);
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

fn token_error(f: &FakeOAuth, grant: &str, error: &str, reason: &str) -> Response {
    f.record(Event::TokenRefused {
        grant: grant.to_owned(),
        reason: reason.to_owned(),
    });
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": reason})),
    )
        .into_response()
}

async fn token(
    State(f): State<FakeOAuth>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let grant = get("grant_type");
    if get("resource") != f.mcp_url() {
        return token_error(
            &f,
            &grant,
            "invalid_target",
            "resource must name the MCP server",
        );
    }
    match grant.as_str() {
        "authorization_code" => {
            let entry = f.inner.lock().unwrap().codes.remove(&get("code"));
            let Some((client, challenge, redirect_uri, scope)) = entry else {
                return token_error(&f, &grant, "invalid_grant", "unknown or reused code");
            };
            let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(get("code_verifier").as_bytes()));
            if computed != challenge {
                return token_error(&f, &grant, "invalid_grant", "PKCE verifier does not match");
            }
            if get("redirect_uri") != redirect_uri || get("client_id") != client {
                return token_error(
                    &f,
                    &grant,
                    "invalid_grant",
                    "client or redirect_uri differs",
                );
            }
            let expires = f.inner.lock().unwrap().first_expires_in;
            f.record(Event::Token { grant });
            Json(f.issue(expires, &scope, true)).into_response()
        }
        "refresh_token" => {
            let known = f
                .inner
                .lock()
                .unwrap()
                .refresh
                .remove(&get("refresh_token"));
            if !known {
                return token_error(&f, &grant, "invalid_grant", "unknown refresh token");
            }
            f.record(Event::Token { grant });
            Json(f.issue(3600, SCOPE, true)).into_response()
        }
        "client_credentials" => {
            let (id, secret) = match headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Basic "))
            {
                Some(b) => {
                    let decoded = String::from_utf8(STANDARD.decode(b).unwrap_or_default())
                        .unwrap_or_default();
                    let (i, s) = decoded.split_once(':').unwrap_or_default();
                    (i.to_owned(), s.to_owned())
                }
                None => (get("client_id"), get("client_secret")),
            };
            if id != CC_CLIENT || secret != CC_SECRET {
                return token_error(&f, &grant, "invalid_client", "bad client credentials");
            }
            f.record(Event::Token { grant });
            Json(f.issue(3600, SCOPE, false)).into_response()
        }
        _ => token_error(&f, &grant, "unsupported_grant_type", "unsupported grant"),
    }
}

async fn prm(State(f): State<FakeOAuth>) -> Json<Value> {
    Json(json!({
        "resource": f.mcp_url(),
        "authorization_servers": [f.as_url],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
    }))
}

async fn no_stream() -> StatusCode {
    StatusCode::METHOD_NOT_ALLOWED
}

async fn mcp(State(f): State<FakeOAuth>, headers: HeaderMap, Json(msg): Json<Value>) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let serial = bearer.and_then(|t| {
        let inner = f.inner.lock().unwrap();
        (!inner.revoked.contains(&t))
            .then(|| inner.access.get(&t).copied())
            .flatten()
    });
    let Some(serial) = serial else {
        f.record(Event::Unauthorized);
        let challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"{SCOPE}\"",
            f.rs_url
        );
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            Json(json!({"error": "invalid_token"})),
        )
            .into_response();
    };
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    f.record(Event::Mcp {
        method: method.clone(),
        token: serial,
    });
    let Some(id) = msg.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let call_scope = f.inner.lock().unwrap().call_scope.clone();
    if let Some(scope) = call_scope.filter(|_| method == "tools/call") {
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            f.rs_url
        );
        return (
            StatusCode::FORBIDDEN,
            [(header::WWW_AUTHENTICATE, challenge)],
            Json(json!({"error": "insufficient_scope"})),
        )
            .into_response();
    }
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Says which token serial number the call carried.",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => json!({"content": [{"type": "text", "text": format!("token #{serial}")}]}),
        _ => {
            return Json(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "Method not found"}}))
            .into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}
