//! A message to the bot: who is talking (a mapped principal with the role of their active
//! token, a guest, or nobody — refused and audited), then their conversation in this chat
//! gets it. Commands are answered through the journal like everything else; what cannot be
//! queued (the conversation is busy, the message too long) is answered at once.

use std::sync::Arc;

use toolgate_channels::action::is_approval_id;
use toolgate_conversations::{Posted, Speaker};
use toolgate_protocol::Principal;

use toolgate_store::approvals::ApprovalStatus;

use crate::bots::Bots;
use crate::config::BotKind;
use crate::incoming::ChatMessage;

impl Bots {
    pub(crate) async fn on_message(self: &Arc<Self>, index: usize, m: ChatMessage) {
        let bot = &self.bots[index];
        if !listed(&bot.config.chats, &m.chat) {
            tracing::debug!(bot = %bot.entry, chat = %m.chat, "bots: a message from a chat not listed was ignored");
            return;
        }
        // A reply to one of the bot's approval cards: the typed confirmation.
        if let Some(replied) = &m.reply_to
            && let Ok(Some(post)) = self.posts.by_message(&bot.entry, &m.chat, replied).await
            && is_approval_id(&post.approval_id)
        {
            let answer = self.on_typed(index, &m, &post.approval_id, replied).await;
            self.say(index, &m, &answer).await;
            return;
        }
        // WeCom has no replies to a message: the tool's name sent while its dangerous card
        // waits in this chat is the typed confirmation.
        if bot.config.kind == BotKind::Wecom
            && let Some((card_of, message)) = self.waiting_for_name(index, &m).await
        {
            let answer = self.on_typed(index, &m, &card_of, &message).await;
            self.say(index, &m, &answer).await;
            return;
        }
        let speaker = match self.speaker(index, &m.chat, &m.user) {
            Ok(speaker) => speaker,
            Err(why) => {
                self.conversations
                    .refuse_stranger(&bot.entry, &m.chat, &m.user, &m.text, &why)
                    .await;
                // Every refused message is audited; the sender is told once a minute.
                if self.tell_refused(index, &m.user) {
                    self.say(
                        index,
                        &m,
                        &format!("Not allowed: {why}. Your message was refused and recorded."),
                    )
                    .await;
                }
                return;
            }
        };
        let posted = match self.conversations.open(&speaker).await {
            Ok(row) => self
                .conversations
                .post(&row, &m.user, &speaker.role, &m.text)
                .await
                .map(|posted| (row, posted)),
            Err(e) => Err(e),
        };
        match posted {
            Ok((row, Posted::Queued { .. } | Posted::Command { .. })) => {
                self.watch(index, &row.id);
            }
            Err(e) => {
                tracing::info!(bot = %bot.entry, chat = %m.chat, "bots: a message was not queued: {e}");
                self.say(index, &m, &e.to_string()).await;
            }
        }
    }

    /// The open card in `m`'s chat of a pending dangerous request for the tool `m` names:
    /// its approval id and message.
    async fn waiting_for_name(&self, index: usize, m: &ChatMessage) -> Option<(String, String)> {
        let named = m.text.split_whitespace().next()?;
        let posts = self.posts.open_posts(&self.bots[index].entry).await.ok()?;
        for post in posts.into_iter().rev() {
            let Some(message) = post.message_ref else {
                continue;
            };
            if post.chat != m.chat || !is_approval_id(&post.approval_id) {
                continue;
            }
            if let Ok(Some(r)) = self.conversations.approval(&post.approval_id).await
                && r.status == ApprovalStatus::Pending
                && r.requires_confirmation
                && r.tool == named
            {
                return Some((post.approval_id, message));
            }
        }
        None
    }

    /// A refused message already answered (WeCom's passive reply): only audited.
    pub(crate) async fn refuse_quietly(&self, index: usize, m: &ChatMessage) {
        if let Err(why) = self.speaker(index, &m.chat, &m.user) {
            self.conversations
                .refuse_stranger(&self.bots[index].entry, &m.chat, &m.user, &m.text, &why)
                .await;
        }
    }

    /// Who `user` of `chat` talks to the agent as, or why nobody.
    pub(crate) fn speaker(&self, index: usize, chat: &str, user: &str) -> Result<Speaker, String> {
        let bot = &self.bots[index];
        let (principal, role) = match bot.config.users.get(user) {
            Some(principal) => match self.directory.standing(principal) {
                Some(standing) => (Principal::from(principal.as_str()), standing.role),
                None => {
                    return Err(format!(
                        "chat user {user} is mapped to `{principal}`, who holds no active token \
                         (an operator issues one with `toolgate token create`)"
                    ));
                }
            },
            None => match &bot.config.guest_role {
                Some(role) => (self.guest(index, user), role.clone()),
                None => {
                    return Err(format!(
                        "chat user {user} is not mapped to a toolgate principal ([bots.users] of \
                         `{}`)",
                        bot.config.name
                    ));
                }
            },
        };
        Ok(Speaker {
            entry: bot.entry.clone(),
            chat: chat.to_owned(),
            user_ref: user.to_owned(),
            principal,
            role,
        })
    }

    /// The principal of a chat user nobody mapped: `telegram://<bot>/<user id>`
    /// ([`toolgate_conversations::chat_principal`]).
    pub(crate) fn guest(&self, index: usize, user: &str) -> Principal {
        toolgate_conversations::chat_principal(&self.bots[index].entry, user)
    }

    /// Answers `m` at once (a reply to it in a group).
    pub(crate) async fn say(&self, index: usize, m: &ChatMessage, text: &str) {
        let bot = &self.bots[index];
        let reply_to = (!m.private).then_some(m.message.as_str());
        if let Err(e) = bot.out.send_text(&m.chat, text, reply_to).await {
            tracing::warn!(bot = %bot.entry, chat = %m.chat, "bots: answering a message failed: {e}");
        }
    }
}

/// Whether `chat` is one of `chats` (any when none is listed). A Slack thread
/// (`<channel>/<thread ts>`) is listed when its channel is.
fn listed(chats: &[String], chat: &str) -> bool {
    let channel = chat.split_once('/').map_or(chat, |(channel, _)| channel);
    chats.is_empty() || chats.iter().any(|c| c == channel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_listed_by_its_channel() {
        let chats = vec!["C1".to_owned(), "-100".to_owned()];
        assert!(listed(&chats, "C1/1700000000.000100"));
        assert!(listed(&chats, "C1"));
        assert!(listed(&chats, "-100"));
        assert!(!listed(&chats, "C2/1.0"));
        assert!(!listed(&chats, "C10"));
        assert!(listed(&[], "anything"));
    }
}
