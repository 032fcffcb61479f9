//! Multi-round-trip requests (SEP-2322) for stateless 2026-07-28 clients: a running call's
//! questions to its client — a federated server's `sampling/createMessage`,
//! `elicitation/create` or `roots/list` mid-call, which such a client cannot be sent — are
//! answered with an `InputRequiredResult`, and the client's retry carries the answers.
//!
//! The call itself keeps running in the background between rounds (one call, one audit
//! record): its questions wait in a [`Rounds`] table under a random handle, and the
//! `requestState` the client echoes is only that handle. Nothing the client sends is
//! trusted as state: a modified or unknown handle matches no waiting call and is refused
//! with `-32602`, a handle is bound to the principal and tool that started it, and a call
//! nobody resumes within [`ROUND_TTL`] is cancelled (its questions fail, the server's call
//! ends, the audit says how).
//!
//! Questions asked together (a server asking for a form, a completion and the roots at
//! once) are gathered into one `InputRequiredResult` for [`GATHER`]; a retry that leaves
//! some unanswered gets those asked again under a new handle.
//!
//! A question keeps the name its asker gave it (a federated 2026-07-28 server's
//! `inputRequests` key), so the client answers the upstream's `user_name` as `user_name`;
//! unnamed ones (a 2025-11-25 server's mid-call requests) are named `elicitation_1`, ….
//! A first request may already carry `inputResponses` (the ephemeral form of SEP-2322,
//! where a client answers what it knows the tool will ask): a named question whose answer
//! is there is answered with it at once, and the rest is ignored.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, InputRequiredResult, InputResponses};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallerChannel, CallerError, CallerQuestion, CallerRequest};

/// How long a call waits for its client's next round.
pub const ROUND_TTL: Duration = Duration::from_secs(600);
/// How long questions are gathered into one round after the first.
pub const GATHER: Duration = Duration::from_millis(50);

/// A question of the running call, waiting for the client's answer.
pub struct Question {
    asked: CallerQuestion,
    answer: oneshot::Sender<Result<Value, CallerError>>,
}

/// Who a round belongs to: only they may resume it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub principal: toolgate_protocol::Principal,
    /// The tool (or prompt) the request names.
    pub name: String,
}

/// A call running in the background: its questions and its end.
pub struct Running<T> {
    questions: mpsc::UnboundedReceiver<Question>,
    done: JoinHandle<T>,
    cancel: CancellationToken,
    asked: u32,
    /// Shared with the call's [`Deferred`]: set while the call waits for the next round.
    parked: Arc<AtomicBool>,
}

impl<T> Drop for Running<T> {
    fn drop(&mut self) {
        // Nobody will answer any more: the call ends (its questions fail).
        self.cancel.cancel();
    }
}

/// What a round ends with.
pub enum Step<T> {
    Done(T),
    Input(InputRequiredResult),
}

struct Parked<T> {
    owner: Owner,
    asked: Vec<(String, Question)>,
    running: Running<T>,
    since: Instant,
}

/// The calls waiting for their client's next round.
pub struct Rounds<T> {
    parked: Mutex<HashMap<String, Parked<T>>>,
}

impl<T> Default for Rounds<T> {
    fn default() -> Self {
        Rounds {
            parked: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> std::fmt::Debug for Rounds<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds").finish_non_exhaustive()
    }
}

/// The channel a call started by [`start`] asks its client through.
pub struct Deferred {
    capabilities: ClientCapabilities,
    questions: mpsc::UnboundedSender<Question>,
    parked: Arc<AtomicBool>,
    /// Answers the first request carried, by key, each used at most once.
    preset: Mutex<InputResponses>,
}

#[async_trait]
impl CallerChannel for Deferred {
    fn answers(&self, request: CallerRequest) -> bool {
        let caps = &self.capabilities;
        match request {
            CallerRequest::Sampling => caps.sampling.is_some(),
            CallerRequest::Elicitation => caps.elicitation.is_some(),
            CallerRequest::Roots => caps.roots.is_some(),
        }
    }

