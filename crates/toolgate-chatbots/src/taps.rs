//! A button on one of the bot's approval cards, or a text reply to one: a decision taken
//! inside the conversation the card is in, through [`toolgate_conversations::Conversations::decide`]
//! — so only the conversation's own user (when `[conversations] approvals = "user"`) or an
//! operator decides, and only a request that conversation's turn made. A dangerous tool is
//! approved only with its name typed (a reply to the card): a tap alone never approves it.
//! Every refusal is recorded by the decision desk.

use toolgate_channels::action::{Action, ButtonData};
use toolgate_channels::card::{open_card, outcome_line};
use toolgate_channels::confirm;
use toolgate_conversations::ConversationRow;
use toolgate_gateway::approve::{Ask, Refusal};
use toolgate_protocol::{ErrorCode, Principal};
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};

use crate::bots::Bots;

use crate::incoming::{ButtonPress, ChatMessage};

/// Where the card is and who acts on it.
struct OnCard<'a> {
    chat: &'a str,
    message: &'a str,
    user: &'a str,
    user_name: Option<&'a str>,
    /// The tool's name as typed (Slack's box, Telegram's reply), if anything.
    typed: Option<&'a str>,
    /// A text reply to the card: it approves only when it is the tool's name.
    replied: bool,
}

impl Bots {
    pub(crate) async fn on_button(&self, index: usize, press: ButtonPress) {
        let answer = self.decide_button(index, &press).await;
        let bot = &self.bots[index];
        if let Err(e) = bot.out.tell(&press.reply, &answer).await {
            tracing::warn!(bot = %bot.entry, "bots: answering a tap failed: {e}");
        }
    }

    async fn decide_button(&self, index: usize, press: &ButtonPress) -> String {
        let bot = &self.bots[index];
        let card_of = match self.card_at(index, &press.chat, &press.message).await {
            Ok(Some(approval_id)) => approval_id,
            Ok(None) => return "That message is not an approval card of this bot.".to_owned(),
            Err(()) => return "toolgate could not read the card; try again.".to_owned(),
        };
        let Some(data) = ButtonData::decode(&press.data) else {
            return "This button is not toolgate's (or from a newer version).".to_owned();
        };
        let (request, row) = match self.card(&card_of).await {
            Ok(found) => found,
            Err(answer) => return answer,
        };
        let on = OnCard {
            chat: &press.chat,
            message: &press.message,
            user: &press.user,
            user_name: press.user_name.as_deref(),
            typed: press.typed.as_deref(),
            replied: false,
        };
        let ask = match data.action {
            Action::Approve(scope) => Ask::approve(scope),
            Action::Deny => Ask::deny(),
            Action::Page(page) => {
                if request.status == ApprovalStatus::Pending && data.approval_id == card_of {
                    let card = open_card(&request, usize::from(page));
                    if let Err(e) = bot
                        .out
                        .update_card(&press.chat, &press.message, &card)
                        .await
                    {
                        tracing::warn!(bot = %bot.entry, "bots: showing a page failed: {e}");
                    }
                    return format!("Page {}", page + 1);
                }
                Ask::deny()
            }
        };
        if data.approval_id != card_of {
            let by = self.tapper(index, press.user.as_str());
            let why = format!(
                "the button names request {}, not {card_of} which this card shows",
                data.approval_id
            );
            self.conversations
                .refuse_decision(&row, &request, &ask, &by, ErrorCode::Forbidden, &why)
                .await;
            return format!("Not allowed: {why}. Your tap was refused and recorded.");
        }
        self.decide_on_card(index, &on, &row, &request, ask).await
    }

    /// The approval request of the card that is `message` in `chat` (waiting briefly for
    /// a card being recorded: [`toolgate_channels::recorded::recorded_card`]).
    async fn card_at(&self, index: usize, chat: &str, message: &str) -> Result<Option<String>, ()> {
        let bot = &self.bots[index];
        toolgate_channels::recorded::recorded_card(&self.posts, &bot.entry, chat, message)
            .await
            .map(|post| post.map(|p| p.approval_id))
            .map_err(|e| tracing::warn!(bot = %bot.entry, "bots: reading a card failed: {e}"))
    }

