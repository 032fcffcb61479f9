//! [`authorized_client`]: the HTTP client of a server with `auth`, for the Streamable HTTP
//! transport — rmcp's `AuthClient` over an SSRF-guarded reqwest client, with the stored
//! tokens.
//!
//! On every request the token is read from the store; one expiring within the refresh
//! buffer is refreshed first, and a 401 on a request that carried a token triggers one
//! refresh and one retry (rmcp's reactive handling). A 403 `insufficient_scope` surfaces as
//! an error naming the scope: a step-up needs the user (`toolgate mcp login NAME`), so a
//! running gateway does not start one by itself.
//!
//! For `client_credentials`, a token is requested at every connection (these grants have
//! no refresh token; a reconnect after expiry gets a fresh one).

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthClient, AuthorizationManager, ClientCredentialsConfig, OAuthClientConfig,
};

use super::http::GuardedOAuthHttp;
use super::login::AuthContext;
use super::tokens::StoredTokens;
use super::{AuthConfig, AuthError, rmcp_error};

/// The client for `server` at `url`: fails with [`AuthError::LoginRequired`] when an
/// `oauth` server has no stored tokens, and runs the client-credentials grant for a
/// `client_credentials` server.
pub async fn authorized_client(
    server: &str,
    url: &str,
    auth: &AuthConfig,
    ctx: &AuthContext,
) -> Result<AuthClient<reqwest::Client>, AuthError> {
    auth.validate()?;
    let manager = authorization_manager(server, url, auth, ctx).await?;
    // The MCP requests themselves: the same guarded client as servers without auth.
    let http =
        crate::connect::http_client(&ctx.egress).map_err(|e| AuthError::Egress(e.to_string()))?;
    Ok(AuthClient::new(http, manager))
}

async fn authorization_manager(
    server: &str,
    url: &str,
    auth: &AuthConfig,
    ctx: &AuthContext,
) -> Result<AuthorizationManager, AuthError> {
    let guarded =
        GuardedOAuthHttp::new(&ctx.egress).map_err(|e| AuthError::Egress(e.to_string()))?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(guarded))
        .await
        .map_err(rmcp_error)?;
    manager.set_credential_store(StoredTokens::new(Arc::clone(&ctx.credentials), server, url));
    match auth {
        AuthConfig::Oauth { client_id, .. } => {
            let found = manager.initialize_from_store().await.map_err(rmcp_error)?;
            if !found {
                return Err(AuthError::LoginRequired {
                    server: server.to_owned(),
                });
            }
            // A confidential pre-registered client authenticates its refreshes too.
            if let (Some(id), Some(secret)) = (client_id, auth.client_secret(&ctx.env)?) {
                manager
                    .configure_client(
                        OAuthClientConfig::new(id.clone(), url).with_client_secret(secret),
                    )
                    .map_err(rmcp_error)?;
            }
        }
        AuthConfig::ClientCredentials {
            client_id, scopes, ..
        } => {
            let secret = auth.client_secret(&ctx.env)?.unwrap_or_default();
            let resolution = manager.resolve_metadata().await.map_err(rmcp_error)?;
            manager.set_metadata(resolution.metadata);
            let config = ClientCredentialsConfig::ClientSecret {
                client_id: client_id.clone(),
                client_secret: secret,
                scopes: scopes.clone(),
                resource: Some(url.to_owned()),
            };
            manager
                .validate_client_credentials_metadata(&config)
                .map_err(rmcp_error)?;
            manager
                .configure_client_credentials(&config)
                .map_err(rmcp_error)?;
            manager
                .exchange_client_credentials(&config)
                .await
                .map_err(rmcp_error)?;
        }
    }
    Ok(manager)
}
