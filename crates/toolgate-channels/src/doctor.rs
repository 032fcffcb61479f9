//! `toolgate doctor`'s view of each channel: its secrets are set, its token is accepted,
//! and every chat is reachable — or why not.

use toolgate_net::EgressPolicy;

use crate::config::ChannelConfig;
use crate::service::{ChatService, ServiceError};

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `approvals: telegram:oncall` or `approvals: telegram:oncall chat -100…`.
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// What a failed check says, with the likely cause.
pub fn why(e: &ServiceError) -> String {
    match e {
        ServiceError::Api { code, .. }
            if code == "401" || code == "404" || code == "invalid_auth" || code == "not_authed" =>
        {
            format!("{e} (the token is wrong or revoked)")
        }
        ServiceError::Api { code, .. }
            if code == "400" || code == "403" || code == "channel_not_found" =>
        {
            format!("{e} (is the bot a member of the chat, and the id right?)")
        }
        ServiceError::Egress(_) => format!("{e} (allow the API's host in [egress])"),
        _ => e.to_string(),
    }
}

/// One finding per chat: reachable (with its title) or why not.
pub async fn chat_findings(
    service: &dyn ChatService,
    name: &str,
    chats: &[String],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for chat in chats {
        let chat_name = format!("{name} chat {chat}");
        findings.push(match service.chat_title(chat).await {
            Ok(title) => Finding {
                name: chat_name,
                ok: true,
                detail: format!("reachable: {title}"),
            },
            Err(e) => Finding {
                name: chat_name,
                ok: false,
                detail: why(&e),
            },
        });
    }
    findings
}

/// Checks every channel.
pub async fn check(channels: &[ChannelConfig], egress: &EgressPolicy) -> Vec<Finding> {
    let mut findings = Vec::new();
    let client = match crate::approval_channels::client(egress) {
        Ok(c) => c,
        Err(e) => {
            findings.push(Finding {
                name: "approvals: channels".into(),
                ok: false,
                detail: e.to_string(),
            });
            return findings;
        }
    };
    for config in channels {
        let name = format!("approvals: {}", config.via());
        if let Err(e) = config.check() {
            findings.push(Finding {
                name,
                ok: false,
                detail: e.to_string(),
            });
            continue;
        }
        let service = match crate::approval_channels::service_of(config, client.clone()) {
            Ok((service, _)) => service,
            Err(e) => {
                findings.push(Finding {
                    name,
                    ok: false,
                    detail: e.to_string(),
                });
                continue;
            }
        };
        match service.whoami().await {
            Ok(me) => findings.push(Finding {
                name: name.clone(),
                ok: true,
                detail: format!("token accepted: {me}"),
            }),
            Err(e) => {
                findings.push(Finding {
                    name,
                    ok: false,
                    detail: why(&e),
                });
                continue;
            }
        }
        findings.extend(chat_findings(service.as_ref(), &name, &config.chats).await);
    }
    findings
}
