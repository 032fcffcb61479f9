//! [`StoredTokens`]: rmcp's `CredentialStore` for one server and resource, kept in the
//! toolgate store's `mcp_credentials` table (`toolgate_store::CredentialStore`).
//!
//! The whole rmcp `StoredCredentials` document (client id, token response, granted scopes,
//! issuer) is stored as one secret JSON value; the issuer and client id also go beside it in
//! clear for listing. Refreshes of the same credentials inside this process are serialised
//! with one lock per (server, resource), so two connections never spend one refresh token
//! twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError as RmcpAuthError, CredentialRefreshGuard, CredentialStore as RmcpCredentialStore,
    StoredCredentials,
};
use toolgate_store::{CredentialSecret, CredentialStore};

/// One refresh lock per (server, resource), shared by every connection of this process.
type RefreshLocks = HashMap<(String, String), Arc<tokio::sync::Mutex<()>>>;

/// The stored credentials of one server for one protected resource.
#[derive(Clone)]
pub struct StoredTokens {
    store: Arc<CredentialStore>,
    server: String,
    resource: String,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("server", &self.server)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl StoredTokens {
    pub fn new(
        store: Arc<CredentialStore>,
        server: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        StoredTokens {
            store,
            server: server.into(),
            resource: resource.into(),
        }
    }

    fn refresh_lock(&self) -> Arc<tokio::sync::Mutex<()>> {
        static LOCKS: OnceLock<Mutex<RefreshLocks>> = OnceLock::new();
        let mut locks = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            locks
                .entry((self.server.clone(), self.resource.clone()))
                .or_default(),
        )
    }
}

fn store_error(e: impl std::fmt::Display) -> RmcpAuthError {
    RmcpAuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl RmcpCredentialStore for StoredTokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, RmcpAuthError> {
        let record = self
            .store
            .load(&self.server, &self.resource)
            .await
            .map_err(store_error)?;
        match record {
            None => Ok(None),
            Some(r) => serde_json::from_str(r.secret.expose())
                .map(Some)
                .map_err(|e| {
                    store_error(format!(
                        "stored credentials are unreadable ({e}); run `toolgate mcp login` again"
                    ))
                }),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), RmcpAuthError> {
        let secret =
            CredentialSecret::new(serde_json::to_string(&credentials).map_err(store_error)?);
        self.store
            .save(
                &self.server,
                &self.resource,
                credentials.issuer.as_deref(),
                &credentials.client_id,
                &secret,
            )
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), RmcpAuthError> {
        self.store
            .delete(&self.server, Some(&self.resource))
            .await
            .map_err(store_error)
            .map(drop)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, RmcpAuthError> {
        let guard = self.refresh_lock().lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}
