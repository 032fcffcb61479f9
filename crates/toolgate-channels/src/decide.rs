//! A tap or reply, turned into a decision — or refused, with the reason told to the user.
//!
//! 1. The request is the one the tapped card announced (its chat and message, as
//!    [`toolgate_store::ChatPosts`] recorded them), whether the tap is a button or a typed
//!    reply. A button's data only says what to do: data naming another request (forged, or
//!    from a client that mixed up its cards) is refused and audited, and the card is left as
//!    it is. Page buttons just show another page.
//! 2. The chat user must be mapped to a principal that is an operator now; anyone else is
//!    refused, and the refusal is audited.
//!
//! Every decision and refusal is taken or recorded by the gateway's decision desk
//! ([`toolgate_gateway::approve::Decisions`]), as the API's and the CLI's are.
//! 3. A dangerous tool is approved only with its name typed (a reply, or the card's box):
//!    a tap alone never approves it.
//! 4. The store decides once; a request already decided (here, in the console, on another
//!    replica) is reported as such and its card refreshed.

use serde_json::json;
use toolgate_gateway::approve::{Ask, Decider, Refusal, Via};
use toolgate_protocol::ErrorCode;
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};
use toolgate_store::chat::ChatPost;

use crate::action::{Action, ButtonData};
use crate::approval_channels::{ApprovalChannels, Channel};
use crate::card::{open_card, outcome_line};
use crate::service::{Tap, TapInput};

/// The typed name a decision needs, checked ([`crate::confirm::typed_name`]).
fn confirmation(
    asked: &Asked,
    request: &ApprovalRequest,
    approve: bool,
) -> Result<Option<String>, String> {
    crate::confirm::typed_name(asked.typed.as_deref(), asked.replied, request, approve)
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

impl ApprovalChannels {
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
            let by = decider(channel, tap, &asked, mapped, false);
            self.decisions
                .refuse(&request, &ask_of(&asked), &by, ErrorCode::Forbidden, &why)
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
        // Who may decide: a chat user mapped to a principal; the desk checks that the
        // principal holds the operator right now.
        let Some(principal) = channel.config.operators.get(&tap.user).cloned() else {
            let why = "this chat user is not mapped to a toolgate operator";
            let by = decider(channel, tap, &asked, None, false);
            self.decisions
                .refuse(&request, &ask_of(&asked), &by, ErrorCode::Forbidden, why)
                .await;
            return format!(
                "Not allowed: {why}. Your tap was refused and recorded; ask an operator."
            );
        };
        let operator = self.operators.is_operator(&principal);
        if operator && request.status != ApprovalStatus::Pending {
            return self.already(channel, tap, &request).await;
        }
        let mut ask = ask_of(&asked);
        let by = decider(channel, tap, &asked, Some(principal), operator);
        if operator {
            match confirmation(&asked, &request, ask.approve) {
                Ok(confirm) => ask.confirm = confirm,
                Err(refusal) => {
                    self.decisions
                        .refuse(&request, &ask, &by, ErrorCode::InvalidArguments, &refusal)
                        .await;
                    return refusal;
                }
            }
        }
        ask.reason = Some(format!(
            "decided in {} by chat user {}",
            channel.via,
            tap.user_name.as_deref().unwrap_or(&tap.user)
        ));
        match self.decisions.decide(&request.id, ask, &by).await {
            Ok(decided) => {
                self.close_card(channel, &tap.chat, &tap.message, &decided)
                    .await;
                self.wake();
                outcome_line(&decided)
            }
            Err(Refusal::Forbidden(why)) => {
                format!("Not allowed: {why}. Your tap was refused and recorded; ask an operator.")
            }
            Err(Refusal::Conflict { now, .. }) => match now {
                Some(now) if now.status != ApprovalStatus::Pending => {
                    self.already(channel, tap, &now).await
                }
                _ => "The decision was refused; try again.".to_owned(),
            },
            Err(Refusal::NotFound(id)) => format!("There is no approval request {id}."),
            Err(Refusal::Store(e)) => {
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
                let (typed, scope) = crate::confirm::reply(text)?;
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
        match crate::recorded::recorded_card(
            &self.posts,
            &channel.config.name,
            &tap.chat,
            &tap.message,
        )
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
}

/// What the tap asks the desk for (the typed name is added once checked).
fn ask_of(asked: &Asked) -> Ask {
    match asked.action {
        Action::Approve(scope) => Ask::approve(scope),
        _ => Ask::deny(),
    }
}

/// The chat user as the desk records them: the principal they are mapped to (or
/// `{kind}:{user}` when none), with the chat's own facts.
fn decider(
    channel: &Channel,
    tap: &Tap,
    asked: &Asked,
    principal: Option<String>,
    operator: bool,
) -> Decider {
    let principal =
        principal.unwrap_or_else(|| format!("{}:{}", channel.config.kind.as_str(), tap.user));
    let mut by = Decider::new(principal, operator, Via::Chat(channel.via.clone()));
    by.context.insert("channel".to_owned(), json!(channel.via));
    by.context.insert("chat".to_owned(), json!(tap.chat));
    by.context.insert("chat_user".to_owned(), json!(tap.user));
    by.context
        .insert("chat_user_name".to_owned(), json!(tap.user_name));
    if let Some(named) = &asked.forged {
        by.context
            .insert("button_approval_id".to_owned(), json!(named));
    }
    by
}
