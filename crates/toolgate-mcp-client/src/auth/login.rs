//! [`login`]: the interactive authorization-code + PKCE (S256) flow behind
//! `toolgate mcp login NAME` (R-MCP-3).
//!
//! The sequence:
//! 1. bind the loopback redirect listener on `127.0.0.1:<port>` (ephemeral unless the
//!    config fixes one) — the code never travels through a chat channel;
//! 2. probe the server without a token to read its `WWW-Authenticate` challenge
//!    (`resource_metadata`, `scope`);
//! 3. discover protected-resource metadata (RFC 9728, from the challenge or the well-known
//!    URL), then authorization-server metadata (RFC 8414, then OpenID Connect), validating
//!    `issuer` — every request through the SSRF guard ([`GuardedOAuthHttp`]);
//! 4. pick the client identity: a configured client id, else a client ID metadata document
//!    when the server supports it, else dynamic registration (RFC 7591);
//! 5. hand the authorization URL (PKCE S256 challenge, `state`, `resource` per RFC 8707)
//!    to the caller's `open` callback, which prints it and may open a browser;
//! 6. wait for the redirect: a `state` other than the one sent is refused, an `error=` is
//!    reported, `iss` is checked (RFC 9207) when present;
//! 7. exchange the code (with the PKCE verifier and `resource`) and store the tokens.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, AuthorizationSession};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolgate_net::EgressPolicy;
use toolgate_store::CredentialStore;

use super::http::GuardedOAuthHttp;
use super::tokens::StoredTokens;
use super::{AuthConfig, AuthError, EnvLookup, rmcp_error};

/// How long [`login`] waits for the browser to come back, unless told otherwise.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
const CALLBACK_PATH: &str = "/callback";
const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// What authentication needs besides the server entry.
#[derive(Clone)]
pub struct AuthContext {
    /// Rules for every OAuth request (metadata, registration, token) and the MCP requests.
    pub egress: EgressPolicy,
    /// Where tokens are kept (the store's `mcp_credentials` table).
    pub credentials: Arc<CredentialStore>,
    /// Reads the variables named by `client_secret_env` (the process environment unless
    /// replaced).
    pub env: EnvLookup,
}

impl AuthContext {
    pub fn new(egress: EgressPolicy, credentials: Arc<CredentialStore>) -> Self {
        AuthContext {
            egress,
            credentials,
            env: Arc::new(|name| std::env::var(name).ok()),
        }
    }

    /// Replaces the environment lookup (tests, or secrets from another source).
    pub fn with_env(mut self, env: EnvLookup) -> Self {
        self.env = env;
        self
    }
}

impl std::fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthContext")
            .field("egress", &self.egress)
            .finish_non_exhaustive()
    }
}

/// Extra inputs of one login.
#[derive(Debug, Clone)]
pub struct LoginOptions {
    /// Scopes added to the configured ones (step-up after a 403 `insufficient_scope`).
    pub extra_scopes: Vec<String>,
    /// A `WWW-Authenticate` value already seen (a 401 or 403); skips the probe.
    pub challenge: Option<String>,
    /// How long to wait for the redirect.
    pub timeout: Duration,
    /// Name sent in dynamic client registration.
    pub client_name: String,
}

impl Default for LoginOptions {
    fn default() -> Self {
        LoginOptions {
            extra_scopes: Vec::new(),
            challenge: None,
            timeout: DEFAULT_LOGIN_TIMEOUT,
            client_name: "toolgate".into(),
        }
    }
}

/// What a finished login stored (no token in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOutcome {
    pub server: String,
    /// The key the tokens are stored under: the server's MCP URL.
    pub resource: String,
    pub issuer: Option<String>,
    pub client_id: String,
    pub scopes: Vec<String>,
}

