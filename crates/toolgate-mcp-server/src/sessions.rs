//! MCP sessions any replica can continue: rmcp's `SessionStore` over the cluster store
//! ([`PgSessions`]). A replica that receives a request for a session it does not hold loads
//! the client's `initialize` parameters and replays the handshake, so the client goes on as
//! if nothing moved. The session id is only a correlation: every request is still
//! authenticated on its own, and its calls run and are audited as its caller.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use toolgate_store::sessions::PgSessions;

/// [`SessionStore`] over the shared store.
#[derive(Debug, Clone)]
pub struct SharedSessions(Arc<PgSessions>);

impl SharedSessions {
    pub fn new(sessions: PgSessions) -> Self {
        SharedSessions(Arc::new(sessions))
    }
}

#[async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        match self.0.load(session_id).await? {
            Some(text) => Ok(Some(serde_json::from_str(&text)?)),
            None => Ok(None),
        }
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let text = serde_json::to_string(state)?;
        Ok(self.0.store(session_id, &text).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.0.delete(session_id).await?)
    }
}
