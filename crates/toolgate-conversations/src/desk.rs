//! [`Conversations`]: the one way every entry point talks to the agent. An entry point finds
//! (or opens) the conversation of who is talking, [`post`](Conversations::post)s what they
//! said, and reads the journal or listens live; the turns run by themselves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{Message, ModelClient, ToolSelector};
use toolgate_gateway::Gateway;
use toolgate_gateway::approve::{Ask, Decider, Refusal, Via};
use toolgate_gateway::audit::records::{self, ConversationMessage};
use toolgate_protocol::{Principal, Role};
use toolgate_store::ConversationStore;
use toolgate_store::approvals::ApprovalRequest;
use toolgate_store::conversations::{Append, ConversationRow, NewConversation};

use crate::commands::Command;
use crate::config::{ApprovalRight, ConversationsConfig};
use crate::error::ConversationError;
use crate::event::{Entry, Event};
use crate::history::replay;
use crate::live::{Live, LiveHub};

/// The most journal entries read in one query; a longer journal is read page by page.
pub(crate) const JOURNAL_PAGE: usize = 2_000;

/// The whole journal of `id`, oldest first, page by page.
pub(crate) async fn journal(
    store: &ConversationStore,
    id: &str,
) -> Result<Vec<Entry>, toolgate_store::StoreError> {
    let mut all = Vec::new();
    let mut after = 0;
    loop {
        let page = store.events(id, after, JOURNAL_PAGE).await?;
        let full = page.len() == JOURNAL_PAGE;
        if let Some(last) = page.last() {
            after = last.seq;
        }
        all.extend(page.iter().map(Entry::from_journal));
        if !full {
            return Ok(all);
        }
    }
}

/// Who is talking, as the entry point established it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaker {
    /// `web`, `openai`, `telegram:<channel>`, ….
    pub entry: String,
    /// The chat (and thread) in the entry point.
    pub chat: String,
    /// The user as the entry point names them.
    pub user_ref: String,
    pub principal: Principal,
    pub role: Role,
}

/// The model the turns use, and how.
#[derive(Clone)]
pub struct ModelSetup {
    pub client: Arc<dyn ModelClient>,
    pub system: Option<String>,
    pub max_steps: u32,
    pub max_tokens: Option<u32>,
    pub parallel_tool_calls: Option<bool>,
    /// The tools offered at each step (all the role sees when `None`).
    pub selector: Option<Arc<dyn ToolSelector>>,
}

/// What [`Conversations`] is made of.
pub struct ConversationDeps {
    pub store: ConversationStore,
    pub gateway: Arc<Gateway>,
    pub model: ModelSetup,
    pub config: ConversationsConfig,
}

/// What became of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Posted {
    /// Journaled as `seq`; its turn runs now or after `ahead` others.
    Queued { seq: u64, ahead: usize },
    /// A command, answered at once with `reply` (journaled as `seq`); `/new` names the
    /// conversation that continues.
    Command {
        reply: String,
        seq: Option<u64>,
        opened: Option<Box<ConversationRow>>,
    },
}

/// The turn a process runs now in a conversation: `/stop` cancels it.
pub(crate) struct Running {
    pub(crate) turn: Option<(u64, CancellationToken)>,
}

pub(crate) struct Core {
    pub(crate) store: ConversationStore,
    pub(crate) gateway: Arc<Gateway>,
    pub(crate) model: ModelSetup,
    pub(crate) config: ConversationsConfig,
    /// This process's name as a runner.
    pub(crate) runner: String,
    pub(crate) live: LiveHub,
    /// The conversations this process drives.
    pub(crate) running: Mutex<HashMap<String, Running>>,
    /// Fires at shutdown: turns stop where they stand, to be continued after the restart.
    pub(crate) stop: CancellationToken,
}

/// The conversations of one process. Cheap to clone.
#[derive(Clone)]
pub struct Conversations(pub(crate) Arc<Core>);

impl std::fmt::Debug for Conversations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversations")
            .field("runner", &self.0.runner)
            .finish_non_exhaustive()
    }
}