/// Runs the authorization-code + PKCE flow for the HTTP server `server` at `url` and stores
/// the tokens. `open` receives the authorization URL once (print it; open a browser if one
/// exists); the function returns when the browser has been redirected back to the loopback
/// listener and the code is exchanged, or fails after `options.timeout`.
///
/// For `toolgate mcp login NAME`:
/// ```no_run
/// # async fn demo(ctx: toolgate_mcp_client::auth::AuthContext) -> Result<(), toolgate_mcp_client::auth::AuthError> {
/// use toolgate_mcp_client::auth::{AuthConfig, LoginOptions, login};
/// let outcome = login("docs", "https://mcp.example.com/mcp", &AuthConfig::oauth(), &ctx,
///     LoginOptions::default(),
///     |url| { let _ = writeln!(std::io::stderr(), "Open this URL to log in:\n{url}"); },
/// ).await?;
/// # use std::io::Write; Ok(()) }
/// ```
pub async fn login(
    server: &str,
    url: &str,
    auth: &AuthConfig,
    ctx: &AuthContext,
    options: LoginOptions,
    open: impl FnOnce(&str),
) -> Result<LoginOutcome, AuthError> {
    let AuthConfig::Oauth {
        client_id,
        client_metadata_url,
        scopes,
        redirect_port,
        ..
    } = auth
    else {
        return Err(AuthError::Config(
            "`toolgate mcp login` is for `auth = { type = \"oauth\" }`; a client_credentials server gets its token by itself".into(),
        ));
    };
    auth.validate()?;
    let secret = auth.client_secret(&ctx.env)?;

    let listener = TcpListener::bind(("127.0.0.1", redirect_port.unwrap_or(0)))
        .await
        .map_err(|e| {
            AuthError::Callback(format!("cannot listen on 127.0.0.1 for the redirect: {e}"))
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| AuthError::Callback(e.to_string()))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");

    let http = GuardedOAuthHttp::new(&ctx.egress).map_err(|e| AuthError::Egress(e.to_string()))?;
    let challenge = match options.challenge {
        Some(c) => Some(c),
        None => probe_challenge(&ctx.egress, url).await?,
    };
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(http))
        .await
        .map_err(rmcp_error)?;
    manager.set_credential_store(StoredTokens::new(Arc::clone(&ctx.credentials), server, url));
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(rmcp_error)?;
    if !resolution.source.is_discovered() {
        tracing::warn!(
            server,
            "no OAuth metadata published; using the 2025-03-26 default endpoints"
        );
    }
    manager.set_metadata(resolution.metadata);

    let mut request =
        AuthorizationRequest::new(redirect_uri.clone()).with_client_name(&options.client_name);
    let mut wanted: Vec<String> = scopes.clone();
    // A step-up (a challenge naming scopes, over a token already held) asks for the union of
    // what was granted and what is now challenged (SEP-2350): never a narrower token.
    let challenged = challenge
        .as_deref()
        .map(challenged_scopes)
        .unwrap_or_default();
    let granted = if challenged.is_empty() {
        Vec::new()
    } else {
        rmcp::transport::auth::CredentialStore::load(&StoredTokens::new(
            Arc::clone(&ctx.credentials),
            server,
            url,
        ))
        .await
        .ok()
        .flatten()
        .map(|held| held.granted_scopes)
        .unwrap_or_default()
    };
    if !granted.is_empty() {
        wanted.extend(granted);
        wanted.extend(challenged);
    }
    for s in options.extra_scopes {
        wanted.push(s);
    }
    let mut seen = std::collections::HashSet::new();
    wanted.retain(|s| seen.insert(s.clone()));
    if wanted.is_empty() {
        request = request.with_initial_scope_selection();
    } else {
        request = request.with_scopes(wanted);
    }
    if let Some(id) = client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(cimd) = client_metadata_url {
        request = request.with_client_metadata_url(cimd);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| rmcp_error(e))?;
    let auth_url = session.get_authorization_url().to_owned();
    let expected_state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| AuthError::Callback("the authorization URL carries no state".into()))?;
    open(&auth_url);

    let callback = tokio::time::timeout(options.timeout, wait_for_callback(&listener, &expected_state))
        .await
        .map_err(|_| {
            AuthError::Callback(format!(
                "no redirect came back to {redirect_uri} within {}; open the printed URL in a browser on this machine",
                humantime::format_duration(options.timeout)
            ))
        })??;
    session
        .handle_callback_with_issuer(&callback.code, &expected_state, callback.iss.as_deref())
        .await
        .map_err(rmcp_error)?;
    let (client_id, _) = session.get_credentials().await.map_err(rmcp_error)?;
    let stored = rmcp::transport::auth::CredentialStore::load(&StoredTokens::new(
        Arc::clone(&ctx.credentials),
        server,
        url,
    ))
    .await
    .map_err(rmcp_error)?;
    let (issuer, scopes) = stored
        .map(|s| (s.issuer, s.granted_scopes))
        .unwrap_or_default();
    Ok(LoginOutcome {
        server: server.to_owned(),
        resource: url.to_owned(),
        issuer,
        client_id,
        scopes,
    })
}

