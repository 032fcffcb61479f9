//! [`GuardedOAuthHttp`]: every HTTP request of the OAuth flow (protected-resource and
//! authorization-server metadata, registration, token, refresh) sent through
//! `toolgate_net::client` — the SSRF guard (R-MCP-4) — instead of rmcp's own client.
//!
//! rmcp asks per request whether redirects may be followed: token requests must not follow
//! them, discovery may. Two guarded clients cover the two cases: the `[egress]` policy as
//! configured, and the same policy with `max_redirects = 0` (the 3xx is returned as is).
//! Response bodies are capped, as rmcp's own client does.

use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use toolgate_net::EgressPolicy;

/// Largest OAuth response body read (metadata and token responses are small).
const MAX_BODY: usize = 1024 * 1024;

/// rmcp's `OAuthHttpClient` over two SSRF-guarded reqwest clients.
#[derive(Clone)]
pub struct GuardedOAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
}

impl std::fmt::Debug for GuardedOAuthHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedOAuthHttp").finish_non_exhaustive()
    }
}

impl GuardedOAuthHttp {
    pub fn new(egress: &EgressPolicy) -> Result<Self, toolgate_net::EgressError> {
        let no_redirects = EgressPolicy {
            max_redirects: 0,
            ..egress.clone()
        };
        Ok(GuardedOAuthHttp {
            follow: toolgate_net::client(egress)?,
            stop: toolgate_net::client(&no_redirects)?,
        })
    }
}

#[derive(Debug, thiserror::Error)]
#[error("OAuth response body is larger than {MAX_BODY} bytes")]
struct BodyTooLarge;

impl OAuthHttpClient for GuardedOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let mut req = reqwest::Request::try_from(request.request)
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            if let Some(t) = request.timeout {
                *req.timeout_mut() = Some(t);
            }
            let mut response = client
                .execute(req)
                .await
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?;
            let mut builder = http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| Box::new(e) as OAuthHttpClientError)?
            {
                if chunk.len() > MAX_BODY - body.len() {
                    return Err(Box::new(BodyTooLarge) as OAuthHttpClientError);
                }
                body.extend_from_slice(&chunk);
            }
            builder
                .body(body)
                .map_err(|e| Box::new(e) as OAuthHttpClientError)
        })
    }
}