impl Conversations {
    pub fn new(deps: ConversationDeps) -> Self {
        Conversations(Arc::new(Core {
            store: deps.store,
            gateway: deps.gateway,
            model: deps.model,
            config: deps.config,
            runner: format!("run_{}", uuid::Uuid::new_v4().simple()),
            live: LiveHub::default(),
            running: Mutex::new(HashMap::new()),
            stop: CancellationToken::new(),
        }))
    }

    pub fn config(&self) -> &ConversationsConfig {
        &self.0.config
    }

    /// The model's name, as `/v1/chat/completions` reports it.
    pub fn model_name(&self) -> &str {
        self.0.model.client.model()
    }

    /// Starts the sweeper, which takes over conversations whose runner died (and those left
    /// pending by the last run of this process), until `stop` fires; then turns running here
    /// stop where they stand, to be continued after a restart.
    pub fn start(&self, stop: &CancellationToken) {
        let core = Arc::clone(&self.0);
        let stop = stop.clone();
        tokio::spawn(async move {
            let every = Duration::from_secs(core.config.sweep_secs);
            loop {
                match core.store.unattended(64).await {
                    Ok(ids) => {
                        for id in ids {
                            wake(&core, &id);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "conversations: cannot look for unattended conversations")
                    }
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(every) => {}
                }
            }
            core.stop.cancel();
        });
    }

    /// The open conversation of `speaker`'s chat, opened if there is none.
    pub async fn open(&self, speaker: &Speaker) -> Result<ConversationRow, ConversationError> {
        Ok(self
            .0
            .store
            .open(&NewConversation {
                id: new_id(),
                entry: speaker.entry.clone(),
                chat: speaker.chat.clone(),
                user_ref: speaker.user_ref.clone(),
                principal: speaker.principal.to_string(),
                role: speaker.role.to_string(),
            })
            .await?)
    }

    /// A new conversation of its own (the web: each is its own chat).
    pub async fn create(
        &self,
        entry: &str,
        principal: &Principal,
        role: &Role,
    ) -> Result<ConversationRow, ConversationError> {
        self.create_with(entry, principal, role, Vec::new()).await
    }

    /// A new conversation whose history starts with `prelude` (what its client brought).
    pub async fn create_with(
        &self,
        entry: &str,
        principal: &Principal,
        role: &Role,
        prelude: Vec<Message>,
    ) -> Result<ConversationRow, ConversationError> {
        let id = new_id();
        let row = self
            .0
            .store
            .open(&NewConversation {
                id: id.clone(),
                entry: entry.to_owned(),
                chat: id,
                user_ref: principal.to_string(),
                principal: principal.to_string(),
                role: role.to_string(),
            })
            .await?;
        if !prelude.is_empty() {
            let body = Event::Prelude { messages: prelude }.to_json();
            self.0
                .store
                .append(
                    &row.id,
                    Append {
                        kind: "prelude",
                        body: &body,
                        runner: None,
                        marks_pending: false,
                        title: None,
                    },
                )
                .await?;
        }
        Ok(row)
    }

    /// Conversation `id` if `principal` may read it (its own, or any for an operator).
    pub async fn get(
        &self,
        id: &str,
        principal: &Principal,
        operator: bool,
    ) -> Result<ConversationRow, ConversationError> {
        let row = self
            .0
            .store
            .get(id)
            .await?
            .ok_or_else(|| ConversationError::NotFound(id.to_owned()))?;
        if !operator && row.principal != principal.as_str() {
            // Not found either way: nobody learns which ids exist.
            return Err(ConversationError::NotFound(id.to_owned()));
        }
        Ok(row)
    }

