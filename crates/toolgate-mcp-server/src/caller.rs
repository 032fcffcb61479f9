//! The calling client as a tool reaches it ([`toolgate_core::CallerLink`]): the session's
//! rmcp peer. Log messages go out as `notifications/message`; sampling, elicitation and
//! roots requests only when the client declared the capability at `initialize` (a
//! stateless 2026-07-28 request declares none here, so its tools fall back to their own
//! policy).

// Sampling, roots and logging are deprecated by 2026-07-28 but still 2025-11-25.
#![allow(deprecated)]

use async_trait::async_trait;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, LoggingMessageNotificationParam,
};
use rmcp::{Peer, RoleServer, ServiceError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_core::{CallerChannel, CallerError, CallerQuestion, CallerRequest};

/// The client of one session.
pub struct PeerChannel {
    peer: Peer<RoleServer>,
}

impl PeerChannel {
    pub fn new(peer: Peer<RoleServer>) -> Self {
        PeerChannel { peer }
    }
}

fn invalid(e: impl std::fmt::Display) -> CallerError {
    CallerError {
        code: rmcp::model::ErrorCode::INVALID_PARAMS.0,
        message: e.to_string(),
        data: None,
    }
}

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, CallerError> {
    serde_json::from_value(params).map_err(invalid)
}

fn answer<T: Serialize>(result: Result<T, ServiceError>) -> Result<Value, CallerError> {
    match result {
        Ok(value) => serde_json::to_value(value).map_err(invalid),
        Err(ServiceError::McpError(e)) => Err(CallerError {
            code: e.code.0,
            message: e.message.to_string(),
            data: e.data,
        }),
        Err(e) => Err(CallerError {
            code: rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            message: format!("the calling client could not be asked: {e}"),
            data: None,
        }),
    }
}

#[async_trait]
impl CallerChannel for PeerChannel {
    fn answers(&self, request: CallerRequest) -> bool {
        let Some(info) = self.peer.peer_info() else {
            return false;
        };
        let caps = &info.capabilities;
        match request {
            CallerRequest::Sampling => caps.sampling.is_some(),
            CallerRequest::Elicitation => caps.elicitation.is_some(),
            CallerRequest::Roots => caps.roots.is_some(),
        }
    }

    async fn log(&self, params: Value) {
        match serde_json::from_value::<LoggingMessageNotificationParam>(params) {
            Ok(params) => {
                if let Err(e) = self.peer.notify_logging_message(params).await {
                    tracing::debug!(error = %e, "could not pass a log message on to the client");
                }
            }
            Err(e) => tracing::debug!(error = %e, "a log message that is not one was dropped"),
        }
    }

    /// A session's request carries no name: the key is not sent.
    async fn ask(&self, question: CallerQuestion) -> Result<Value, CallerError> {
        let CallerQuestion {
            request, params, ..
        } = question;
        match request {
            CallerRequest::Sampling => {
                let params: CreateMessageRequestParams = parse(params)?;
                answer(self.peer.create_message(params).await)
            }
            CallerRequest::Elicitation => {
                let params: ElicitRequestParams = parse(params)?;
                answer(self.peer.create_elicitation(params).await)
            }
            CallerRequest::Roots => answer(self.peer.list_roots().await),
        }
    }
}
