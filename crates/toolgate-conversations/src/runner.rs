//! Driving a conversation: while it has a message without an answer, hold its lease and run
//! that message's turn, then the next; give the lease up when nothing is left.
//!
//! A turn is the agent loop with a [`Checkpoint`] that journals each model turn before its
//! calls run and their results after, every append fenced by the lease. Where the journal
//! stands is where a turn continues: after a crash, on this process's restart (the sweeper
//! finds the conversation pending) or on another replica once the lease has passed. At
//! shutdown a turn stops where it stands, journaling nothing more, so the restart continues
//! it; `/stop` ends it (its unanswered calls answered `cancelled`).

use std::sync::{Arc, PoisonError};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{
    Agent, AgentError, AgentEvent, AgentOptions, AssistantTurn, Checkpoint, Message, Observer,
    StopReason, StreamEvent, ToolResult,
};
use toolgate_store::conversations::{Append, ConversationRow};

use crate::desk::{Core, JOURNAL_PAGE, audit, journal, wake};
use crate::event::Event;
use crate::history::replay;
use crate::live::Live;

/// What one pass over a conversation leaves to do.
enum Next {
    /// Look again (a turn ended, or a message arrived meanwhile).
    Again,
    /// Nothing left, or someone else drives it, or the process stops.
    Done,
    /// Nothing left, and the lease was given up with it.
    Settled,
}

/// Drives conversation `id` until it has nothing left to answer; started by [`wake`].
pub(crate) async fn drive(core: Arc<Core>, id: String) {
    // When this driver last took or renewed the lease: a turn that ended within a third of
    // the lease goes on to the next without renewing it again.
    let mut claimed: Option<std::time::Instant> = None;
    let mut release = true;
    loop {
        if core.stop.is_cancelled() {
            break;
        }
        if claimed.is_none_or(|at| at.elapsed() >= lease(&core) / 3) {
            match core.store.claim(&id, &core.runner, lease(&core)).await {
                Ok(true) => claimed = Some(std::time::Instant::now()),
                Ok(false) => {
                    release = false;
                    break;
                }
                Err(e) => {
                    tracing::warn!(conversation = %id, error = %e, "conversations: cannot take the conversation's lease");
                    break;
                }
            }
        }
        match pass(&core, &id).await {
            Next::Again => {}
            Next::Done => break,
            Next::Settled => {
                release = false;
                break;
            }
        }
    }
    if release {
        let _ = core.store.release(&id, &core.runner).await;
    }
    core.running
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&id);
    // A message that arrived while this driver was finishing found it still registered.
    if !core.stop.is_cancelled()
        && let Ok(Some(row)) = core.store.get(&id).await
        && row.pending
        && row.runner.is_none()
    {
        wake(&core, &id);
    }
}

fn lease(core: &Core) -> std::time::Duration {
    std::time::Duration::from_secs(core.config.lease_secs)
}

async fn pass(core: &Arc<Core>, id: &str) -> Next {
    let (row, entries) = match (core.store.get(id).await, journal(&core.store, id).await) {
        (Ok(Some(row)), Ok(entries)) => (row, entries),
        (Ok(None), _) => return Next::Done,
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(conversation = %id, error = %e, "conversations: cannot read the journal");
            return Next::Done;
        }
    };
    let through = entries.last().map_or(0, |e| e.seq);
    let state = replay(&entries);
    let Some(reply_to) = state.current else {
        return match core.store.settle(id, &core.runner, through).await {
            Ok(true) => Next::Settled,
            Ok(false) => Next::Again,
            Err(e) => {
                tracing::warn!(conversation = %id, error = %e, "conversations: cannot settle");
                Next::Done
            }
        };
    };
    // The model's last turn was kept but the answer was not: answer it, without asking again.
    if let Some(Message::Assistant(turn)) = state.history.last()
        && turn.tool_calls.is_empty()
    {
        let text = turn.text.clone();
        finish(core, &row, reply_to, Ok((text, "end_turn".to_owned()))).await;
        return Next::Again;
    }
    let role = state.role.unwrap_or_else(|| row.role.clone());
    run_turn(core, &row, &role, state.history, reply_to, through).await
}