    /// The newest conversations first: `principal`'s, or everyone's when `None`.
    pub async fn list(
        &self,
        principal: Option<&Principal>,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, ConversationError> {
        Ok(self
            .0
            .store
            .list(principal.map(Principal::as_str), limit)
            .await?)
    }

    /// The journal after `after`, oldest first.
    pub async fn entries(
        &self,
        id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Entry>, ConversationError> {
        Ok(self
            .0
            .store
            .events(id, after, limit)
            .await?
            .iter()
            .map(Entry::from_journal)
            .collect())
    }

    /// What happens in `id` in this process from now on.
    pub fn listen(&self, id: &str) -> broadcast::Receiver<Live> {
        self.0.live.subscribe(id)
    }

    /// What `from`, holding `role` now, said in `row`: a command answered at once, or a
    /// message journaled and queued for its turn, which runs with `role`.
    pub async fn post(
        &self,
        row: &ConversationRow,
        from: &str,
        role: &Role,
        text: &str,
    ) -> Result<Posted, ConversationError> {
        let core = &self.0;
        let text = text.trim();
        if text.is_empty() {
            return Err(ConversationError::Empty);
        }
        if text.len() > core.config.max_message_bytes {
            return Err(ConversationError::TooLong {
                got: text.len(),
                max: core.config.max_message_bytes,
            });
        }
        if row.closed_at_ms.is_some() {
            return Err(ConversationError::Closed(row.id.clone()));
        }
        audit(core, row, Some(from), "in", text, None).await;
        if let Some(command) = Command::parse(text) {
            return self.command(row, role, command).await;
        }
        let entries = journal(&core.store, &row.id).await?;
        let state = replay(&entries);
        let ahead = state.queued + usize::from(state.current.is_some());
        if ahead > core.config.max_queued {
            let e = ConversationError::Busy { queued: ahead };
            audit(core, row, None, "out", &e.to_string(), None).await;
            return Err(e);
        }
        // A conversation that is idle now becomes busy: one more of the principal's.
        if ahead == 0 {
            let busy = core.store.busy(&row.principal).await?;
            if busy >= core.config.max_busy_per_principal {
                let e = ConversationError::TooManyBusy {
                    busy,
                    max: core.config.max_busy_per_principal,
                };
                audit(core, row, None, "out", &e.to_string(), None).await;
                return Err(e);
            }
        }
        let title: String = text.chars().take(60).collect();
        let body = Event::User {
            text: text.to_owned(),
            from: from.to_owned(),
            role: Some(role.to_string()),
        }
        .to_json();
        let seq = core
            .store
            .append(
                &row.id,
                Append {
                    kind: "user",
                    body: &body,
                    runner: None,
                    marks_pending: true,
                    title: Some(&title),
                },
            )
            .await?;
        let Some(seq) = seq else {
            // Closed meanwhile (`/new` from another tab or replica), or gone.
            return Err(match core.store.get(&row.id).await? {
                Some(_) => ConversationError::Closed(row.id.clone()),
                None => ConversationError::NotFound(row.id.clone()),
            });
        };
        core.live.send(&row.id, Live::Journal { seq });
        wake(core, &row.id);
        Ok(Posted::Queued { seq, ahead })
    }

    async fn command(
        &self,
        row: &ConversationRow,
        role: &Role,
        command: Command,
    ) -> Result<Posted, ConversationError> {
        let core = &self.0;
        let mut opened = None;
        let reply = match command {
            Command::Help => Command::help(),
            Command::Tools => crate::commands::tools(&core.gateway, role),
            Command::Stop => {
                if self.stop_turn(row).await? {
                    "Stopping the current turn.".to_owned()
                } else {
                    "Nothing is running.".to_owned()
                }
            }
            Command::New => {
                self.stop_turn(row).await?;
                core.store.close(&row.id).await?;
                let next = core
                    .store
                    .open(&NewConversation {
                        id: new_id(),
                        entry: row.entry.clone(),
                        chat: row.chat.clone(),
                        user_ref: row.user_ref.clone(),
                        principal: row.principal.clone(),
                        role: row.role.clone(),
                    })
                    .await?;
                let reply = format!("Started a new conversation ({}).", next.id);
                opened = Some(Box::new(next));
                reply
            }
        };
        let seq = notice(core, row, &reply).await;
        Ok(Posted::Command { reply, seq, opened })
    }

    /// Stops the turn running in `row`: here at once, elsewhere through the journal.
    /// Whether a turn was running.
    async fn stop_turn(&self, row: &ConversationRow) -> Result<bool, ConversationError> {
        let core = &self.0;
        {
            let running = core.running.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(Running {
                turn: Some((_, cancel)),
            }) = running.get(&row.id)
            {
                cancel.cancel();
                return Ok(true);
            }
        }
        let entries = journal(&core.store, &row.id).await?;
        if replay(&entries).current.is_none() {
            return Ok(false);
        }
        let body = Event::Stop.to_json();
        core.store
            .append(
                &row.id,
                Append {
                    kind: "stop",
                    body: &body,
                    runner: None,
                    marks_pending: false,
                    title: None,
                },
            )
            .await?;
        Ok(true)
    }

    /// Decides approval `approval_id` from inside conversation `row`, as `by`: the
    /// conversation's own user (when `[conversations] approvals = "user"`) or an operator, and
    /// only a request made by a call of this conversation.
    pub async fn decide(
        &self,
        row: &ConversationRow,
        approval_id: &str,
        ask: Ask,
        by: &Principal,
        operator: bool,
    ) -> Result<ApprovalRequest, Refusal> {
        let core = &self.0;
        let decisions = core.gateway.decisions();
        let request = match decisions.store().get(approval_id).await {
            Ok(Some(r)) => r,
            Ok(None) => return Err(Refusal::NotFound(approval_id.to_owned())),
            Err(e) => return Err(Refusal::Store(e)),
        };
        let own_user = row.principal == by.as_str();
        let mut decider = decider_in(row, by, true, !operator);
        // Only a card this conversation's own turn journaled: a request made elsewhere under
        // the conversation's id as its session (`/v1/calls` lets a caller name any session)
        // is not the conversation's to decide.
        let carded = match journal(&core.store, &row.id)
            .await
            .map_err(ConversationError::from)
        {
            Ok(entries) => entries.iter().any(
                |e| matches!(&e.event, Event::Approval { approval_id: a, .. } if a == approval_id),
            ),
            Err(ConversationError::Store(e)) => return Err(Refusal::Store(e)),
            Err(_) => false,
        };
        let why = if !carded
            || request.session.as_str() != row.id
            || request.principal.as_str() != row.principal
        {
            Some("this approval request was not made in this conversation")
        } else if !operator && !own_user {
            Some("only the conversation's user or an operator decides its approvals")
        } else if !operator && core.config.approvals == ApprovalRight::Operators {
            Some("[conversations] approvals = \"operators\": only an operator decides")
        } else {
            None
        };
        if let Some(why) = why {
            decider.operator = false;
            decisions
                .refuse(
                    &request,
                    &ask,
                    &decider,
                    toolgate_protocol::ErrorCode::Forbidden,
                    why,
                )
                .await;
            return Err(Refusal::Forbidden(why.to_owned()));
        }
        decider.context.insert(
            "right".into(),
            Value::from(if operator {
                "operator"
            } else {
                "own conversation"
            }),
        );
        decisions.decide(approval_id, ask, &decider).await
    }

    /// Records a decision asked from inside `row` and refused before it reached the desk
    /// (a dangerous tool tapped without its name typed, a forged button), with why.
    pub async fn refuse_decision(
        &self,
        row: &ConversationRow,
        request: &ApprovalRequest,
        ask: &Ask,
        by: &Principal,
        code: toolgate_protocol::ErrorCode,
        why: &str,
    ) {
        let decider = decider_in(row, by, false, row.principal == by.as_str());
        self.0
            .gateway
            .decisions()
            .refuse(request, ask, &decider, code, why)
            .await;
    }

    /// Conversation `id` as stored, for an entry point that found it by its own key (a chat
    /// app's card): no reader check.
    pub async fn row(&self, id: &str) -> Result<Option<ConversationRow>, ConversationError> {
        Ok(self.0.store.get(id).await?)
    }

    /// The last event of `id` its chat app was handed (0: none), if `id` exists.
    pub async fn delivered(&self, id: &str) -> Result<Option<u64>, ConversationError> {
        Ok(self.0.store.delivered(id).await?)
    }

    /// Records that `id`'s chat app was handed everything through `seq`.
    pub async fn mark_delivered(&self, id: &str, seq: u64) -> Result<bool, ConversationError> {
        Ok(self.0.store.mark_delivered(id, seq).await?)
    }

    /// The conversations of `entry` with events not yet handed to their chat app, with
    /// their cursors.
    pub async fn undelivered(
        &self,
        entry: &str,
        limit: usize,
    ) -> Result<Vec<(String, u64)>, ConversationError> {
        Ok(self.0.store.undelivered(entry, limit).await?)
    }

    /// The approval request `id` (a card's), if it exists.
    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRequest>, ConversationError> {
        Ok(self.0.gateway.decisions().store().get(id).await?)
    }

    /// Records a message from someone no principal maps to, refused.
    pub async fn refuse_stranger(
        &self,
        entry: &str,
        chat: &str,
        from: &str,
        text: &str,
        why: &str,
    ) {
        let record = records::conversation_message(&ConversationMessage {
            conversation: chat,
            entry,
            from: Some(from),
            principal: &chat_principal(entry, from),
            role: &Role::from("none"),
            direction: "in",
            text,
            refused: Some(why),
        });
        if let Err(e) = self.0.gateway.audit().append(record).await {
            tracing::error!("cannot audit a refused conversation message: {e}");
        }
    }
}

/// `by` deciding from inside `row`, as the decision desk records it.
fn decider_in(row: &ConversationRow, by: &Principal, operator: bool, by_its_user: bool) -> Decider {
    let mut decider = Decider::new(
        by.clone(),
        operator,
        Via::Conversation {
            name: format!("conversation:{}", row.entry),
            by_its_user,
        },
    );
    decider.context.insert("conversation".into(), json!(row.id));
    decider
}

/// The principal of chat user `user` of entry point `entry` when no principal is mapped to
/// them (a guest, or a stranger refused): `telegram://assistant/42`. It holds toolgate's
/// qualified mark (`://`), which no token's own principal may hold, so no token can be
/// issued that reads or decides as a chat's guest, and no guest talks as a token's
/// principal.
pub fn chat_principal(entry: &str, user: &str) -> Principal {
    let (kind, name) = entry.split_once(':').unwrap_or((entry, ""));
    Principal::from(format!("{kind}://{name}/{user}"))
}

/// Starts driving `id` in this process unless it already is.
pub(crate) fn wake(core: &Arc<Core>, id: &str) {
    if core.stop.is_cancelled() {
        return;
    }
    {
        let mut running = core.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running.contains_key(id) {
            return;
        }
        running.insert(id.to_owned(), Running { turn: None });
    }
    tokio::spawn(crate::runner::drive(Arc::clone(core), id.to_owned()));
}

/// Journals toolgate's own reply `text` and audits it.
pub(crate) async fn notice(core: &Core, row: &ConversationRow, text: &str) -> Option<u64> {
    audit(core, row, None, "out", text, None).await;
    let body = Event::Notice {
        text: text.to_owned(),
    }
    .to_json();
    let seq = core
        .store
        .append(
            &row.id,
            Append {
                kind: "notice",
                body: &body,
                runner: None,
                marks_pending: false,
                title: None,
            },
        )
        .await
        .ok()
        .flatten()?;
    core.live.send(&row.id, Live::Journal { seq });
    Some(seq)
}

/// One audit record of a message in or out of `row`.
pub(crate) async fn audit(
    core: &Core,
    row: &ConversationRow,
    from: Option<&str>,
    direction: &str,
    text: &str,
    refused: Option<&str>,
) {
    let record = records::conversation_message(&ConversationMessage {
        conversation: &row.id,
        entry: &row.entry,
        from,
        principal: &Principal::from(row.principal.as_str()),
        role: &Role::from(row.role.as_str()),
        direction,
        text,
        refused,
    });
    if let Err(e) = core.gateway.audit().append(record).await {
        tracing::error!(conversation = %row.id, "cannot audit a conversation message: {e}");
    }
}

fn new_id() -> String {
    format!("conv_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token could otherwise be issued under a guest's principal and read (or decide in)
    /// the guest's conversations, or a guest talk as a token holder.
    #[test]
    fn a_chat_guest_cannot_share_a_principal_with_a_token() {
        let guest = chat_principal("telegram:assistant", "99");
        assert_eq!(guest.as_str(), "telegram://assistant/99");
        assert!(toolgate_store::tokens::check_own_principal(guest.as_str()).is_err());
        assert_ne!(
            chat_principal("slack:a", "U1"),
            chat_principal("telegram:a", "U1")
        );
    }
}
