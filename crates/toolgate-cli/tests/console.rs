//! The web console in a real browser: starts `toolgate serve --listen 127.0.0.1:0` on a temp
//! workspace with an operator token and an agent token, then runs `tests/console/run.cjs`,
//! which drives Debian's Chromium through playwright-core: an approval requested by a real
//! MCP client (fastmcp, the server crate's `tests/peers/mcp_client.py`) appears live and is
//! approved by a click, after which the client's waiting call completes; approvals requested
//! over `/v1/calls` are decided by click, typed confirmation and keyboard; the audit chain is
//! verified before and after tampering; every page is screenshotted into
//! `target/console-screenshots/`. A second server federates real MCP servers (one quarantined
//! tool, one server down, one disabled) for the Tools page's Pin column, the Health page's
//! MCP servers panel and the Dashboard's (`tests/console/pins.cjs`). A third server starts
//! fresh for the Dashboard: known calls over `/v1/calls` and the numbers the page reads from
//! `/metrics` (`tests/console/dashboard.cjs`).
//!
//! Needs `node`, `/usr/bin/chromium` (or `TOOLGATE_CHROMIUM`), playwright-core under
//! `tests/peers/console/` and the Python MCP peers in `.venv` — `scripts/test.sh` installs
//! them all; without them this test fails and says how to install them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_toolgate");
const OPERATOR_TOKEN: &str = "tg-console-operator-7f3a9c";
const AGENT_TOKEN: &str = "tg-console-agent-51be02";
/// A bound on the whole browser run, so a hung browser fails the test instead of CI.
const BROWSER_RUN_LIMIT: Duration = Duration::from_secs(300);
const SCREENSHOTS: [&str; 8] = [
    "token",
    "approvals",
    "tools",
    "audit",
    "audit-broken",
    "health",
    "tokens",
    "approvals-light",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// What the browser run needs, or a panic that says how to get it.
struct Prerequisites {
    node: PathBuf,
    python: PathBuf,
    chromium: PathBuf,
    playwright_core: PathBuf,
}

fn prerequisites() -> Prerequisites {
    let install = "run scripts/test.sh (it installs them), or: apt-get install chromium && \
                   npm install --prefix tests/peers/console --no-save playwright-core@1.65.1";
    let node =
        std::env::var_os("TOOLGATE_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let ok = Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "`{}` does not run: {install}", node.display());
    let chromium = std::env::var_os("TOOLGATE_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        chromium.is_file(),
        "no Chromium at {}: {install}",
        chromium.display()
    );
    let playwright_core = repo_root().join("tests/peers/console/node_modules/playwright-core");
    assert!(
        playwright_core.join("package.json").is_file(),
        "no playwright-core at {}: {install}",
        playwright_core.display()
    );
    let python = repo_root().join(".venv/bin/python");
    assert!(
        python.is_file(),
        "no Python MCP peers at {}: run scripts/test.sh (it installs them into .venv)",
        python.display()
    );
    Prerequisites {
        node,
        python,
        chromium,
        playwright_core,
    }
}

/// The server process; killed when the test ends, however it ends.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(ws: &Path, data: &Path) -> Server {
    start_server_with(ws, data, &[])
}

/// [`start_server`] with variables in its environment (a model's API key).
fn start_server_with(ws: &Path, data: &Path, vars: &[(&str, &str)]) -> Server {
    let mut child = Command::new(BIN)
        .envs(vars.iter().copied())
        .arg("--workspace")
        .arg(ws)
        .arg("--data-dir")
        .arg(data)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env_remove("TOOLGATE_CONFIG")
        .env_remove("TOOLGATE_ROLE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn toolgate serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the serving line");
    // `toolgate serving at http://127.0.0.1:PORT/  (…)`
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in the first line of `toolgate serve`: {line:?}"))
        .trim_end_matches('/')
        .to_owned();
    Server { child, url }
}

fn config() -> String {
    format!(
        r#"
[[server.tokens]]
sha256 = "{}"
principal = "ops"
role = "default"
operator = true

[[server.tokens]]
sha256 = "{}"
principal = "agent"
role = "default"

[server.anonymous]
role = "default"
principal = "visitor"
"#,
        sha256_hex(OPERATOR_TOKEN),
        sha256_hex(AGENT_TOKEN)
    )
}

/// The node command for `script` (in `tests/console/`) against `server`.
fn node(
    p: &Prerequisites,
    script: &str,
    server: &Server,
    ws: &Path,
    data: &Path,
    shots: &Path,
) -> Command {
    let mut cmd = Command::new(&p.node);
    cmd.arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/console")
            .join(script),
    )
    .env("TG_URL", &server.url)
    .env("TG_OPERATOR_TOKEN", OPERATOR_TOKEN)
    .env("TG_AGENT_TOKEN", AGENT_TOKEN)
    .env("TG_WORKSPACE", ws)
    .env("TG_AUDIT_FILE", data.join("logs/tool-audit.jsonl"))
    .env("TG_SCREENSHOTS", shots)
    .env("TG_CHROMIUM", &p.chromium)
    .env("TG_PLAYWRIGHT_CORE", &p.playwright_core)
    .env("TG_PYTHON", &p.python)
    .env(
        "TG_MCP_CLIENT",
        repo_root().join("crates/toolgate-server/tests/peers/mcp_client.py"),
    )
    .stdin(Stdio::null());
    cmd
}

