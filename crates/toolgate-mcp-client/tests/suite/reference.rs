//! server-filesystem and server-memory over stdio: cwd / env reach the child, and their
//! tools work through the catalog.

use serde_json::json;
use toolgate_mcp_client::ServerConfig;
use toolgate_protocol::ToolOutput;

use super::peers::{STARTUP, call, names, node, npm_server, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_reads_a_file_in_its_allowed_dir() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("hello.txt"), "hello from disk\n").unwrap();
    let config = ServerConfig::stdio("fs", node())
        .with_args([npm_server("server-filesystem"), ".".to_owned()])
        .with_cwd(&root)
        .with_startup_timeout(STARTUP);
    let (hub, catalog) = start(vec![config]).await;
    let tools = names(&catalog, "mcp:fs");
    assert!(
        tools.contains(&"mcp__fs__read_file".to_owned()),
        "{tools:?}"
    );
    assert!(
        tools.contains(&"mcp__fs__write_file".to_owned()),
        "{tools:?}"
    );

    let path = root.join("hello.txt").to_string_lossy().into_owned();
    let out = call(&catalog, "mcp__fs__read_text_file", json!({"path": path}))
        .await
        .unwrap();
    assert_eq!(out.data, json!({"content": "hello from disk\n"}));
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_keeps_entities_in_the_file_named_by_env() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory.jsonl");
    let config = ServerConfig::stdio("memory", node())
        .with_args([npm_server("server-memory")])
        .with_env("MEMORY_FILE_PATH", memory.to_string_lossy())
        .with_startup_timeout(STARTUP);
    let (hub, catalog) = start(vec![config]).await;
    let entity =
        json!({"name": "toolgate", "entityType": "project", "observations": ["written in Rust"]});
    call(
        &catalog,
        "mcp__memory__create_entities",
        json!({"entities": [entity]}),
    )
    .await
    .unwrap();
    let graph = call(&catalog, "mcp__memory__read_graph", json!({}))
        .await
        .unwrap();
    assert_eq!(
        graph,
        ToolOutput::json(json!({"entities": [entity], "relations": []}))
    );
    assert!(
        std::fs::read_to_string(&memory)
            .unwrap()
            .contains("written in Rust"),
        "the server wrote to MEMORY_FILE_PATH"
    );
    hub.shutdown().await;
}
