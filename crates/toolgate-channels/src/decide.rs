//! A tap or reply, turned into a decision — or refused, with the reason told to the user.
//!
//! 1. The request is the one the tapped card announced (its chat and message, as
//!    [`toolgate_store::ChatPosts`] recorded them), whether the tap is a button or a typed
//!    reply. A button's data only says what to do: data naming another request (forged, or
//!    from a client that mixed up its cards) is refused and audited, and the card is left as
//!    it is. Page buttons just show another page.
//! 2. The chat user must be mapped to a principal that is an operator now; anyone else is
//!    refused, and the refusal is audited.
//! 3. A dangerous tool is approved only with its name typed (a reply, or the card's box):
//!    a tap alone never approves it.
//! 4. The store decides once; a request already decided (here, in the console, on another
//!    replica) is reported as such and its card refreshed.

use serde_json::json;
use toolgate_protocol::ErrorCode;
use toolgate_store::StoreError;
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus, Decision, DecisionScope};
use toolgate_store::audit::{AuditOutcome, AuditRecord, RecordKind};
use toolgate_store::chat::ChatPost;

use crate::action::{Action, ButtonData};
use crate::card::{open_card, outcome_line};
use crate::hub::{Channel, Hub};
use crate::service::{Tap, TapInput};

/// The typed name a decision needs, checked: `Ok(Some(name))` to pass as the decision's
/// confirmation, `Ok(None)` when none is needed, or the refusal to answer.
fn confirmation(
    asked: &Asked,
    request: &ApprovalRequest,
    approve: bool,
) -> Result<Option<String>, String> {
    let typed = asked.typed.as_deref().map(str::trim);
    if asked.replied && typed != Some(request.tool.as_str()) {
        return Err(format!(
            "`{}` is not `{}`: a reply approves only when it is the tool's name (optionally \
             followed by session or always). Not approved; use the buttons otherwise.",
            typed.unwrap_or_default(),
            request.tool
        ));
    }
    if !(approve && request.requires_confirmation) {
        return Ok(None);
    }
    match typed {
        Some(typed) if typed == request.tool => Ok(Some(request.tool.clone())),
        Some("") | None => Err(format!(
            "{} is dangerous: a tap does not approve it. Reply to the card with `{}` (or type \
             it in the card's box, then tap Approve).",
            request.tool, request.tool
        )),
        Some(other) => Err(format!(
            "`{other}` is not `{}`: not approved. Type the tool's name exactly.",
            request.tool
        )),
    }
}

/// What the tap asks, once understood.
struct Asked {
    /// The request the tapped card announced.
    approval_id: String,
    /// The request the button's data named, when it is not the card's.
    forged: Option<String>,
    action: Action,
    /// The name typed, when there was a box or a reply.
    typed: Option<String>,
    /// A text reply (Telegram): it approves only when it names the tool, whatever the tool.
    replied: bool,
}

impl Hub {
    /// Handles one tap from channel `index` and answers the user.
    pub async fn on_tap(&self, index: usize, tap: Tap) {
        let Some(channel) = self.channels.get(index) else {
            return;
        };
        let answer = self.decide_tap(channel, &tap).await;
        if let Err(e) = channel.service.tell(&tap.reply, &answer).await {
            tracing::warn!(channel = %channel.via, "answering a tap failed: {e}");
        }
    }

    async fn decide_tap(&self, channel: &Channel, tap: &Tap) -> String {
        let asked = match self.understand(channel, tap).await {
            Ok(asked) => asked,
            Err(answer) => return answer,
        };
        let request = match self.approvals.get(&asked.approval_id).await {
            Ok(Some(r)) => r,
            Ok(None) => return format!("There is no approval request {}.", asked.approval_id),
            Err(e) => {
                tracing::warn!(
                    "approval channels: reading {} failed: {e}",
                    asked.approval_id
                );
                return "toolgate could not read the request; try again.".to_owned();
            }
        };
        if let Some(named) = &asked.forged {
            let why = format!(
                "the button names request {named}, not {} which this card announced",
                request.id
            );
            let mapped = channel.config.operators.get(&tap.user).cloned();
            self.audit_tap(
                channel,
                tap,
                &request,
                &asked,
                mapped,
                Err((ErrorCode::Forbidden, &why)),
            )
            .await;
            return format!("Not allowed: {why}. Your tap was refused and recorded.");
        }
        if let Action::Page(page) = asked.action {
            if request.status == ApprovalStatus::Pending {
                let card = open_card(&request, usize::from(page));
                if let Err(e) = channel.service.update(&tap.chat, &tap.message, &card).await {
                    tracing::warn!(channel = %channel.via, "showing a page failed: {e}");
                }
                return format!("Page {}", page + 1);
            }
            return self.already(channel, tap, &request).await;
        }
        // Who may decide.
        let principal = match channel.config.operators.get(&tap.user) {
            Some(p) if self.operators.is_operator(p) => p.clone(),
            mapped => {
                let why = match mapped {
                    Some(p) => format!("{p} does not hold the operator right"),
                    None => "this chat user is not mapped to a toolgate operator".to_owned(),
                };
                self.audit_tap(
                    channel,
                    tap,
                    &request,
                    &asked,
                    mapped.cloned(),
                    Err((ErrorCode::Forbidden, &why)),
                )
                .await;
                return format!(
                    "Not allowed: {why}. Your tap was refused and recorded; ask an operator."
                );
            }
        };
        if request.status != ApprovalStatus::Pending {
            return self.already(channel, tap, &request).await;
        }
        let (approve, scope) = match asked.action {
            Action::Approve(scope) => (true, scope),
            _ => (false, DecisionScope::Once),
        };
        let confirm = match confirmation(&asked, &request, approve) {
            Ok(confirm) => confirm,
            Err(refusal) => {
                let why = (ErrorCode::InvalidArguments, refusal.as_str());
                self.audit_tap(channel, tap, &request, &asked, Some(principal), Err(why))
                    .await;
                return refusal;
            }
        };
        let decision = Decision {
            approve,
            scope,
            pattern: None,
            decided_by: principal.clone(),
            reason: Some(format!(
                "decided in {} by chat user {}",
                channel.via,
                tap.user_name.as_deref().unwrap_or(&tap.user)
            )),
            confirm,
            via: Some(channel.via.clone()),
        };
        match self.approvals.decide(&request.id, decision).await {
            Ok(decided) => {
                self.audit_tap(channel, tap, &decided, &asked, Some(principal), Ok(()))
                    .await;
                self.close_card(channel, &tap.chat, &tap.message, &decided)
                    .await;
                self.wake();
                outcome_line(&decided)
            }
            Err(StoreError::Conflict(_)) => match self.approvals.get(&request.id).await {
                Ok(Some(now)) if now.status != ApprovalStatus::Pending => {
                    self.already(channel, tap, &now).await
                }
                _ => "The decision was refused; try again.".to_owned(),
            },
            Err(e) => {
                tracing::warn!(approval = %request.id, "approval channels: deciding failed: {e}");
                "toolgate could not record the decision; try again.".to_owned()
            }
        }
    }