    /// A stateless request has no stream to carry log messages after it is answered.
    async fn log(&self, _params: Value) {}

    fn is_parked(&self) -> bool {
        self.parked.load(Ordering::Acquire)
    }

    async fn ask(&self, asked: CallerQuestion) -> Result<Value, CallerError> {
        if !self.answers(asked.request) {
            return Err(missing_capability(asked.request));
        }
        if let Some(answer) = self.preset_answer(&asked) {
            return Ok(answer);
        }
        let (answer, answered) = oneshot::channel();
        let question = Question { asked, answer };
        let gone = || CallerError {
            code: rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            message: "the client did not answer: its round expired or the call was abandoned"
                .to_owned(),
            data: None,
        };
        self.questions.send(question).map_err(|_| gone())?;
        answered.await.map_err(|_| gone())?
    }
}

/// SEP-2575's `-32021`: the request needs a capability its client did not declare;
/// `data.requiredCapabilities` is a `ClientCapabilities` object naming it.
pub fn missing_capability(request: CallerRequest) -> CallerError {
    let name = match request {
        CallerRequest::Sampling => "sampling",
        CallerRequest::Elicitation => "elicitation",
        CallerRequest::Roots => "roots",
    };
    CallerError {
        code: rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0,
        message: format!(
            "the request needs {}, and the client did not declare the `{name}` capability",
            request.method()
        ),
        data: Some(json!({"requiredCapabilities": {name: {}}})),
    }
}

impl Deferred {
    /// The answer the first request carried for this named question, taken (once); an
    /// answer that is not an object is no answer, and the question is asked.
    fn preset_answer(&self, asked: &CallerQuestion) -> Option<Value> {
        let key = asked.key.as_ref()?;
        let mut preset = self.preset.lock().unwrap_or_else(PoisonError::into_inner);
        preset.remove(key).filter(Value::is_object)
    }
}

/// Starts `call` in the background with a [`Deferred`] channel for a client that declared
/// `capabilities` and sent `preset` answers with its first request; `call` receives the
/// channel and the token that cancels it.
pub fn start<T, F>(
    capabilities: ClientCapabilities,
    preset: InputResponses,
    call: impl FnOnce(Deferred, CancellationToken) -> F,
) -> Running<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let (questions, received) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let parked = Arc::new(AtomicBool::new(false));
    let channel = Deferred {
        capabilities,
        questions,
        parked: Arc::clone(&parked),
        preset: Mutex::new(preset),
    };
    let done = tokio::spawn(call(channel, cancel.clone()));
    Running {
        questions: received,
        done,
        cancel,
        asked: 0,
        parked,
    }
}

