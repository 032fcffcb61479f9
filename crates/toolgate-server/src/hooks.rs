//! `/hooks/*`: what chat services POST to the server — Slack interactions
//! (`/hooks/slack/{channel}`, verified by the signing secret) and Telegram updates in
//! webhook mode (`/hooks/telegram/{channel}`, verified by the secret token). They carry no
//! bearer token, so they sit outside authentication (inside the Host/Origin check); each is
//! refused unless its service's own proof checks out. Which chat user may decide is the
//! channel's business ([`toolgate_channels`]); who holds the operator right is this
//! server's ([`ServerOperators`]).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use toolgate_channels::{HookAnswer, HookRefusal, OperatorCheck};
use toolgate_protocol::ErrorCode;

use crate::error::ApiError;

use crate::auth::TokenBook;
use crate::config::ServerConfig;
use crate::state::AppState;

/// The hook routes (empty answers when no channel is configured: 404).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/hooks/slack/{channel}", post(slack))
        .route("/hooks/telegram/{channel}", post(telegram))
        .route("/hooks/bots/telegram/{bot}", post(telegram_bot))
        .route("/hooks/bots/slack/{bot}", post(slack_bot))
        .route("/hooks/bots/wecom/{bot}", get(wecom_bot).post(wecom_bot))
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// 200 `{}`, or the one error body of every refusal.
fn answer(a: HookAnswer) -> Response {
    match a {
        HookAnswer::Accepted => (StatusCode::OK, axum::Json(serde_json::json!({}))).into_response(),
        HookAnswer::Body { content_type, body } => (
            StatusCode::OK,
            [(axum::http::header::CONTENT_TYPE, content_type)],
            body,
        )
            .into_response(),
        HookAnswer::Challenge(challenge) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({ "challenge": challenge })),
        )
            .into_response(),
        HookAnswer::Refused { why, message } => match why {
            HookRefusal::Unauthenticated => ApiError::unauthenticated(message).with_hint(
                "the request must carry its service's proof: Slack's signature made with the \
                 app's signing secret, or Telegram's webhook secret token",
            ),
            HookRefusal::NoChannel => ApiError::not_found(message).with_hint(
                "the hook URL ends with the name of a [[approvals.channels]] entry \
                 (/hooks/bots/telegram/<name>: of a [[bots]] entry)",
            ),
            HookRefusal::Malformed => ApiError::new(ErrorCode::InvalidArguments, message),
        }
        .into_response(),
    }
}

fn no_channels(kind: &str, name: &str) -> Response {
    answer(HookAnswer::Refused {
        why: HookRefusal::NoChannel,
        message: format!("no {kind} channel `{name}` ([[approvals.channels]])"),
    })
}

async fn slack(
    State(state): State<AppState>,
    Path(channel): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(hub) = state.channels() else {
        return no_channels("slack", &channel);
    };
    answer(hub.slack_hook(
        &channel,
        header(&headers, "x-slack-request-timestamp"),
        header(&headers, "x-slack-signature"),
        &body,
    ))
}

async fn telegram(
    State(state): State<AppState>,
    Path(channel): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(hub) = state.channels() else {
        return no_channels("telegram", &channel);
    };
    answer(hub.telegram_hook(
        &channel,
        header(&headers, "x-telegram-bot-api-secret-token"),
        &body,
    ))
}

async fn telegram_bot(
    State(state): State<AppState>,
    Path(bot): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(bots) = state.bots() else {
        return answer(HookAnswer::Refused {
            why: HookRefusal::NoChannel,
            message: format!("no telegram bot `{bot}` ([[bots]])"),
        });
    };
    answer(bots.telegram_hook(
        &bot,
        header(&headers, "x-telegram-bot-api-secret-token"),
        &body,
    ))
}

async fn slack_bot(
    State(state): State<AppState>,
    Path(bot): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(bots) = state.bots() else {
        return answer(HookAnswer::Refused {
            why: HookRefusal::NoChannel,
            message: format!("no slack bot `{bot}` ([[bots]])"),
        });
    };
    answer(bots.slack_hook(
        &bot,
        header(&headers, "x-slack-request-timestamp"),
        header(&headers, "x-slack-signature"),
        &body,
    ))
}

/// WeCom's callback: `GET` verifies the URL (echoes the decrypted `echostr`), `POST` carries
/// a message; both signed (`msg_signature`) and encrypted.
async fn wecom_bot(
    State(state): State<AppState>,
    Path(bot): Path<String>,
    axum::extract::Query(query): axum::extract::Query<toolgate_chatbots::wecom::WecomQuery>,
    body: Bytes,
) -> Response {
    let Some(bots) = state.bots() else {
        return answer(HookAnswer::Refused {
            why: HookRefusal::NoChannel,
            message: format!("no wecom bot `{bot}` ([[bots]])"),
        });
    };
    answer(bots.wecom_hook(&bot, &query, &body))
}

/// Who holds the operator right, for the approval channels: a principal with an operator
/// token in `[[server.tokens]]`, an active operator token issued through the store (read
/// at every tap, so a revocation takes the right away within a second), or one listed in
/// `[approvals] operators` (for principals known only through an identity provider).
pub struct ServerOperators {
    configured: Vec<String>,
    /// `[[server.tokens]]`: principal → role, in the file's order.
    roles: Vec<(String, toolgate_protocol::Role)>,
    book: Option<Arc<TokenBook>>,
    listed: Vec<String>,
}

impl ServerOperators {
    pub fn new(config: &ServerConfig, book: Option<Arc<TokenBook>>, listed: Vec<String>) -> Self {
        ServerOperators {
            configured: config
                .tokens
                .iter()
                .filter(|t| t.operator)
                .map(|t| t.principal.to_string())
                .collect(),
            roles: config
                .tokens
                .iter()
                .map(|t| (t.principal.to_string(), t.role.clone()))
                .collect(),
            book,
            listed,
        }
    }
}

impl OperatorCheck for ServerOperators {
    fn is_operator(&self, principal: &str) -> bool {
        self.configured.iter().any(|p| p == principal)
            || self.listed.iter().any(|p| p == principal)
            || self
                .book
                .as_ref()
                .is_some_and(|b| b.has_active_operator(principal))
    }
}

/// What a chat bot's mapped user may do now: the role of their principal's first token in
/// `[[server.tokens]]`, else of their newest active issued token; and the operator right as
/// the approval channels see it.
impl toolgate_chatbots::Directory for ServerOperators {
    fn standing(&self, principal: &str) -> Option<toolgate_chatbots::Standing> {
        let role = self
            .roles
            .iter()
            .find(|(p, _)| p == principal)
            .map(|(_, role)| role.clone())
            .or_else(|| self.book.as_ref().and_then(|b| b.active_role(principal)))?;
        Some(toolgate_chatbots::Standing {
            role,
            operator: OperatorCheck::is_operator(self, principal),
        })
    }

    fn is_operator(&self, principal: &str) -> bool {
        OperatorCheck::is_operator(self, principal)
    }
}