    /// A text reply to card `card_of` (whose message is `card_message`): the tool's name,
    /// optionally followed by `session` or `always`.
    pub(crate) async fn on_typed(
        &self,
        index: usize,
        m: &ChatMessage,
        card_of: &str,
        card_message: &str,
    ) -> String {
        let (request, row) = match self.card(card_of).await {
            Ok(found) => found,
            Err(answer) => return answer,
        };
        let (typed, scope) = match confirm::reply(&m.text) {
            Ok(asked) => asked,
            Err(refusal) => return refusal,
        };
        let on = OnCard {
            chat: &m.chat,
            message: card_message,
            user: &m.user,
            user_name: m.user_name.as_deref(),
            typed: Some(&typed),
            replied: true,
        };
        self.decide_on_card(index, &on, &row, &request, Ask::approve(scope))
            .await
    }

    /// The request a card shows and the conversation it was made in, or what to answer.
    async fn card(&self, approval_id: &str) -> Result<(ApprovalRequest, ConversationRow), String> {
        let request = match self.conversations.approval(approval_id).await {
            Ok(Some(r)) => r,
            Ok(None) => return Err(format!("There is no approval request {approval_id}.")),
            Err(_) => return Err("toolgate could not read the request; try again.".to_owned()),
        };
        match self.conversations.row(request.session.as_str()).await {
            Ok(Some(row)) => Ok((request, row)),
            Ok(None) => Err("This card's conversation is gone.".to_owned()),
            Err(_) => Err("toolgate could not read the conversation; try again.".to_owned()),
        }
    }

    /// Who taps: the principal a chat user is mapped to, or their guest principal.
    fn tapper(&self, index: usize, user: &str) -> Principal {
        match self.bots[index].config.users.get(user) {
            Some(principal) => Principal::from(principal.as_str()),
            None => self.guest(index, user),
        }
    }

    async fn decide_on_card(
        &self,
        index: usize,
        on: &OnCard<'_>,
        row: &ConversationRow,
        request: &ApprovalRequest,
        mut ask: Ask,
    ) -> String {
        let bot = &self.bots[index];
        let by = self.tapper(index, on.user);
        let operator = self.directory.is_operator(by.as_str());
        // A mapped user whose principal lost its token talks for nobody.
        if !operator
            && bot.config.users.contains_key(on.user)
            && self.directory.standing(by.as_str()).is_none()
        {
            let why = format!("`{by}` holds no active token");
            self.conversations
                .refuse_decision(row, request, &ask, &by, ErrorCode::Forbidden, &why)
                .await;
            return format!("Not allowed: {why}. Your tap was refused and recorded.");
        }
        if request.status != ApprovalStatus::Pending {
            self.close_card(index, on.chat, on.message, request).await;
            return format!("Already decided: {}", outcome_line(request));
        }
        match confirm::typed_name(on.typed, on.replied, request, ask.approve) {
            Ok(confirmation) => ask.confirm = confirmation,
            Err(refusal) => {
                self.conversations
                    .refuse_decision(
                        row,
                        request,
                        &ask,
                        &by,
                        ErrorCode::InvalidArguments,
                        &refusal,
                    )
                    .await;
                return refusal;
            }
        }
        ask.reason = Some(format!(
            "decided in {} by chat user {}",
            bot.entry,
            on.user_name.unwrap_or(on.user)
        ));
        match self
            .conversations
            .decide(row, &request.id, ask, &by, operator)
            .await
        {
            Ok(decided) => {
                self.close_card(index, on.chat, on.message, &decided).await;
                outcome_line(&decided)
            }
            Err(Refusal::Forbidden(why)) => {
                format!("Not allowed: {why}. Your tap was refused and recorded.")
            }
            Err(Refusal::Conflict { now, .. }) => match now {
                Some(now) if now.status != ApprovalStatus::Pending => {
                    self.close_card(index, on.chat, on.message, &now).await;
                    format!("Already decided: {}", outcome_line(&now))
                }
                _ => "The decision was refused; try again.".to_owned(),
            },
            Err(Refusal::NotFound(id)) => format!("There is no approval request {id}."),
            Err(Refusal::Store(e)) => {
                tracing::warn!(bot = %bot.entry, approval = %request.id, "bots: deciding failed: {e}");
                "toolgate could not record the decision; try again.".to_owned()
            }
        }
    }
}