/// What fences a turn: it stops when the user stops it, the process stops, or the lease is
/// lost.
#[derive(Clone)]
struct TurnControl {
    /// The agent's cancellation: fires for any of the three.
    cancel: CancellationToken,
    /// Fires when the lease could not be renewed: someone else may continue the turn.
    lease_lost: CancellationToken,
}

impl TurnControl {
    /// Whether the turn must stop without journaling anything more (the process stops, or
    /// another runner may hold it): whoever continues it starts from the journal.
    fn abandoned(&self, core: &Core) -> bool {
        core.stop.is_cancelled() || self.lease_lost.is_cancelled()
    }
}

async fn run_turn(
    core: &Arc<Core>,
    row: &ConversationRow,
    role: &str,
    mut history: Vec<Message>,
    reply_to: u64,
    through: u64,
) -> Next {
    let control = TurnControl {
        cancel: CancellationToken::new(),
        lease_lost: CancellationToken::new(),
    };
    if let Some(running) = core
        .running
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_mut(&row.id)
    {
        running.turn = Some((reply_to, control.cancel.clone()));
    }
    let keeper = tokio::spawn(keep_lease(
        Arc::clone(core),
        row.id.clone(),
        through,
        control.clone(),
    ));
    let model = &core.model;
    let options = AgentOptions {
        session_id: row.id.as_str().into(),
        role: role.into(),
        principal: row.principal.as_str().into(),
        system: core.config.system.clone().or_else(|| model.system.clone()),
        max_steps: core.config.max_steps.unwrap_or(model.max_steps),
        stream: true,
        max_tokens: model.max_tokens,
        parallel_tool_calls: model.parallel_tool_calls,
        wait_for_approval: Some(true),
        call_keys: Some(row.id.clone()),
        ..AgentOptions::default()
    };
    let journal = Arc::new(Journal {
        core: Arc::clone(core),
        id: row.id.clone(),
        reply_to,
        control: control.clone(),
    });
    let mut agent = Agent::new(
        Arc::clone(&model.client),
        Arc::clone(&core.gateway),
        options,
    )
    .with_checkpoint(journal.clone());
    if let Some(selector) = &model.selector {
        agent = agent.with_selector(Arc::clone(selector));
    }
    let result = agent.run(&mut history, &control.cancel, &*journal).await;
    keeper.abort();
    if let Some(running) = core
        .running
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_mut(&row.id)
    {
        running.turn = None;
    }
    if control.abandoned(core) {
        return Next::Done;
    }
    match result {
        Ok(outcome) => {
            let stop = stop_word(&outcome.stop);
            finish(core, row, reply_to, Ok((outcome.text, stop))).await;
            Next::Again
        }
        Err(AgentError::Checkpoint(e)) => {
            // The store failed under the turn: leave it pending for the sweeper.
            tracing::warn!(conversation = %row.id, error = %e, "conversations: the turn could not be journaled; it continues later");
            Next::Done
        }
        Err(AgentError::Cancelled) => {
            finish(core, row, reply_to, Err("Stopped.".to_owned())).await;
            Next::Again
        }
        Err(e) => {
            finish(core, row, reply_to, Err(format!("The turn failed: {e}"))).await;
            Next::Again
        }
    }
}

fn stop_word(stop: &StopReason) -> String {
    serde_json::to_value(stop)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{stop:?}").to_lowercase())
}

/// Journals the turn's answer (or why there is none) and audits it.
async fn finish(
    core: &Arc<Core>,
    row: &ConversationRow,
    reply_to: u64,
    result: Result<(String, String), String>,
) {
    let (event, text) = match result {
        Ok((text, stop)) => (
            Event::Answer {
                reply_to,
                text: text.clone(),
                stop,
            },
            text,
        ),
        Err(message) => (
            Event::Failed {
                reply_to,
                message: message.clone(),
            },
            message,
        ),
    };
    if append(core, &row.id, &event).await.is_ok() {
        audit(core, row, None, "out", &text, None).await;
    }
}