/// Waits for `child` to exit within the limit; a hung browser fails the test.
fn wait_bounded(child: &mut Child) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for node") {
            return status;
        }
        if started.elapsed() > BROWSER_RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser run did not finish within {BROWSER_RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs one phase of `restart.cjs`; returns the JSON object it printed last.
fn restart_phase(
    p: &Prerequisites,
    phase: &str,
    approval_id: &str,
    server: &Server,
    ws: &Path,
    data: &Path,
    shots: &Path,
) -> Value {
    let mut child = node(p, "restart.cjs", server, ws, data, shots)
        .env("TG_PHASE", phase)
        .env("TG_APPROVAL_ID", approval_id)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn node");
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .inspect(|l| {
                use std::io::Write;
                let _ = writeln!(std::io::stdout(), "{l}");
            })
            .collect::<Vec<_>>()
    });
    let status = wait_bounded(&mut child);
    let lines = reader.join().expect("stdout reader");
    assert!(status.success(), "restart.cjs {phase} failed ({status})");
    let last = lines.last().map_or("", String::as_str);
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("restart.cjs {phase} printed no JSON last ({e}): {last:?}"))
}

/// A temporary directory holding an empty workspace `ws` and data dir `data`.
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let base = tmp.path().canonicalize().expect("canonical temp dir");
    let (ws, data) = (base.join("ws"), base.join("data"));
    std::fs::create_dir(&ws).expect("workspace dir");
    std::fs::create_dir(&data).expect("data dir");
    (tmp, ws, data)
}

/// Runs a browser script to completion (or the limit), echoing its output.
fn run_browser(
    p: &Prerequisites,
    script: &str,
    server: &Server,
    ws: &Path,
    data: &Path,
    shots: &Path,
) {
    let mut child = node(p, script, server, ws, data, shots)
        .spawn()
        .expect("spawn node");
    let status = wait_bounded(&mut child);
    assert!(
        status.success(),
        "the browser run failed ({status}); see its output above"
    );
}

/// Where the browser runs leave their screenshots (docs/img holds the published ones).
fn screenshots_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("console-screenshots")
}

