//! The chain a host builds: the Python SDK client (default mode) → `toolgate serve` →
//! server-everything. What the client receives through the gateway is what the server sent:
//! annotated text and images, resource links, structured content — compared with the same
//! client asking the server directly (crates/toolgate-cli/tests/peers/chain_client.py).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Env, http};
use super::mcp::{node, server};

const TOOLS: [&str; 4] = [
    "get-annotated-message",
    "get-resource-links",
    "get-structured-content",
    "get-tiny-image",
];

fn wait_for_tools(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, tools) = http(addr, "GET", "/v1/tools", None);
        let listed = tools.to_string();
        if TOOLS
            .iter()
            .all(|t| listed.contains(&format!("mcp__everything__{t}")))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the tools never arrived: {tools}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs a Python client script against `toolgate serve` at `addr` and reads the one JSON
/// object it prints.
fn run_client(python: &Path, client: &Path, addr: &str, args: &[&str]) -> Value {
    let out = Command::new(python)
        .arg(client)
        .args(["--url", &format!("http://{addr}/mcp")])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn content_reaches_the_client_through_the_gateway_as_the_server_sent_it() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    let client = repo.join("crates/toolgate-cli/tests/peers/chain_client.py");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    let (node, everything) = (node(), server("server-everything"));
    let labels: Vec<String> = TOOLS
        .iter()
        .map(|t| format!("\"{t}\" = \"read\""))
        .collect();
    let env = Env::with_config(&format!(
        "[[mcp.servers]]\nname = \"everything\"\ncommand = \"{node}\"\n\
         args = [\"{everything}\", \"stdio\"]\nrisk = {{ {} }}\n",
        labels.join(", ")
    ));
    let (mut child, addr) = env.serve();
    wait_for_tools(&addr);
    let seen = run_client(
        &python,
        &client,
        &addr,
        &[
            "--prefix",
            "mcp__everything__",
            "--command",
            &node,
            "--arg",
            &everything,
            "--arg",
            "stdio",
        ],
    );
    let _ = child.kill();
    let _ = child.wait();
    let (direct, via) = (&seen["direct"]["results"], &seen["via"]["results"]);
    // The client speaks its default era to the gateway, whatever the server behind speaks.
    assert_eq!(seen["via"]["protocol"], json!("2026-07-28"), "{seen}");
    assert_eq!(direct.as_array().unwrap().len(), 5, "{seen}");
    assert_eq!(via, direct, "through the gateway ≠ direct");
    // What "intact" means here, spelled out.
    assert_eq!(
        direct[0]["content"][0]["annotations"],
        json!({"priority": 0.7, "audience": ["user"]}),
        "{direct}"
    );
    let link = &direct[2]["content"][1];
    assert_eq!(link["type"], json!("resource_link"), "{direct}");
    assert!(
        link["uri"]
            .as_str()
            .unwrap()
            .starts_with("demo://resource/"),
        "{link}"
    );
}

/// `toolgate call` prints a federated tool's content as its server sent it: annotations kept,
/// a `resource_link` as a `resource_link` (it was shown as a `resource` wrapping the link).
#[test]
fn the_cli_envelope_shows_federated_content_as_sent() {
    let (node, everything) = (node(), server("server-everything"));
    let labels: Vec<String> = TOOLS
        .iter()
        .map(|t| format!("\"{t}\" = \"read\""))
        .collect();
    let env = Env::with_config(&format!(
        "[[mcp.servers]]\nname = \"everything\"\ncommand = \"{node}\"\n\
         args = [\"{everything}\", \"stdio\"]\nrisk = {{ {} }}\n",
        labels.join(", ")
    ));
    let annotated = env.run(&[
        "call",
        "mcp__everything__get-annotated-message",
        "--args",
        r#"{"messageType":"success"}"#,
    ]);
    annotated.assert_code(0);
    let first = &annotated.json()["content"][0];
    assert_eq!(
        first["annotations"],
        json!({"priority": 0.7, "audience": ["user"]}),
        "{first}"
    );
    let links = env.run(&[
        "call",
        "mcp__everything__get-resource-links",
        "--args",
        r#"{"count":1}"#,
    ]);
    links.assert_code(0);
    let content = links.json()["content"].clone();
    let link = content
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no resource_link in {content}"));
    assert!(
        link["uri"]
            .as_str()
            .unwrap()
            .starts_with("demo://resource/"),
        "{link}"
    );
    assert!(
        content
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["type"] != "resource"),
        "{content}"
    );
}