    /// The button or reply, understood; or what to answer when it is not.
    async fn understand(&self, channel: &Channel, tap: &Tap) -> Result<Asked, String> {
        match &tap.input {
            TapInput::Button { data, typed } => {
                let data = ButtonData::decode(data).ok_or_else(|| {
                    "This button is not toolgate's (or from a newer version).".to_owned()
                })?;
                let post = self.card_post(channel, tap).await?;
                let forged = (data.approval_id != post.approval_id).then_some(data.approval_id);
                Ok(Asked {
                    approval_id: post.approval_id,
                    forged,
                    action: data.action,
                    typed: typed.clone(),
                    replied: false,
                })
            }
            TapInput::Reply { text } => {
                let post = self.card_post(channel, tap).await?;
                let mut words = text.split_whitespace();
                let typed = words.next().unwrap_or_default().to_owned();
                let scope = match words.next() {
                    None => DecisionScope::Once,
                    Some(word) => word.parse().map_err(|_| {
                        format!("`{word}` is not once, session or always: not approved.")
                    })?,
                };
                Ok(Asked {
                    approval_id: post.approval_id,
                    forged: None,
                    action: Action::Approve(scope),
                    typed: Some(typed),
                    replied: true,
                })
            }
        }
    }

    /// The card the tap came from, as this channel posted it; or what to answer when the
    /// message is none of its cards.
    async fn card_post(&self, channel: &Channel, tap: &Tap) -> Result<ChatPost, String> {
        match self
            .posts
            .by_message(&channel.config.name, &tap.chat, &tap.message)
            .await
        {
            Ok(Some(post)) => Ok(post),
            Ok(None) => Err("That message is not an approval card of this channel.".to_owned()),
            Err(e) => {
                tracing::warn!(channel = %channel.via, "approval channels: reading a card failed: {e}");
                Err("toolgate could not read the card; try again.".to_owned())
            }
        }
    }

    /// Says how a request that is no longer pending ended, and makes sure its card says so.
    async fn already(&self, channel: &Channel, tap: &Tap, r: &ApprovalRequest) -> String {
        self.close_card(channel, &tap.chat, &tap.message, r).await;
        format!("Already decided: {}", outcome_line(r))
    }

    /// One audit record per decision taken or refused in a chat.
    async fn audit_tap(
        &self,
        channel: &Channel,
        tap: &Tap,
        r: &ApprovalRequest,
        asked: &Asked,
        principal: Option<String>,
        result: Result<(), (ErrorCode, &str)>,
    ) {
        let decision = match asked.action {
            Action::Approve(scope) => format!("approve {scope}"),
            Action::Deny => "deny".to_owned(),
            Action::Page(_) => "page".to_owned(),
        };
        let (outcome, error) = match result {
            Ok(()) => (AuditOutcome::Ok, None),
            Err((code, why)) => (AuditOutcome::Failed(code), Some(why.to_owned())),
        };
        let mut arguments = json!({
            "approval_id": r.id,
            "decision": decision,
            "channel": channel.via,
            "chat": tap.chat,
            "chat_user": tap.user,
            "chat_user_name": tap.user_name,
        });
        if let Some(named) = &asked.forged {
            arguments["button_approval_id"] = json!(named);
        }
        let record = AuditRecord {
            kind: RecordKind::Outcome,
            ts: AuditRecord::now_ts(),
            call_id: format!("{}.decision.{}", r.id, uuid::Uuid::new_v4().simple()),
            session: r.session.clone(),
            principal: principal
                .clone()
                .unwrap_or_else(|| format!("{}:{}", channel.config.kind.as_str(), tap.user)),
            role: match result {
                Ok(()) | Err((ErrorCode::InvalidArguments, _)) => "operator",
                Err(_) => "none",
            }
            .to_owned(),
            tool: r.tool.clone(),
            source: Some(format!("approvals:{}", channel.via)),
            risk: Some(r.risk),
            arguments,
            outcome,
            error,
            result: None,
            duration_us: None,
            approver: result.is_ok().then_some(principal).flatten(),
            approval_id: Some(r.id.clone()),
            issuer: None,
            subject: None,
            policy_rule: None,
        };
        if let Err(e) = self.audit.append(record).await {
            tracing::error!(approval = %r.id, "the audit record of a chat decision was not written: {e}");
        }
    }
}