#[test]
fn console_in_headless_chromium() {
    let p = prerequisites();
    let (_tmp, ws, data) = dirs();
    std::fs::write(ws.join("toolgate.toml"), config()).expect("write config");
    let shots = screenshots_dir();
    for name in SCREENSHOTS {
        let _ = std::fs::remove_file(shots.join(format!("{name}.png")));
    }

    let server = start_server(&ws, &data);
    run_browser(&p, "run.cjs", &server, &ws, &data, &shots);
    drop(server);

    // What the browser did, seen from outside it.
    assert_eq!(
        [
            std::fs::read_to_string(ws.join("out.txt")).ok(),
            std::fs::read_to_string(ws.join("notes/hello.txt")).ok(),
            std::fs::read_to_string(ws.join("k/second.txt")).ok(),
            std::fs::read_to_string(ws.join("k/first.txt")).ok(),
        ],
        [
            Some("written over MCP".to_owned()),
            Some("hello from the console test".to_owned()),
            Some("2".to_owned()),
            None
        ]
    );
    let verify = Command::new(BIN)
        .arg("--workspace")
        .arg(&ws)
        .arg("--data-dir")
        .arg(&data)
        .args(["audit", "verify", "--json"])
        .output()
        .expect("run toolgate audit verify");
    let report: Value = serde_json::from_slice(&verify.stdout).expect("verify --json output");
    assert_eq!(
        (
            verify.status.code(),
            &report["ok"],
            &report["first_bad"]["line"]
        ),
        (Some(4), &Value::Bool(false), &Value::from(2))
    );
    let pngs: Vec<(&str, bool)> = SCREENSHOTS
        .iter()
        .map(|name| {
            let bytes = std::fs::read(shots.join(format!("{name}.png"))).unwrap_or_default();
            (*name, bytes.starts_with(b"\x89PNG\r\n\x1a\n"))
        })
        .collect();
    assert_eq!(pngs, SCREENSHOTS.map(|n| (n, true)));
}

/// The Dashboard on a fresh server: 5 ok calls and 2 to an unknown tool over `/v1/calls`, then
/// an approval request and steady traffic, each checked against what the page shows.
#[test]
fn console_dashboard_shows_the_servers_metrics() {
    let p = prerequisites();
    let (_tmp, ws, data) = dirs();
    std::fs::write(ws.join("toolgate.toml"), config()).expect("write config");
    let shots = screenshots_dir();
    let _ = std::fs::remove_file(shots.join("dashboard.png"));

    let server = start_server(&ws, &data);
    run_browser(&p, "dashboard.cjs", &server, &ws, &data, &shots);
    drop(server);
    let png = std::fs::read(shots.join("dashboard.png")).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "no dashboard screenshot"
    );
}

/// Three MCP servers: the Python SDK peer `py`, `gone` (its command does not exist) and `off`
/// (disabled).
fn mcp_config(python: &Path) -> String {
    let peer = repo_root().join("crates/toolgate-mcp-client/tests/peers/py_peer.py");
    format!(
        "{}\n[[mcp.servers]]\nname = \"py\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\n\
         [[mcp.servers]]\nname = \"gone\"\ncommand = \"toolgate-no-such-server\"\n\n\
         [[mcp.servers]]\nname = \"off\"\ncommand = \"toolgate-no-such-server\"\nenabled = false\n",
        config(),
        python.display(),
        peer.display()
    )
}

/// The pin column and the MCP servers panel: `mcp__py__add` was pinned with another
/// definition than the one the peer serves (as if the server changed it since), so the
/// catalog quarantines it; the peer's other tools are pinned on first sight.
#[test]
fn console_shows_pins_and_federated_mcp_servers() {
    let p = prerequisites();
    let (_tmp, ws, data) = dirs();
    std::fs::write(ws.join("toolgate.toml"), mcp_config(&p.python)).expect("write config");
    let earlier = toolgate_protocol::ToolSpec::new(
        "mcp__py__add",
        "Add two integers.",
        serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
    )
    .with_source("mcp:py");
    let pins = toolgate_store::PinStore::open(&data.join("toolgate.db")).expect("pin store");
    pins.observe_spec(&earlier)
        .expect("pin the earlier definition");
    drop(pins);
    let shots = screenshots_dir();

    let server = start_server(&ws, &data);
    run_browser(&p, "pins.cjs", &server, &ws, &data, &shots);
}

