//! The model's history, rebuilt from the journal: turns run one at a time in the order their
//! messages arrived, so the history is each answered message followed by its turn's model
//! turns and results — whatever else arrived meanwhile — and then the first message not yet
//! answered with whatever of its turn was kept before an interruption.

use std::collections::{BTreeMap, BTreeSet};

use toolgate_agent::{Message, ToolResult};

use crate::event::{Entry, Event};

/// Where a conversation stands.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    /// What the model sees for the next step.
    pub history: Vec<Message>,
    /// The message whose turn is to run (or continue), if any.
    pub current: Option<u64>,
    /// The role its sender held when they sent it.
    pub role: Option<String>,
    /// Messages waiting behind it.
    pub queued: usize,
}

/// Rebuilds the history from `entries` (the whole journal, in order).
pub fn replay(entries: &[Entry]) -> Replay {
    let mut users: BTreeMap<u64, (&str, Option<&String>)> = BTreeMap::new();
    let mut turns: BTreeMap<u64, Vec<Message>> = BTreeMap::new();
    let mut done: BTreeSet<u64> = BTreeSet::new();
    let mut replay = Replay::default();
    for e in entries {
        match &e.event {
            Event::Prelude { messages } => replay.history.extend(messages.iter().cloned()),
            Event::User { text, role, .. } => {
                users.insert(e.seq, (text, role.as_ref()));
            }
            Event::Assistant { reply_to, turn } => turns
                .entry(*reply_to)
                .or_default()
                .push(Message::Assistant(turn.clone())),
            Event::Results { reply_to, results } => {
                turns
                    .entry(*reply_to)
                    .or_default()
                    .push(Message::ToolResults {
                        results: results.clone(),
                    })
            }
            Event::Answer { reply_to, .. } | Event::Failed { reply_to, .. } => {
                done.insert(*reply_to);
            }
            Event::Approval { .. } | Event::Stop | Event::Notice { .. } => {}
        }
    }
    for (seq, (text, role)) in users {
        if replay.current.is_some() {
            replay.queued += 1;
            continue;
        }
        replay.history.push(Message::user(text));
        let mut turn = turns.remove(&seq).unwrap_or_default();
        if done.contains(&seq) {
            // A turn that ended without its calls answered (stopped, failed) still leaves a
            // history every API accepts: one result per call.
            if let Some(Message::Assistant(last)) = turn.last()
                && !last.tool_calls.is_empty()
            {
                let results = last
                    .tool_calls
                    .iter()
                    .map(|c| ToolResult {
                        call_id: c.id.clone(),
                        name: c.name.clone(),
                        content: r#"{"ok":false,"error":{"code":"cancelled","message":"the turn ended before this call ran"}}"#.to_owned(),
                        is_error: true,
                    })
                    .collect();
                turn.push(Message::ToolResults { results });
            }
            replay.history.extend(turn);
        } else {
            replay.history.extend(turn);
            replay.current = Some(seq);
            replay.role = role.cloned();
        }
    }
    replay
}

#[cfg(test)]
mod tests {
    use toolgate_agent::{AssistantTurn, ToolCall};

    use super::*;

    fn at(seq: u64, event: Event) -> Entry {
        Entry {
            seq,
            at_ms: 0,
            event,
        }
    }

    fn user(text: &str) -> Event {
        Event::User {
            text: text.into(),
            from: "u".into(),
            role: None,
        }
    }

    fn calling(reply_to: u64) -> Event {
        Event::Assistant {
            reply_to,
            turn: AssistantTurn {
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "echo".into(),
                    arguments: "{}".into(),
                }],
                ..AssistantTurn::default()
            },
        }
    }

    fn answer(reply_to: u64, text: &str) -> Event {
        Event::Answer {
            reply_to,
            text: text.into(),
            stop: "end_turn".into(),
        }
    }

    fn said(text: &str, reply_to: u64) -> Event {
        Event::Assistant {
            reply_to,
            turn: AssistantTurn {
                text: text.into(),
                ..AssistantTurn::default()
            },
        }
    }

    #[test]
    fn a_message_sent_during_a_turn_follows_that_turn() {
        let entries = vec![
            at(1, user("one")),
            at(2, calling(1)),
            at(3, user("two")),
            at(
                4,
                Event::Results {
                    reply_to: 1,
                    results: vec![],
                },
            ),
            at(5, said("first answer", 1)),
            at(6, answer(1, "first answer")),
            at(7, user("three")),
        ];
        let r = replay(&entries);
        assert_eq!(r.current, Some(3));
        assert_eq!(r.queued, 1, "three waits behind two");
        let kinds: Vec<&str> = r
            .history
            .iter()
            .map(|m| match m {
                Message::User { .. } => "user",
                Message::Assistant(_) => "assistant",
                Message::ToolResults { .. } => "results",
            })
            .collect();
        assert_eq!(
            kinds,
            ["user", "assistant", "results", "assistant", "user"],
            "{:?}",
            r.history
        );
        assert_eq!(r.history[4], Message::user("two"));
    }

    #[test]
    fn an_interrupted_turn_continues_from_its_kept_model_turn() {
        let r = replay(&[at(1, user("one")), at(2, calling(1))]);
        assert_eq!(r.current, Some(1));
        assert!(
            matches!(r.history.last(), Some(Message::Assistant(t)) if !t.tool_calls.is_empty())
        );
    }

    #[test]
    fn a_stopped_turn_leaves_a_well_formed_history() {
        let r = replay(&[
            at(1, user("one")),
            at(2, calling(1)),
            at(
                3,
                Event::Failed {
                    reply_to: 1,
                    message: "stopped".into(),
                },
            ),
        ]);
        assert_eq!(r.current, None);
        let Some(Message::ToolResults { results }) = r.history.last() else {
            panic!("{:?}", r.history);
        };
        assert_eq!(results[0].call_id, "call_1");
        assert!(results[0].is_error);
    }

    #[test]
    fn an_answered_conversation_has_nothing_to_run() {
        let r = replay(&[
            at(1, user("hi")),
            at(2, said("hello", 1)),
            at(3, answer(1, "hello")),
        ]);
        assert_eq!((r.current, r.queued, r.history.len()), (None, 0, 2));
    }
}