/// Sends an unauthenticated `initialize` and returns the `WWW-Authenticate` value of a 401
/// or 403 answer. Other answers mean no challenge (discovery then tries the well-known URL).
pub(crate) async fn probe_challenge(
    egress: &EgressPolicy,
    url: &str,
) -> Result<Option<String>, AuthError> {
    let client = toolgate_net::client(egress).map_err(|e| AuthError::Egress(e.to_string()))?;
    let client_info = serde_json::json!({"name": "toolgate", "version": env!("CARGO_PKG_VERSION")});
    // Both eras' first request: a server may leave either one open (a 2026-07-28 server
    // answers `initialize` with 400 before looking at the token, a legacy one ignores
    // `server/discover`); the first challenge wins.
    let probes = [
        (
            "server/discover",
            "2026-07-28",
            serde_json::json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": client_info}}),
        ),
        (
            "initialize",
            "2025-11-25",
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": client_info}),
        ),
    ];
    for (method, version, params) in probes {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params});
        let response = client
            .post(url)
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header("MCP-Protocol-Version", version)
            .header("Mcp-Method", method)
            .json(&body)
            .send()
            .await
            .map_err(|e| match toolgate_net::egress_refusal(&e) {
                Some(refusal) => AuthError::Egress(refusal.to_string()),
                None => AuthError::Discovery(format!(
                    "cannot reach {url}: {}",
                    crate::connect::error_chain(&e)
                )),
            })?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            let challenge = response
                .headers()
                .get_all(reqwest::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find(|v| {
                    v.trim_start()
                        .get(..6)
                        .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
                })
                .map(str::to_owned);
            if challenge.is_some() {
                return Ok(challenge);
            }
        }
    }
    Ok(None)
}

struct Callback {
    code: String,
    iss: Option<String>,
}

/// Serves the loopback listener until a request to the callback path arrives; other paths
/// (a browser's `/favicon.ico`) get 404 and the wait goes on.
async fn wait_for_callback(
    listener: &TcpListener,
    expected_state: &str,
) -> Result<Callback, AuthError> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| AuthError::Callback(format!("loopback listener failed: {e}")))?;
        let Some(target) = read_request_target(&mut stream).await else {
            continue;
        };
        let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
            respond(&mut stream, 400, "Bad request.").await;
            continue;
        };
        if url.path() != CALLBACK_PATH {
            respond(&mut stream, 404, "Not found.").await;
            continue;
        }
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(expected_state) {
            respond(&mut stream, 400, "Login refused: the state parameter does not match this login. Start `toolgate mcp login` again.").await;
            return Err(AuthError::StateMismatch);
        }
        if let Some(error) = param("error") {
            let description = param("error_description").unwrap_or_default();
            respond(&mut stream, 400, "Login failed; see the terminal.").await;
            return Err(AuthError::Denied(
                format!("{error} {description}").trim().to_owned(),
            ));
        }
        let Some(code) = param("code") else {
            respond(
                &mut stream,
                400,
                "Login failed: no authorization code in the redirect.",
            )
            .await;
            return Err(AuthError::Callback(
                "the redirect carried no authorization code".into(),
            ));
        };
        respond(
            &mut stream,
            200,
            "Logged in. You can close this window and return to the terminal.",
        )
        .await;
        return Ok(Callback {
            code,
            iss: param("iss"),
        });
    }
}

/// The request target of a `GET` request line, or `None` for anything unreadable.
async fn read_request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!("<!doctype html><title>toolgate</title><p>{text}</p>\n");
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The scopes a `WWW-Authenticate` challenge names in its `scope` parameter.
fn challenged_scopes(challenge: &str) -> Vec<String> {
    const KEY: &str = "scope=\"";
    challenge
        .match_indices(KEY)
        // The parameter itself, not one whose name ends in `scope`.
        .find(|(at, _)| {
            challenge[..*at]
                .chars()
                .next_back()
                .is_none_or(|c| c == ' ' || c == ',')
        })
        .map(|(at, _)| {
            let value = &challenge[at + KEY.len()..];
            value
                .split('"')
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod challenge_tests {
    use super::challenged_scopes;

    #[test]
    fn the_scope_parameter_of_a_challenge_is_read() {
        let c = r#"Bearer error="insufficient_scope", scope="mcp:write mcp:read", resource_metadata="x""#;
        assert_eq!(challenged_scopes(c), ["mcp:write", "mcp:read"]);
        assert_eq!(
            challenged_scopes(r#"Bearer scope="a", error="insufficient_scope""#),
            ["a"]
        );
        assert!(challenged_scopes(r#"Bearer myscope="a""#).is_empty());
        assert!(challenged_scopes(r#"Bearer error="invalid_token""#).is_empty());
    }
}