/// The restart case: a call needing approval, the server SIGKILLed and started again on the
/// same data, the approval decided in the console of the new server, and the agent's retried
/// call running exactly once — all of it in the audit.
#[test]
fn console_decides_an_approval_across_a_server_restart() {
    let p = prerequisites();
    let (_tmp, ws, data) = dirs();
    std::fs::write(ws.join("toolgate.toml"), config()).expect("write config");
    let shots = screenshots_dir();

    let first = start_server(&ws, &data);
    let requested = restart_phase(&p, "request", "", &first, &ws, &data, &shots);
    let id = requested["approval_id"]
        .as_str()
        .expect("approval id")
        .to_owned();
    drop(first); // SIGKILL: no graceful shutdown
    assert!(!ws.join("restart/once.txt").exists());

    let second = start_server(&ws, &data);
    let decided = restart_phase(&p, "decide", &id, &second, &ws, &data, &shots);
    let retried_call = decided["retried_call_id"]
        .as_str()
        .expect("call id")
        .to_owned();
    drop(second);

    let query = Command::new(BIN)
        .arg("--workspace")
        .arg(&ws)
        .arg("--data-dir")
        .arg(&data)
        .args(["audit", "query", "--tool", "write_file", "--json"])
        .output()
        .expect("run toolgate audit query");
    assert!(query.status.success(), "audit query failed: {query:?}");
    let records: Vec<Value> =
        serde_json::from_slice(&query.stdout).expect("audit query --json prints a JSON array");
    // The console's decision is a record of its own (source `approvals:api`).
    assert_eq!(
        records
            .iter()
            .filter(|r| r["source"] == "approvals:api" && r["outcome"] == "ok")
            .count(),
        1,
        "audit records: {records:#?}"
    );
    let outcomes: Vec<(String, String)> = records
        .iter()
        .filter(|r| r["kind"] == "outcome" && r["source"] != "approvals:api")
        .map(|r| {
            (
                r["outcome"].as_str().unwrap_or("?").to_owned(),
                r["principal"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("approval_required".to_owned(), "agent".to_owned()),
            ("ok".to_owned(), "agent".to_owned()),
            ("approval_required".to_owned(), "agent".to_owned()),
        ],
        "audit records: {records:#?}"
    );
    let ran: Vec<(&Value, &Value)> = records
        .iter()
        .filter(|r| r["kind"] == "outcome" && r["outcome"] == "ok")
        .filter(|r| r["source"] != "approvals:api")
        .map(|r| (&r["call_id"], &r["approval_id"]))
        .collect();
    assert_eq!(
        ran,
        [(&Value::from(retried_call), &Value::from(id))],
        "audit records: {records:#?}"
    );
    let verify = Command::new(BIN)
        .arg("--workspace")
        .arg(&ws)
        .arg("--data-dir")
        .arg(&data)
        .args(["audit", "verify"])
        .status()
        .expect("run toolgate audit verify");
    assert_eq!(verify.code(), Some(0));
}

/// The Chat page against a scripted model: a message, the write's card in the conversation,
/// Approve there, the answer, a reload (`tests/console/chat.cjs`).
#[test]
fn console_chat_talks_to_the_agent_and_approves_inline() {
    use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};
    let p = prerequisites();
    let (_tmp, ws, data) = dirs();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt
        .block_on(FakeServer::start(vec![
            Reply::Turn(FakeTurn::calls(&[(
                "call_1",
                "write_file",
                r#"{"path":"chat.md","content":"from the browser"}"#,
            )])),
            Reply::Turn(FakeTurn::text("Wrote chat.md.")),
        ]))
        .unwrap();
    let port = model.addr.port();
    let config = format!(
        "{}\n[model]\nprovider = \"openai-chat\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\n\
         api_key_env = \"TOOLGATE_TEST_MODEL_KEY\"\n\n\
         [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n",
        config(),
        model.base_url()
    );
    std::fs::write(ws.join("toolgate.toml"), config).expect("write config");
    let shots = screenshots_dir();
    let server = start_server_with(
        &ws,
        &data,
        &[("TOOLGATE_TEST_MODEL_KEY", "sk-test-0123456789")],
    );
    run_browser(&p, "chat.cjs", &server, &ws, &data, &shots);
    drop(server);
    assert_eq!(model.requests().len(), 2, "the model was asked twice");
}
