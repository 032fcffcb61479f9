//! Tool RAG on the model-facing side, from the binary: over `[rag] threshold` the catalog has
//! `search_tools` (called through the gateway), `tools export --query` exports the top K plus
//! `search_tools`, `--deferred` the provider's deferred-loading form; a role that sees at most
//! the threshold keeps every tool and never sees `search_tools`.

use serde_json::{Value, json};
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};

use super::harness::{Env, Run};

/// Six built-in task tools: over a threshold of 3 for the default role; role `reader` sees
/// three (read_file, list_dir, search_files), which is not over it.
fn env() -> Env {
    Env::with_config(
        r#"
[rag]
threshold = 3
k = 2

[roles.reader]
tools = ["read_*", "list_*", "search_*"]
"#,
    )
}

fn names(exported: &Value, key: &str) -> Vec<String> {
    exported
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {exported}"))
        .iter()
        .map(|t| {
            t.pointer(key)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("no {key} in {t}"))
                .to_owned()
        })
        .collect()
}

#[test]
fn export_query_gives_the_top_k_plus_search_tools_over_the_threshold() {
    let env = env();
    let listed = env.run(&["tools", "list", "--json"]).assert_code(0).json();
    assert!(names(&listed, "/name").contains(&"search_tools".to_owned()));

    let run = env.run(&[
        "tools",
        "export",
        "--format",
        "openai-chat",
        "--query",
        "run a shell command to list the files",
    ]);
    let got = names(&run.assert_code(0).json(), "/function/name");
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0], "shell");
    assert_eq!(got[2], "search_tools");

    // Without a query: every tool plus search_tools, and a note saying how to retrieve.
    let run = env.run(&["tools", "export", "--format", "anthropic"]);
    let all = names(&run.assert_code(0).json(), "/name");
    assert_eq!(all.len(), 8, "{all:?}");
    assert!(run.stderr.contains("--query"), "{}", run.stderr);

    // `reader` sees three task tools: no retrieval, no search_tools, whatever was asked.
    let run = env.run(&[
        "--role",
        "reader",
        "tools",
        "export",
        "--format",
        "anthropic",
        "--query",
        "read a file",
    ]);
    let reader = names(&run.assert_code(0).json(), "/name");
    assert_eq!(
        reader,
        ["list_dir", "read_file", "read_result", "search_files"]
    );
    assert!(run.stderr.contains("retrieval is off"), "{}", run.stderr);
}

#[test]
fn export_deferred_marks_all_but_the_top_k_and_adds_the_provider_search() {
    let env = env();
    let anthropic = env
        .run(&[
            "tools",
            "export",
            "--format",
            "anthropic",
            "--deferred",
            "--query",
            "run a shell command to list the files",
            "-k",
            "1",
        ])
        .assert_code(0)
        .json();
    let list = anthropic.as_array().unwrap();
    assert_eq!(
        list[0],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    for t in &list[1..] {
        let loaded = t["name"] == "shell";
        assert_eq!(t.get("defer_loading").is_none(), loaded, "{t}");
        assert_ne!(t["name"], "search_tools");
    }
    assert_eq!(list.len(), 1 + 7);

    let responses = env
        .run(&[
            "tools",
            "export",
            "--format",
            "openai-responses",
            "--deferred",
        ])
        .assert_code(0)
        .json();
    let list = responses.as_array().unwrap();
    assert_eq!(list[0], json!({"type": "tool_search"}));
    assert!(list[1..].iter().all(|t| t["defer_loading"] == json!(true)));

    // No deferred form: the top K plus search_tools with a query, an error without one.
    let run = env.run(&[
        "tools",
        "export",
        "--format",
        "gemini",
        "--deferred",
        "--query",
        "run a shell command to list the files",
    ]);
    let gemini = run.assert_code(0).json();
    let decls = &gemini[0]["functionDeclarations"];
    assert_eq!(names(decls, "/name").last().unwrap(), "search_tools");
    assert!(
        run.stderr.contains("no deferred-loading form"),
        "{}",
        run.stderr
    );
    let run = env.run(&["tools", "export", "--format", "openai-chat", "--deferred"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("--query"), "{}", run.stderr);
}

#[test]
fn search_tools_is_a_gateway_call_that_hides_what_the_role_may_not_see() {
    let env = env();
    let found = env
        .call(
            "search_tools",
            &json!({"query": "run a shell command to list the files", "k": 3}),
        )
        .assert_code(0)
        .json();
    assert_eq!(found["data"]["tools"][0]["name"], "shell", "{found:#}");
    // readonly denies dangerous tools: the best match (shell) is not returned.
    let found = env
        .call_with(
            &["--role", "readonly"],
            "search_tools",
            &json!({"query": "run a shell command to list the files"}),
            &[],
        )
        .assert_code(0)
        .json();
    let tools = found["data"]["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|t| t["risk"] == "read"), "{found:#}");
    // Audited like any call.
    let records = env.audit_records();
    assert!(records.iter().any(|r| r["tool"] == "search_tools"));
}

#[test]
fn run_over_the_threshold_offers_the_top_k_then_loads_what_search_tools_found() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(FakeServer::start(vec![
            Reply::Turn(FakeTurn::calls(&[(
                "call_1",
                "search_tools",
                r#"{"query": "read_file", "k": 1}"#,
            )])),
            Reply::Turn(FakeTurn::text("found it")),
        ]))
        .unwrap();
    let port = server.addr.port();
    let env = Env::with_config(&format!(
        "[model]\nprovider = \"anthropic\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\n\
         api_key_env = \"TOOLGATE_TEST_MODEL_KEY\"\n\n\
         [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n\n\
         [rag]\nthreshold = 3\nk = 2\n",
        server.base_url()
    ));
    let out = env
        .command()
        .env("TOOLGATE_TEST_MODEL_KEY", "sk-test-model-key-0123456789")
        .args([
            "run",
            "run a shell command to list the files",
            "--no-stream",
        ])
        .output()
        .unwrap();
    let run = Run::from_output(out);
    run.assert_code(0);
    assert!(run.stdout.contains("found it"), "{run:#?}");
    assert!(
        run.stderr.contains("over [rag] threshold 3"),
        "{}",
        run.stderr
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{run:#?}");
    let first = names(&requests[0].body["tools"], "/name");
    assert_eq!(first.len(), 3, "{first:?}");
    assert_eq!(first[0], "shell");
    assert_eq!(first[2], "search_tools");
    let second = names(&requests[1].body["tools"], "/name");
    assert!(second.contains(&"read_file".to_owned()), "{second:?}");
    assert_eq!(second.len(), 4, "{second:?}");
    assert!(
        env.audit_records()
            .iter()
            .any(|r| r["tool"] == "search_tools"),
        "search_tools is audited"
    );
}

#[test]
fn serve_lists_search_tools_to_mcp_hosts_over_the_threshold() {
    use std::io::{BufRead, BufReader, Write};
    let env = env();
    let mut child = env
        .command()
        .args(["serve", "--stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let listed = loop {
        let line = lines.next().expect("an answer to tools/list").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    drop(stdin);
    let _ = child.wait();
    let tools = names(&listed["result"]["tools"], "/name");
    // Every visible tool plus search_tools: MCP hosts do their own selection.
    assert_eq!(tools.len(), 8, "{tools:?}");
    assert!(tools.contains(&"search_tools".to_owned()), "{tools:?}");
}