/// A 2026-07-28 client hears on `subscriptions/listen` that a federated server added a tool
/// (the server announces it to toolgate, toolgate refreshes its catalog and tells every
/// listener whose role sees the change). The old answer was -32601.
#[test]
fn a_listening_client_hears_that_federated_tools_arrived() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    let peer = repo.join("crates/toolgate-mcp-client/tests/peers/py_peer.py");
    let client = repo.join("crates/toolgate-cli/tests/peers/listen_client.py");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    // The loopback caller acts in role `readonly`: it sees and may call read tools only.
    let env = Env::with_config(&format!(
        "[[mcp.servers]]\nname = \"py\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\
         trusted = true\nrisk = {{ add_tool = \"read\", fresh = \"read\" }}\n",
        python.display(),
        peer.display()
    ));
    let (mut child, addr) = env.serve();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http(&addr, "GET", "/v1/tools", None)
        .1
        .to_string()
        .contains("mcp__py__add_tool")
    {
        assert!(
            Instant::now() < deadline,
            "the py server's tools never arrived"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let seen = run_client(
        &python,
        &client,
        &addr,
        &["--adder", "mcp__py__add_tool", "--name", "fresh"],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        (&seen["protocol"], &seen["honored"], &seen["heard"]),
        (
            &json!("2026-07-28"),
            &json!({"toolsListChanged": true}),
            &json!("ToolsListChanged")
        ),
        "{seen}"
    );
    assert!(
        seen["listed"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__py__fresh")),
        "{seen}"
    );
}

/// A 2025-11-25 session hears, on its standalone stream, that a federated server's prompts
/// changed (`notifications/prompts/list_changed`, and the resource list notice with it): the
/// session-era counterpart of the listen above. Before, only `subscriptions/listen` heard it.
#[test]
fn a_session_hears_that_federated_prompts_changed() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    let peer = repo.join("crates/toolgate-mcp-client/tests/peers/py_peer.py");
    let client = repo.join("crates/toolgate-cli/tests/peers/session_notices_client.py");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    let env = Env::with_config(&format!(
        "[[mcp.servers]]\nname = \"py\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\
         trusted = true\nrisk = {{ add_prompt = \"read\" }}\n",
        python.display(),
        peer.display()
    ));
    let (mut child, addr) = env.serve();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http(&addr, "GET", "/v1/tools", None)
        .1
        .to_string()
        .contains("mcp__py__add_prompt")
    {
        assert!(
            Instant::now() < deadline,
            "the py server's tools never arrived"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let seen = run_client(
        &python,
        &client,
        &addr,
        &["--adder", "mcp__py__add_prompt", "--name", "fresh"],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        seen["heard"],
        json!([
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed"
        ]),
        "{seen}"
    );
    assert!(
        seen["prompts"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__py__fresh")),
        "{seen}"
    );
}

/// The rest of the surface through the gateway, for a Python SDK client in its default mode
/// (2026-07-28) with server-everything behind: a prompt listed and got, a resource listed
/// under its namespaced URI and read, a resource update heard on `subscriptions/listen`, and
/// a sampling request of the server answered by the client's model (as an
/// InputRequiredResult round); the prompt, the read and the calls are in the audit.
#[test]
fn prompts_resources_updates_and_sampling_reach_a_default_mode_client() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    let client = repo.join("crates/toolgate-cli/tests/peers/surface_client.py");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    let (node, everything) = (node(), server("server-everything"));
    let env = Env::with_config(&format!(
        "[[mcp.servers]]\nname = \"everything\"\ncommand = \"{node}\"\n\
         args = [\"{everything}\", \"stdio\"]\nclient_requests = \"forward\"\n\
         risk = {{ \"toggle-subscriber-updates\" = \"read\", \"trigger-sampling-request\" = \"read\" }}\n"
    ));
    let (mut child, addr) = env.serve();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http(&addr, "GET", "/v1/tools", None)
        .1
        .to_string()
        .contains("mcp__everything__trigger-sampling-request")
    {
        assert!(Instant::now() < deadline, "the tools never arrived");
        std::thread::sleep(Duration::from_millis(200));
    }
    let seen = run_client(&python, &client, &addr, &[]);
    let _ = child.kill();
    let _ = child.wait();
    let doc = "mcp://everything/demo://resource/static/document/architecture.md";
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");
    assert!(
        seen["prompts"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__everything__simple-prompt")),
        "{seen}"
    );
    assert_eq!(
        seen["prompt"],
        json!(["This is a simple prompt without arguments."]),
        "{seen}"
    );
    assert_eq!(seen["read"]["uri"], json!(doc), "{seen}");
    assert!(
        seen["read"]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Everything Server"),
        "{seen}"
    );
    assert_eq!(
        seen["heard"],
        json!({"type": "ResourceUpdated", "uri": doc}),
        "{seen}"
    );
    assert_eq!(seen["sampling"]["isError"], json!(false), "{seen}");
    assert!(
        seen["sampling"]["text"][0]
            .as_str()
            .unwrap()
            .contains("Paris, said the client's model"),
        "{seen}"
    );
    assert_eq!(
        seen["sampling"]["asked"].as_array().unwrap().len(),
        1,
        "{seen}"
    );
    let audit = std::fs::read_to_string(env.audit_path()).unwrap();
    for step in [
        "mcp__everything__simple-prompt",
        doc,
        "mcp__everything__trigger-sampling-request",
        "mcp__everything__toggle-subscriber-updates",
    ] {
        assert!(audit.contains(step), "{step} is not in the audit");
    }
    // The server's sampling request and the client's answer have a record of their own,
    // tied to the call that asked.
    let asked: Vec<Value> = audit
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|r| r["tool"] == "sampling/createMessage")
        .collect();
    assert_eq!(asked.len(), 1, "{audit}");
    let asked = &asked[0];
    assert_eq!(
        asked["arguments"]["asked_by"],
        "mcp__everything__trigger-sampling-request"
    );
    assert_eq!(asked["outcome"], "ok", "{asked}");
    assert!(
        asked["call_id"].as_str().unwrap().ends_with(".ask1"),
        "{asked}"
    );
    assert!(
        asked["result"]
            .to_string()
            .contains("Paris, said the client's model"),
        "{asked}"
    );
}
