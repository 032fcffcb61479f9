//! The loop asks its `ToolSelector` before every model call: the tools offered may change
//! between turns, and every provider's request stays well-formed when they do.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_agent::fake::{FakeTurn, Reply};
use toolgate_agent::{
    Message, Provider, Silent, StepView, ToolChoice, ToolSelector, visible_tools,
};
use toolgate_protocol::ToolSpec;

use super::fixture::{Harness, PROVIDERS, agent, client, server};

/// Offers `echo` at step 1 and `big` + `fail` afterwards; records what it was shown.
#[derive(Default)]
struct ByStep {
    seen: Mutex<Vec<(u32, String, usize)>>,
}

#[async_trait]
impl ToolSelector for ByStep {
    async fn select(&self, step: &StepView<'_>) -> Vec<ToolSpec> {
        self.seen.lock().unwrap().push((
            step.step,
            step.latest_user_text().to_owned(),
            step.history.len(),
        ));
        let wanted: &[&str] = if step.step == 1 {
            &["echo"]
        } else {
            &["big", "fail"]
        };
        visible_tools(step.gateway, step.role)
            .into_iter()
            .filter(|t| wanted.contains(&t.name.as_str()))
            .collect()
    }
}

fn names(body: &Value, provider: Provider) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match provider {
            Provider::OpenAiChat => t["function"]["name"].as_str().unwrap().to_owned(),
            _ => t["name"].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn the_tool_list_can_change_between_turns() {
    for provider in PROVIDERS {
        let h = Harness::new();
        let server = server(vec![
            Reply::Turn(FakeTurn::calls(&[("call_1", "echo", r#"{"text":"hi"}"#)])),
            Reply::Turn(FakeTurn::text("done")),
        ])
        .await;
        let selector = Arc::new(ByStep::default());
        let agent = agent(&h, client(provider, &server), false).with_selector(selector.clone());
        let mut history = vec![Message::user("say hi")];
        let out = agent
            .run(&mut history, &CancellationToken::new(), &Silent)
            .await
            .unwrap();
        assert_eq!(out.text, "done", "{provider:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(names(&requests[0].body, provider), ["echo"], "{provider:?}");
        // The second request offers other tools while its history holds the echo call
        // and its result, in the provider's own shape.
        assert_eq!(
            names(&requests[1].body, provider),
            ["big", "fail"],
            "{provider:?}"
        );
        let sent = requests[1].body.to_string();
        assert!(
            sent.contains("call_1") && sent.contains("echo"),
            "{provider:?}: {sent}"
        );
        assert_eq!(
            *selector.seen.lock().unwrap(),
            [(1, "say hi".to_owned(), 1), (2, "say hi".to_owned(), 3)],
            "{provider:?}"
        );
    }
}

#[tokio::test]
async fn a_forced_tool_is_offered_even_when_the_selector_left_it_out() {
    let h = Harness::new();
    let server = server(vec![
        Reply::Turn(FakeTurn::calls(&[("call_1", "fail", "{}")])),
        Reply::Turn(FakeTurn::text("done")),
    ])
    .await;
    let mut agent = agent(&h, client(Provider::OpenAiChat, &server), false)
        .with_selector(Arc::new(ByStep::default()));
    agent.options_mut().tool_choice = ToolChoice::Tool("fail".into());
    let mut history = vec![Message::user("fail please")];
    agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(
        names(&requests[0].body, Provider::OpenAiChat),
        ["echo", "fail"]
    );
    assert_eq!(requests[0].body["tool_choice"]["function"]["name"], "fail");
}