fn invalid(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

impl<T: Send + 'static> Rounds<T> {
    /// Drives a started call: its end, or its next round of questions.
    pub async fn first(&self, owner: Owner, running: Running<T>) -> Result<Step<T>, ErrorData> {
        self.drive(owner, Vec::new(), running).await
    }

    /// The client's next round: `state` must name a waiting call of `owner`; each answer
    /// goes to the question of its key, questions left unanswered are asked again.
    pub async fn resume(
        &self,
        state: &str,
        owner: &Owner,
        mut responses: InputResponses,
    ) -> Result<Step<T>, ErrorData> {
        if let Some((key, _)) = responses.iter().find(|(_, v)| !v.is_object()) {
            return Err(invalid(format!(
                "inputResponses.{key} must be an object (the client's result for that input request)"
            )));
        }
        self.expire();
        let parked = {
            let mut table = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
            match table.get(state) {
                Some(p) if p.owner == *owner => table.remove(state),
                _ => None,
            }
        };
        let Some(Parked { asked, running, .. }) = parked else {
            return Err(invalid(
                "requestState names no waiting request: it was altered, already used, or expired; call again without it",
            ));
        };
        running.parked.store(false, Ordering::Release);
        let mut left = Vec::new();
        for (key, question) in asked {
            match responses.remove(&key) {
                Some(answer) => {
                    let _ = question.answer.send(Ok(answer));
                }
                None => left.push((key, question)),
            }
        }
        self.drive(owner.clone(), left, running).await
    }

    async fn drive(
        &self,
        owner: Owner,
        mut asked: Vec<(String, Question)>,
        mut running: Running<T>,
    ) -> Result<Step<T>, ErrorData> {
        if asked.is_empty() {
            tokio::select! {
                done = &mut running.done => return finished(done),
                Some(q) = running.questions.recv() => {
                    let key = key_for(&mut running, &asked, &q);
                    asked.push((key, q));
                }
            }
        }
        loop {
            tokio::select! {
                biased;
                done = &mut running.done => return finished(done),
                Some(q) = running.questions.recv() => {
                    let key = key_for(&mut running, &asked, &q);
                    asked.push((key, q));
                }
                () = tokio::time::sleep(GATHER) => break,
            }
        }
        let requests: serde_json::Map<String, Value> = asked
            .iter()
            .map(|(key, q)| {
                (
                    key.clone(),
                    json!({"method": q.asked.request.method(), "params": q.asked.params}),
                )
            })
            .collect();
        let state = format!("rs_{}", uuid::Uuid::new_v4().simple());
        let result: InputRequiredResult = serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state,
        }))
        .map_err(|e| ErrorData::internal_error(format!("an input request: {e}"), None))?;
        self.expire();
        running.parked.store(true, Ordering::Release);
        self.parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                state,
                Parked {
                    owner,
                    asked,
                    running,
                    since: Instant::now(),
                },
            );
        Ok(Step::Input(result))
    }

    /// Drops rounds nobody resumed in time (their calls are cancelled).
    fn expire(&self) {
        self.parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, p| p.since.elapsed() < ROUND_TTL);
    }

    /// How many calls wait for a round.
    pub fn waiting(&self) -> usize {
        self.parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The key of `question` in its round: the asker's name when it has one no other question
/// of the round holds, else `{kind}_{n}` (counted over the whole call).
fn key_for<T>(
    running: &mut Running<T>,
    round: &[(String, Question)],
    question: &Question,
) -> String {
    running.asked += 1;
    let taken = |key: &str| round.iter().any(|(k, _)| k == key);
    if let Some(key) = question.asked.key.as_deref()
        && !taken(key)
    {
        return key.to_owned();
    }
    let kind = match question.asked.request {
        CallerRequest::Sampling => "sampling",
        CallerRequest::Elicitation => "elicitation",
        CallerRequest::Roots => "roots",
    };
    let mut key = format!("{kind}_{}", running.asked);
    while taken(&key) {
        running.asked += 1;
        key = format!("{kind}_{}", running.asked);
    }
    key
}

fn finished<T>(done: Result<T, tokio::task::JoinError>) -> Result<Step<T>, ErrorData> {
    done.map(Step::Done)
        .map_err(|e| ErrorData::internal_error(format!("the call failed: {e}"), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(principal: &str) -> Owner {
        Owner {
            principal: principal.into(),
            name: "tool".to_owned(),
        }
    }

    fn caps() -> ClientCapabilities {
        serde_json::from_value(json!({"sampling": {}, "elicitation": {}, "roots": {}}))
            .expect("capabilities")
    }

    fn q(request: CallerRequest, params: Value) -> CallerQuestion {
        CallerQuestion::new(request, params)
    }

    fn form(message: &str) -> Value {
        json!({"mode": "form", "message": message,
            "requestedSchema": {"type": "object", "properties": {}}})
    }

    fn completion() -> Value {
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10})
    }

    /// A call that asks for a name, then (in a second round) for a colour, and returns both.
    fn two_questions() -> Running<String> {
        start(
            caps(),
            InputResponses::new(),
            |channel, _cancel| async move {
                let name = channel
                    .ask(q(CallerRequest::Elicitation, form("name?")))
                    .await;
                let colour = channel
                    .ask(q(CallerRequest::Elicitation, form("colour?")))
                    .await;
                format!("{name:?} {colour:?}")
            },
        )
    }

    fn input(step: Step<String>) -> InputRequiredResult {
        match step {
            Step::Input(input) => input,
            Step::Done(out) => panic!("expected a round, got the end: {out}"),
        }
    }

    fn keys(input: &InputRequiredResult) -> Vec<String> {
        input
            .input_requests
            .as_ref()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn answer(key: &str, value: Value) -> InputResponses {
        InputResponses::from([(key.to_owned(), value)])
    }

    #[tokio::test]
    async fn rounds_resume_the_same_call_and_only_its_owner_with_the_exact_state_can() {
        let rounds = Rounds::default();
        let first = input(rounds.first(owner("alice"), two_questions()).await.unwrap());
        assert_eq!(keys(&first), ["elicitation_1"]);
        let state = first.request_state.clone().expect("a request state");

        // Altered, someone else's, or not an object: refused, and the round still waits.
        let altered = format!("{state}-TAMPERED");
        let ok = json!({"action": "accept", "content": {"name": "Ada"}});
        for (state, who, responses) in [
            (
                altered.as_str(),
                "alice",
                answer("elicitation_1", ok.clone()),
            ),
            (
                state.as_str(),
                "mallory",
                answer("elicitation_1", ok.clone()),
            ),
            (
                state.as_str(),
                "alice",
                answer("elicitation_1", json!(12345)),
            ),
        ] {
            let refused = rounds.resume(state, &owner(who), responses).await;
            assert_eq!(
                refused.err().map(|e| e.code),
                Some(rmcp::model::ErrorCode::INVALID_PARAMS)
            );
        }
        assert_eq!(rounds.waiting(), 1);

        // A retry that answers nothing is asked again, under a new state.
        let again = input(
            rounds
                .resume(&state, &owner("alice"), InputResponses::new())
                .await
                .unwrap(),
        );
        assert_eq!(keys(&again), ["elicitation_1"]);
        let state2 = again.request_state.clone().unwrap();
        assert_ne!(state2, state);
        assert!(
            rounds
                .resume(&state, &owner("alice"), InputResponses::new())
                .await
                .is_err(),
            "a used state is spent"
        );

        let second = input(
            rounds
                .resume(&state2, &owner("alice"), answer("elicitation_1", ok))
                .await
                .unwrap(),
        );
        assert_eq!(keys(&second), ["elicitation_2"]);
        let colour = json!({"action": "accept", "content": {"color": "blue"}});
        let state3 = second.request_state.unwrap();
        match rounds
            .resume(&state3, &owner("alice"), answer("elicitation_2", colour))
            .await
            .unwrap()
        {
            Step::Done(out) => assert!(out.contains("Ada") && out.contains("blue"), "{out}"),
            Step::Input(_) => panic!("the call should have ended"),
        }
        assert_eq!(rounds.waiting(), 0);
    }

    #[tokio::test]
    async fn questions_asked_together_come_in_one_round_and_a_call_without_any_just_ends() {
        let rounds = Rounds::default();
        let together = start(caps(), InputResponses::new(), |channel, _| async move {
            let (a, b, c) = tokio::join!(
                channel.ask(q(CallerRequest::Elicitation, form("name?"))),
                channel.ask(q(CallerRequest::Sampling, completion())),
                channel.ask(q(CallerRequest::Roots, json!({}))),
            );
            format!("{a:?}{b:?}{c:?}")
        });
        let round = input(rounds.first(owner("a"), together).await.unwrap());
        assert_eq!(keys(&round), ["elicitation_1", "roots_3", "sampling_2"]);
        let methods: Vec<String> = round
            .input_requests
            .unwrap()
            .values()
            .map(|r| serde_json::to_value(r).unwrap()["method"].to_string())
            .collect();
        assert_eq!(
            methods,
            [
                "\"elicitation/create\"",
                "\"roots/list\"",
                "\"sampling/createMessage\""
            ]
        );

        let quiet = start(caps(), InputResponses::new(), |_, _| async {
            "done".to_owned()
        });
        match rounds.first(owner("a"), quiet).await.unwrap() {
            Step::Done(out) => assert_eq!(out, "done"),
            Step::Input(_) => panic!("nothing was asked"),
        }
    }

    #[tokio::test]
    async fn a_dropped_round_cancels_its_call_and_fails_its_questions() {
        let (tx, rx) = oneshot::channel();
        let running = start(
            caps(),
            InputResponses::new(),
            |channel, cancel| async move {
                let answer = channel.ask(q(CallerRequest::Sampling, completion())).await;
                let _ = tx.send((answer.is_err(), cancel.is_cancelled()));
                String::new()
            },
        );
        let rounds = Rounds::default();
        let _ = input(rounds.first(owner("a"), running).await.unwrap());
        rounds.parked.lock().unwrap().clear();
        let (failed, cancelled) = rx.await.unwrap();
        assert!(failed && cancelled);
    }

    #[tokio::test]
    async fn a_named_question_keeps_its_name_and_two_of_one_name_do_not_collide() {
        let rounds = Rounds::default();
        let named = start(caps(), InputResponses::new(), |channel, _| async move {
            let (a, b, c) = tokio::join!(
                channel.ask(q(CallerRequest::Elicitation, form("name?")).named("user_name")),
                channel.ask(q(CallerRequest::Elicitation, form("again?")).named("user_name")),
                channel.ask(q(CallerRequest::Sampling, completion()).named("capital_question")),
            );
            format!("{a:?}{b:?}{c:?}")
        });
        let round = input(rounds.first(owner("a"), named).await.unwrap());
        let keys = keys(&round);
        assert_eq!(keys.len(), 3, "{keys:?}");
        assert!(keys.contains(&"user_name".to_owned()), "{keys:?}");
        assert!(keys.contains(&"capital_question".to_owned()), "{keys:?}");
        assert!(
            keys.iter().any(|k| k.starts_with("elicitation_")),
            "the second `user_name` gets a name of its own: {keys:?}"
        );
    }

    #[tokio::test]
    async fn answers_sent_with_the_first_request_answer_named_questions_once_and_nothing_else() {
        let rounds = Rounds::default();
        let preset = InputResponses::from([
            (
                "user_name".to_owned(),
                json!({"action": "accept", "content": {"name": "Alice"}}),
            ),
            ("unknown_extra_key".to_owned(), json!({"action": "accept"})),
            ("not_an_object".to_owned(), json!(12345)),
        ]);
        let running = start(caps(), preset, |channel, _| async move {
            let first = channel
                .ask(q(CallerRequest::Elicitation, form("name?")).named("user_name"))
                .await;
            match first {
                Ok(v) => v["content"]["name"].as_str().unwrap_or("?").to_owned(),
                Err(e) => e.to_string(),
            }
        });
        match rounds.first(owner("a"), running).await.unwrap() {
            Step::Done(name) => assert_eq!(name, "Alice"),
            Step::Input(_) => panic!("the preset answer should have been used"),
        }

        // Used once: the same name asked again is a round; an answer that is not an object
        // answers nothing; an unnamed question is never answered from the preset.
        let preset = InputResponses::from([
            ("user_name".to_owned(), json!({"action": "accept"})),
            ("bad".to_owned(), json!(12345)),
        ]);
        let running = start(caps(), preset, |channel, _| async move {
            let _ = channel
                .ask(q(CallerRequest::Elicitation, form("a")).named("user_name"))
                .await;
            let (b, c) = tokio::join!(
                channel.ask(q(CallerRequest::Elicitation, form("b")).named("user_name")),
                channel.ask(q(CallerRequest::Elicitation, form("c")).named("bad")),
            );
            format!("{b:?}{c:?}")
        });
        let round = input(rounds.first(owner("a"), running).await.unwrap());
        assert_eq!(keys(&round), ["bad", "user_name"]);
    }
}
