//! WeCom (企业微信): a self-built application in callback mode. Callbacks arrive signed and
//! encrypted on `/hooks/bots/wecom/<name>` ([`crypto`], [`inbound`]); the bot answers through
//! the server API ([`api`]).

pub mod api;
pub mod crypto;
pub mod inbound;

/// The query string of a callback.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct WecomQuery {
    pub msg_signature: Option<String>,
    pub timestamp: Option<String>,
    pub nonce: Option<String>,
    /// The URL check's encrypted echo (GET only).
    pub echostr: Option<String>,
}