/// Appends `event` as this process's runner; refused once the lease is lost.
async fn append(core: &Core, id: &str, event: &Event) -> Result<u64, String> {
    let body = event.to_json();
    let seq = core
        .store
        .append(
            id,
            Append {
                kind: event.kind(),
                body: &body,
                runner: Some(&core.runner),
                marks_pending: false,
                title: None,
            },
        )
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "this process no longer holds the conversation".to_owned())?;
    core.live.send(id, Live::Journal { seq });
    Ok(seq)
}

/// Renews the lease every third of it while the turn runs; stops the turn when it cannot,
/// when the process stops, or when `/stop` was journaled on another process.
async fn keep_lease(core: Arc<Core>, id: String, through: u64, control: TurnControl) {
    let every = lease(&core) / 3;
    let mut seen = through;
    loop {
        tokio::select! {
            () = core.stop.cancelled() => {
                control.cancel.cancel();
                return;
            }
            () = tokio::time::sleep(every) => {}
        }
        match core.store.claim(&id, &core.runner, lease(&core)).await {
            Ok(true) => {}
            Ok(false) | Err(_) => {
                control.lease_lost.cancel();
                control.cancel.cancel();
                return;
            }
        }
        if let Ok(events) = core.store.events(&id, seen, JOURNAL_PAGE).await {
            seen = events.last().map_or(seen, |e| e.seq);
            if events.iter().any(|e| e.kind == "stop") {
                control.cancel.cancel();
            }
        }
    }
}

/// The turn's [`Checkpoint`] (the journal) and [`Observer`] (the live channel).
struct Journal {
    core: Arc<Core>,
    id: String,
    reply_to: u64,
    control: TurnControl,
}

#[async_trait]
impl Checkpoint for Journal {
    async fn model_turn(&self, turn: &AssistantTurn, _stop: &StopReason) -> Result<(), String> {
        if self.control.abandoned(&self.core) {
            return Err("the turn was left for whoever continues it".into());
        }
        append(
            &self.core,
            &self.id,
            &Event::Assistant {
                reply_to: self.reply_to,
                turn: turn.clone(),
            },
        )
        .await
        .map(drop)
    }

    async fn tool_results(&self, results: &[ToolResult]) -> Result<(), String> {
        // Calls cut short by a shutdown or a lost lease are not answered `cancelled`: whoever
        // continues the turn makes them again (and a write replays its recorded outcome).
        if self.control.abandoned(&self.core) {
            return Err("the turn was left for whoever continues it".into());
        }
        append(
            &self.core,
            &self.id,
            &Event::Results {
                reply_to: self.reply_to,
                results: results.to_vec(),
            },
        )
        .await
        .map(drop)
    }
}

impl Observer for Journal {
    fn event(&self, event: AgentEvent) {
        let live = &self.core.live;
        match event {
            AgentEvent::Stream(StreamEvent::TextDelta(text)) => live.send(
                &self.id,
                Live::Delta {
                    reply_to: self.reply_to,
                    text,
                },
            ),
            AgentEvent::ToolStarted(call) => live.send(
                &self.id,
                Live::Tool {
                    reply_to: self.reply_to,
                    call_id: call.id,
                    name: call.name,
                    ok: None,
                },
            ),
            AgentEvent::ToolFinished { call, envelope } => live.send(
                &self.id,
                Live::Tool {
                    reply_to: self.reply_to,
                    call_id: call.id,
                    name: call.name,
                    ok: Some(envelope.ok),
                },
            ),
            AgentEvent::AwaitingApproval {
                call,
                approval_id,
                requires_confirmation,
            } => {
                let event = Event::Approval {
                    reply_to: self.reply_to,
                    call_id: call.id,
                    tool: call.name,
                    approval_id,
                    requires_confirmation,
                };
                let (core, id) = (Arc::clone(&self.core), self.id.clone());
                tokio::spawn(async move {
                    if let Err(e) = append(&core, &id, &event).await {
                        tracing::warn!(conversation = %id, error = %e, "conversations: cannot journal an approval card");
                    }
                });
            }
            AgentEvent::Stream(_) | AgentEvent::ModelTurn { .. } => {}
        }
    }
}
