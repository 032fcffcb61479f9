//! The exact request bodies toolgate sends, per provider: the first request of the busy
//! conversation and the follow-up that carries the results back (ids matched, item order,
//! roles). Ids the gateway makes up (`call_…`, `res_…`) are normalised. Regenerate with
//! `UPDATE_GOLDEN=1 cargo test -p toolgate-agent golden` and review the diff.

use std::path::PathBuf;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_agent::fake::{FakeTurn, Reply};
use toolgate_agent::{Message, Provider, Silent, connect_with_key};

use super::fixture::{Harness, agent, model_config, server};
use super::scenarios::busy_script;

fn normalise(v: &Value) -> Value {
    let text = v.to_string();
    let re_call = regex::Regex::new(r"call_[0-9a-f]{32}").unwrap();
    let re_res = regex::Regex::new(r"res_[0-9a-f]{16}").unwrap();
    let text = re_call.replace_all(&text, "call_GATEWAY");
    let text = re_res.replace_all(&text, "res_STORED");
    serde_json::from_str(&text).unwrap()
}

fn check(name: &str, got: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    let pretty = serde_json::to_string_pretty(got).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &pretty).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    let want: Value = serde_json::from_str(&want).unwrap();
    assert!(
        &want == got,
        "{name}: the request bodies differ from {}:\n{pretty}",
        path.display()
    );
}

#[tokio::test]
async fn request_bodies_match_the_golden_files() {
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
    ] {
        let h = Harness::new();
        let server = server(busy_script()).await;
        let client = connect_with_key(
            &model_config(provider, &server),
            &server.egress(),
            Some("k".into()),
        )
        .unwrap();
        let mut agent = agent(&h, client, true);
        agent.options_mut().system = Some("You are terse.".into());
        agent.options_mut().parallel_tool_calls = Some(true);
        let mut history = vec![Message::user("Do the things.")];
        agent
            .run(&mut history, &CancellationToken::new(), &Silent)
            .await
            .unwrap();
        let reqs = server.requests();
        let got = json!({
            "path": reqs[0].path,
            "first": reqs[0].body,
            "follow_up": reqs[3].body,
        });
        check(provider.as_str(), &normalise(&got));
    }
}

#[tokio::test]
async fn stored_responses_chain_with_previous_response_id_and_send_only_new_items() {
    let h = Harness::new();
    let server = server(vec![
        Reply::Turn(FakeTurn::calls(&[
            ("call_1", "echo", r#"{"text":"one"}"#),
            ("call_2", "echo", r#"{"text":"two"}"#),
        ])),
        Reply::Turn(FakeTurn::text("Both echoed.")),
        Reply::Turn(FakeTurn::text("Bye.")),
    ])
    .await;
    let mut cfg = model_config(Provider::OpenAiResponses, &server);
    cfg.store = true;
    let client = connect_with_key(&cfg, &server.egress(), Some("k".into())).unwrap();
    let agent = agent(&h, client, false);
    let mut history = vec![Message::user("Echo one and two.")];
    agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    history.push(Message::user("Thanks."));
    agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    let bodies: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| {
            json!({
                "previous_response_id": r.body.get("previous_response_id"),
                "store": r.body["store"],
                "input": r.body["input"],
            })
        })
        .collect();
    check("openai-responses-store", &normalise(&Value::Array(bodies)));
}
