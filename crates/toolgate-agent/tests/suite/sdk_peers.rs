//! The fake model server read by the official OpenAI (`openai` 3.51.0) and Anthropic
//! (`anthropic` 2.10.0) Python SDKs, installed into the workspace's `.venv` by
//! `scripts/test.sh`: their own stream accumulators must assemble exactly the scripted tool
//! calls and text, streaming and not. This keeps the fake — and so every provider test that
//! uses it — honest about the real wire formats.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};

fn python() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        venv.exists(),
        "{} is missing: run scripts/test.sh once (it installs openai 3.51.0 and anthropic 2.10.0 into .venv)",
        venv.display()
    );
    venv
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdks_read_the_fake_servers_answers() {
    let calls = || {
        Reply::Turn(FakeTurn::calls(&[
            ("call_1", "echo", r#"{"text":"a"}"#),
            ("call_2", "echo", r#"{"text":"b"}"#),
        ]))
    };
    let text = || Reply::Turn(FakeTurn::text("Hello there"));
    // In the order sdk_read.py asks: per API, calls (plain), calls (stream), text (stream).
    let script = (0..3).flat_map(|_| [calls(), calls(), text()]).collect();
    let server = FakeServer::start(script).await.unwrap();
    let script_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/sdk_read.py");
    let base = format!("http://{}", server.addr);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python())
            .arg(script_path)
            .arg(base)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "sdk_read.py failed:\n{stderr}");
    let got: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let chat_calls = json!([
        ["call_1", "echo", "{\"text\":\"a\"}"],
        ["call_2", "echo", "{\"text\":\"b\"}"]
    ]);
    let resp_items = || {
        json!([
            ["reasoning", null, null, null],
            ["function_call", "call_1", "echo", "{\"text\":\"a\"}"],
            ["function_call", "call_2", "echo", "{\"text\":\"b\"}"],
        ])
    };
    let thinking = |n: u32| json!(["thinking", format!("plan {n}"), format!("sig-{n}")]);
    let anth_calls = |n: u32| {
        json!([
            thinking(n),
            ["tool_use", "call_1", "echo", {"text": "a"}],
            ["tool_use", "call_2", "echo", {"text": "b"}],
        ])
    };
    assert_eq!(
        got,
        json!({
            "chat": ["tool_calls", chat_calls],
            "chat_stream": ["tool_calls", chat_calls],
            "chat_stream_text": ["stop", "Hello there"],
            "responses": ["completed", resp_items()],
            "responses_stream": ["completed", resp_items()],
            "responses_stream_text": ["completed", "Hello there"],
            "anthropic": ["tool_use", anth_calls(7)],
            "anthropic_stream": ["tool_use", anth_calls(8)],
            "anthropic_stream_text": ["end_turn", [thinking(9), ["text", "Hello there"]]],
        }),
        "stderr:\n{stderr}"
    );
    assert_eq!(server.remaining(), 0);
}
