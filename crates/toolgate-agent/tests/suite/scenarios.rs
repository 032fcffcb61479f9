//! Scripted conversations against the fake server, for every provider, streaming and not:
//! parallel calls, bad arguments, an unknown tool, a failing tool, an offloaded result, a
//! 429 and a 500, a refusal, a max-tokens stop, the step limit, cancellation, errors.

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_agent::fake::{FakeTurn, Reply};
use toolgate_agent::{
    AgentError, AgentEvent, Message, ModelError, Observer, Provider, Silent, StopReason,
    StreamEvent, ToolChoice,
};

use super::fixture::{Harness, KEY, PROVIDERS, Recorder, agent, client, server};

/// The calls of the busy turn: two good ones, arguments that are not JSON, an unknown tool,
/// a failing tool, a result over the budget, a schema violation.
pub fn busy_turn() -> FakeTurn {
    FakeTurn::calls(&[
        ("call_a", "echo", r#"{"text":"alpha"}"#),
        ("call_b", "echo", r#"{"text":"beta"}"#),
        ("call_c", "echo", r#"{"text": "unterminated"#),
        ("call_d", "delete_everything", "{}"),
        ("call_e", "fail", "{}"),
        ("call_f", "big", "{}"),
        ("call_g", "echo", r#"{"text": 5}"#),
    ])
}

pub fn busy_script() -> Vec<Reply> {
    vec![
        Reply::Turn(busy_turn()),
        Reply::Status {
            status: 429,
            retry_after: Some("0".into()),
            message: "slow down".into(),
        },
        Reply::Status {
            status: 500,
            retry_after: None,
            message: "upstream hiccup".into(),
        },
        Reply::Turn(FakeTurn::text("All done.")),
    ]
}

fn code(result_content: &str) -> String {
    let v: Value = serde_json::from_str(result_content).unwrap();
    if v["ok"] == Value::Bool(true) {
        if v["truncated"]["result_id"].is_string() {
            "ok+offloaded".into()
        } else {
            "ok".into()
        }
    } else {
        v["error"]["code"].as_str().unwrap().to_owned()
    }
}

#[tokio::test]
async fn a_busy_turn_runs_every_call_and_the_model_reads_each_outcome() {
    for provider in PROVIDERS {
        for stream in [true, false] {
            let h = Harness::new();
            let server = server(busy_script()).await;
            let agent = agent(&h, client(provider, &server), stream);
            let mut history = vec![Message::user("Do the things.")];
            let rec = Recorder::default();
            let out = agent
                .run(&mut history, &CancellationToken::new(), &rec)
                .await
                .unwrap_or_else(|e| panic!("{provider:?} stream={stream}: {e}"));
            let ctx = format!("{provider:?} stream={stream}");
            assert_eq!(
                (out.text.as_str(), &out.stop, out.steps),
                ("All done.", &StopReason::EndTurn, 2),
                "{ctx}"
            );
            // The turn, its results in the calls' order, the answer.
            assert_eq!(history.len(), 4, "{ctx}");
            let Message::ToolResults { results } = &history[2] else {
                panic!("{ctx}: no results after the turn: {history:?}");
            };
            let got: Vec<(&str, String, bool)> = results
                .iter()
                .map(|r| (r.call_id.as_str(), code(&r.content), r.is_error))
                .collect();
            assert_eq!(
                got,
                vec![
                    ("call_a", "ok".into(), false),
                    ("call_b", "ok".into(), false),
                    ("call_c", "invalid_arguments".into(), true),
                    ("call_d", "unknown_tool".into(), true),
                    ("call_e", "execution_failed".into(), true),
                    ("call_f", "ok+offloaded".into(), false),
                    ("call_g", "invalid_arguments".into(), true),
                ],
                "{ctx}"
            );
            // The error of the failing tool reaches the model whole.
            assert!(results[4].content.contains("the disk is on fire"), "{ctx}");
            // The offloaded result: its head and a reference, not the whole.
            assert!(results[5].content.len() < 2_000, "{ctx}");

            // turn 1, then the same follow-up three times (429, 500, ok).
            let reqs = server.requests();
            assert_eq!(reqs.len(), 4, "{ctx}");
            assert_eq!(reqs[1].body, reqs[2].body, "{ctx}");
            assert_eq!(reqs[2].body, reqs[3].body, "{ctx}");
            let first = reqs[0].tool_names();
            let second = reqs[1].tool_names();
            assert_eq!(first, vec!["big", "echo", "fail", "slow"], "{ctx}");
            assert_eq!(
                second,
                vec!["big", "echo", "fail", "read_result", "slow"],
                "{ctx}: read_result is offered once something was offloaded"
            );
            // The key travels in the provider's header.
            let auth = match provider {
                Provider::Anthropic => reqs[0].headers.get("x-api-key").cloned(),
                _ => reqs[0].headers.get("authorization").cloned(),
            };
            let want = match provider {
                Provider::Anthropic => KEY.to_owned(),
                _ => format!("Bearer {KEY}"),
            };
            assert_eq!(auth, Some(want), "{ctx}");

            // Every attempt is audited under the conversation's session.
            let audit = h.audit().await;
            let sessions: Vec<&str> = audit
                .iter()
                .filter(|r| r.get("outcome").is_some())
                .map(|r| r["session"].as_str().unwrap())
                .collect();
            assert_eq!(sessions, vec!["s1"; 7], "{ctx}: {audit:?}");

            // The events: each call started and finished; streaming also showed deltas.
            let events = rec.0.lock().unwrap();
            let started = events
                .iter()
                .filter(|e| matches!(e, AgentEvent::ToolStarted(_)))
                .count();
            let finished = events
                .iter()
                .filter(|e| matches!(e, AgentEvent::ToolFinished { .. }))
                .count();
            assert_eq!((started, finished), (7, 7), "{ctx}");
            let text: String = events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::Stream(StreamEvent::TextDelta(t)) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(text, if stream { "All done." } else { "" }, "{ctx}");
            if stream {
                let args: String = events
                    .iter()
                    .filter_map(|e| match e {
                        AgentEvent::Stream(StreamEvent::ToolArgumentsDelta { id, delta })
                            if id == "call_a" =>
                        {
                            Some(delta.as_str())
                        }
                        _ => None,
                    })
                    .collect();
                assert_eq!(args, r#"{"text":"alpha"}"#, "{ctx}");
            }
        }
    }
}

#[tokio::test]
async fn refusals_and_max_tokens_stops_are_reported() {
    for provider in PROVIDERS {
        for stream in [true, false] {
            let ctx = format!("{provider:?} stream={stream}");
            let h = Harness::new();
            let server = server(vec![
                Reply::Turn(FakeTurn::refusal("I can't help with that.")),
                Reply::Turn(FakeTurn::max_tokens("The answer is")),
            ])
            .await;
            let agent = agent(&h, client(provider, &server), stream);
            let mut history = vec![Message::user("Something bad.")];
            let out = agent
                .run(&mut history, &CancellationToken::new(), &Silent)
                .await
                .unwrap();
            assert_eq!(out.stop, StopReason::Refusal, "{ctx}");
            history.push(Message::user("Go on."));
            let out = agent
                .run(&mut history, &CancellationToken::new(), &Silent)
                .await
                .unwrap();
            assert_eq!(
                (out.stop, out.text.as_str()),
                (StopReason::MaxTokens, "The answer is"),
                "{ctx}"
            );
        }
    }
}

#[tokio::test]
async fn the_step_limit_ends_the_run_with_a_clear_error() {
    for provider in PROVIDERS {
        let h = Harness::new();
        let turn = || {
            Reply::Turn(FakeTurn::calls(&[(
                "call_x",
                "echo",
                r#"{"text":"again"}"#,
            )]))
        };
        let server = server(vec![turn(), turn(), turn(), turn(), turn(), turn()]).await;
        let agent = agent(&h, client(provider, &server), true);
        let mut history = vec![Message::user("Loop forever.")];
        let err = agent
            .run(&mut history, &CancellationToken::new(), &Silent)
            .await
            .unwrap_err();
        assert!(matches!(err, AgentError::StepLimit { steps: 5 }), "{err}");
        assert!(err.to_string().contains("max_steps"), "{err}");
        // Well-formed to the end: the last turn's call has its result.
        assert!(matches!(history.last(), Some(Message::ToolResults { .. })));
    }
}

/// Cancels the run as soon as `slow` starts.
struct CancelOnSlow(CancellationToken);

impl Observer for CancelOnSlow {
    fn event(&self, event: AgentEvent) {
        if let AgentEvent::ToolStarted(c) = event
            && c.name == "slow"
        {
            self.0.cancel();
        }
    }
}

#[tokio::test]
async fn cancelling_stops_running_calls_and_keeps_the_history_well_formed() {
    let h = Harness::new();
    let server = server(vec![Reply::Turn(FakeTurn::calls(&[
        ("call_1", "slow", "{}"),
        ("call_2", "echo", r#"{"text":"quick"}"#),
    ]))])
    .await;
    let agent = agent(&h, client(Provider::OpenAiChat, &server), true);
    let mut history = vec![Message::user("Take your time.")];
    let cancel = CancellationToken::new();
    let err = agent
        .run(&mut history, &cancel, &CancelOnSlow(cancel.clone()))
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Cancelled), "{err}");
    let Some(Message::ToolResults { results }) = history.last() else {
        panic!("{history:?}");
    };
    let codes: Vec<String> = results.iter().map(|r| code(&r.content)).collect();
    assert_eq!(codes[0], "cancelled");
    assert_eq!(results.len(), 2);
}

#[tokio::test]
async fn a_forced_tool_choice_applies_to_the_first_step_only() {
    for provider in PROVIDERS {
        let h = Harness::new();
        let server = server(vec![
            Reply::Turn(FakeTurn::calls(&[("call_1", "echo", r#"{"text":"x"}"#)])),
            Reply::Turn(FakeTurn::text("ok")),
        ])
        .await;
        let mut agent = agent(&h, client(provider, &server), false);
        agent.options_mut().tool_choice = ToolChoice::Tool("echo".into());
        let mut history = vec![Message::user("Use echo.")];
        agent
            .run(&mut history, &CancellationToken::new(), &Silent)
            .await
            .unwrap();
        let reqs = server.requests();
        let (first, second) = (&reqs[0].body["tool_choice"], &reqs[1].body["tool_choice"]);
        let (want_first, want_second) = match provider {
            Provider::OpenAiChat => (
                serde_json::json!({"type": "function", "function": {"name": "echo"}}),
                serde_json::json!("auto"),
            ),
            Provider::OpenAiResponses => (
                serde_json::json!({"type": "function", "name": "echo"}),
                serde_json::json!("auto"),
            ),
            Provider::Anthropic => (
                serde_json::json!({"type": "tool", "name": "echo"}),
                serde_json::json!({"type": "auto"}),
            ),
        };
        assert_eq!((first, second), (&want_first, &want_second), "{provider:?}");
    }
}

#[tokio::test]
async fn server_errors_say_what_happened() {
    let h = Harness::new();
    let server = server(vec![Reply::Status {
        status: 401,
        retry_after: None,
        message: "Incorrect API key provided: sk-live-0123456789abcdefghijklmn".into(),
    }])
    .await;
    let agent = agent(&h, client(Provider::OpenAiChat, &server), true);
    let mut history = vec![Message::user("hi")];
    let err = agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("401")
            && msg.contains("Incorrect API key provided")
            && msg.contains("api_key_env"),
        "{msg}"
    );
    assert!(!msg.contains("0123456789abcdefghijklmn"), "{msg}");
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");
    // History untouched by a failed model call.
    assert_eq!(history.len(), 1);

    // 500 after every retry: gives up, saying how often it tried.
    let five = || Reply::Status {
        status: 503,
        retry_after: None,
        message: "overloaded".into(),
    };
    let server = super::fixture::server(vec![five(), five(), five(), five(), five()]).await;
    let agent = super::fixture::agent(&h, client(Provider::Anthropic, &server), false);
    let err = agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Model(ModelError::RetriesExhausted {
                status: 503,
                attempts: 4,
                ..
            })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("overloaded"), "{err}");
}

#[tokio::test]
async fn a_model_server_outside_the_egress_policy_is_refused() {
    let server = server(vec![]).await;
    let cfg = super::fixture::model_config(Provider::OpenAiChat, &server);
    let err = toolgate_agent::connect_with_key(
        &cfg,
        &toolgate_net::EgressPolicy::default(),
        Some("k".into()),
    )
    .err()
    .unwrap();
    let msg = err.to_string();
    assert!(msg.contains("[egress]"), "{msg}");
    assert_eq!(server.requests().len(), 0);
}

/// Issue 13, item 3: an unknown tool's "did you mean" comes from the names the caller's role
/// may see. The model of a role that sees only `echo` asks for `fai` (one edit from the
/// hidden `fail`) and `ech`: the first result names no tool, the second names `echo`.
#[tokio::test]
async fn an_unknown_tool_hint_never_names_a_tool_hidden_from_the_role() {
    for provider in PROVIDERS {
        let h = Harness::new();
        let server = server(vec![
            Reply::Turn(FakeTurn::calls(&[
                ("call_a", "fai", "{}"),
                ("call_b", "ech", "{}"),
            ])),
            Reply::Turn(FakeTurn::text("ok")),
        ])
        .await;
        let mut agent = agent(&h, client(provider, &server), false);
        agent.options_mut().role = "echoer".into();
        let mut history = vec![Message::user("Go.")];
        agent
            .run(&mut history, &CancellationToken::new(), &Silent)
            .await
            .unwrap_or_else(|e| panic!("{provider:?}: {e}"));
        let Message::ToolResults { results } = &history[2] else {
            panic!("{provider:?}: no results: {history:?}");
        };
        let hidden: Value = serde_json::from_str(&results[0].content).unwrap();
        assert_eq!(hidden["error"]["code"], "unknown_tool", "{provider:?}");
        assert!(
            !results[0].content.contains("`fail`"),
            "{provider:?}: a hidden tool is named: {}",
            results[0].content
        );
        let visible: Value = serde_json::from_str(&results[1].content).unwrap();
        assert_eq!(
            visible["error"]["hint"], "did you mean `echo`? `toolgate tools list` shows all tools",
            "{provider:?}"
        );
        // What the model was offered agrees: only `echo`.
        assert_eq!(
            server.requests()[0].tool_names(),
            vec!["echo"],
            "{provider:?}"
        );
    }
}

/// Keeps model turns; fails to keep results while `lose_results` is set (the process died
/// after the calls ran, before their results were kept).
#[derive(Default)]
struct Journal {
    turns: std::sync::Mutex<Vec<toolgate_agent::AssistantTurn>>,
    lose_results: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl toolgate_agent::Checkpoint for Journal {
    async fn model_turn(
        &self,
        turn: &toolgate_agent::AssistantTurn,
        _stop: &StopReason,
    ) -> Result<(), String> {
        self.turns.lock().unwrap().push(turn.clone());
        Ok(())
    }

    async fn tool_results(&self, _results: &[toolgate_agent::ToolResult]) -> Result<(), String> {
        if self.lose_results.load(std::sync::atomic::Ordering::SeqCst) {
            return Err("the store is gone".into());
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_turn_kept_before_its_calls_resumes_without_acting_twice() {
    use std::sync::atomic::Ordering;
    let h = Harness::new();
    h.gateway
        .catalog()
        .register_many(vec![super::fixture::bump_tool()])
        .unwrap();
    let server = server(vec![
        Reply::Turn(FakeTurn::calls(&[
            ("call_1", "bump", "{}"),
            ("call_2", "echo", r#"{"text":"x"}"#),
        ])),
        Reply::Turn(FakeTurn::text("Bumped once.")),
    ])
    .await;
    let journal = std::sync::Arc::new(Journal::default());
    journal.lose_results.store(true, Ordering::SeqCst);
    let mut options = agent(&h, client(Provider::OpenAiChat, &server), false)
        .options()
        .clone();
    options.call_keys = Some("conv_1".into());
    options.role = "writer".into();
    let make = |j: &std::sync::Arc<Journal>| {
        toolgate_agent::Agent::new(
            client(Provider::OpenAiChat, &server),
            std::sync::Arc::clone(&h.gateway),
            options.clone(),
        )
        .with_checkpoint(j.clone())
    };
    let before = super::fixture::BUMPS.load(Ordering::SeqCst);
    let mut history = vec![Message::user("Bump it.")];
    let err = make(&journal)
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Checkpoint(_)), "{err}");
    assert_eq!(super::fixture::BUMPS.load(Ordering::SeqCst), before + 1);
    assert_eq!(
        journal.turns.lock().unwrap().len(),
        1,
        "kept before the calls ran"
    );
    // The process restarts: the history is what was kept — the user's message and the turn.
    let kept = journal.turns.lock().unwrap()[0].clone();
    let mut resumed = vec![Message::user("Bump it."), Message::Assistant(kept)];
    journal.lose_results.store(false, Ordering::SeqCst);
    let out = make(&journal)
        .run(&mut resumed, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    assert_eq!(out.text, "Bumped once.");
    assert_eq!(
        super::fixture::BUMPS.load(Ordering::SeqCst),
        before + 1,
        "the write replayed its recorded outcome"
    );
    let Some(Message::ToolResults { results }) = resumed.get(2) else {
        panic!("{resumed:?}");
    };
    assert_eq!(code(&results[0].content), "ok");
    assert!(
        results[0].content.contains("\"bumped\""),
        "{}",
        results[0].content
    );
    assert_eq!(
        server.requests().len(),
        2,
        "the model was not asked the turn again"
    );
}
