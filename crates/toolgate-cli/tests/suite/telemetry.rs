//! Telemetry as an operator's tools see it (issue 17), against `toolgate serve`:
//! - the spans cross the wire to an OTLP/HTTP collector (`tests/peers/otlp_receiver.py`, which
//!   decodes them with the official protobuf definitions) as one trace from the caller's
//!   `_meta.traceparent` through toolgate's SERVER, `execute_tool` and CLIENT spans to the
//!   federated server, which receives the CLIENT span's context; no secret argument on any
//!   span; an unknown tool is an `execute_tool` span with `error.type = unknown_tool`;
//! - a real Prometheus scrapes `/metrics` with an operator's token and counts the calls made;
//!   without a token the scrape is refused; `[telemetry] metrics_listen` serves a scraper
//!   without one;
//! - `--log-format json` writes JSON lines, never colour, never a bearer token; text logs into
//!   a pipe carry no colour either.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Env, http_with, peer_json, peer_python, serving_address};

/// The caller's trace: its id and the caller's own span id.
const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN: &str = "b7ad6b7169203331";
/// The trace of the call of an unknown tool.
const UNKNOWN_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const UNKNOWN_CALLER_SPAN: &str = "00f067aa0ba902b7";
/// A secret-looking argument: it must reach no span.
const SECRET: &str = "sk-live-0123456789abcdef0123456789abcdef";

/// OTLP span kinds.
const INTERNAL: i64 = 1;
const SERVER: i64 = 2;
const CLIENT: i64 = 3;
/// OTLP status code ERROR.
const STATUS_ERROR: i64 = 2;

/// A child process killed (and reaped) when dropped, also when a test panics.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Killed {
    /// SIGTERM, then waits up to `within` for a clean exit.
    fn terminate(&mut self, within: Duration) {
        let pid = rustix::process::Pid::from_raw(self.0.id() as i32).expect("a pid");
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.0.try_wait().expect("wait") {
                assert!(status.success(), "exited with {status} after SIGTERM");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "still running {within:?} after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `cmd` (a `toolgate … serve --listen 127.0.0.1:0`) started; once it prints where it serves,
/// the child and its `ADDR:PORT`.
fn serve(mut cmd: Command) -> (Killed, String) {
    let mut child = Killed(
        cmd.stdout(Stdio::piped())
            .spawn()
            .expect("spawn toolgate serve"),
    );
    let addr = serving_address(&mut child.0);
    (child, addr)
}

/// A port free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// One HTTP/1.1 GET on a fresh connection: status and body as text.
fn get_text(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let answer = http_with(addr, "GET", path, headers, None);
    (answer.status, answer.text)
}

/// Percent-encodes a query parameter's value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test peers' Python, asserting `opentelemetry-proto` imports there.
fn otel_python() -> PathBuf {
    let python = peer_python();
    let out = Command::new(&python)
        .args([
            "-c",
            "import opentelemetry.proto.collector.trace.v1.trace_service_pb2",
        ])
        .output()
        .expect("run the peers' python");
    assert!(
        out.status.success(),
        "opentelemetry-proto does not import in {}: run scripts/test.sh, which installs it\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    python
}

/// Starts the OTLP receiver writing spans to `file`: the process and its port.
fn otlp_receiver(python: &Path, file: &Path) -> (Killed, u16) {
    let mut child = Killed(
        Command::new(python)
            .arg(repo().join("crates/toolgate-cli/tests/peers/otlp_receiver.py"))
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn otlp_receiver.py"),
    );
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the receiver's port");
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no port from otlp_receiver.py: {line:?}"));
    (child, port)
}

/// The spans the receiver wrote.
fn spans_in(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .expect("the spans file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a span line is JSON"))
        .collect()
}

/// The one span of `trace` called `name` of kind `kind`.
fn the_span<'a>(spans: &'a [Value], trace: &str, name: &str, kind: i64) -> &'a Value {
    let found: Vec<&Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == trace && s["name"] == name && s["kind"] == kind)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "spans `{name}` (kind {kind}) in trace {trace}: {spans:#?}"
    );
    found[0]
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

#[test]
fn a_federated_call_is_one_exported_trace_from_the_caller_to_the_upstream() {
    let python = otel_python();
    let env = Env::new();
    let spans_file = env.root().join("spans.jsonl");
    let (_receiver, port) = otlp_receiver(&python, &spans_file);
    let peer = repo().join("crates/toolgate-mcp-client/tests/peers/py_peer.py");
    std::fs::write(
        env.ws.join("toolgate.toml"),
        format!(
            "[telemetry]\nenabled = true\nendpoint = \"http://127.0.0.1:{port}\"\n\
             record_arguments = true\n\n\
             [[mcp.servers]]\nname = \"py\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\
             trusted = true\nrisk = {{ trace = \"read\" }}\n",
            python.display(),
            peer.display()
        ),
    )
    .expect("write config");
    let mut cmd = env.command();
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::null());
    let (mut served, addr) = serve(cmd);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = http_with(&addr, "GET", "/v1/tools", &[], None).body;
        if listed.to_string().contains("mcp__py__trace") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the tools never arrived: {listed}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let calls = [
        json!({
            "tool": "mcp__py__trace",
            "arguments": {"api_key": SECRET},
            "traceparent": format!("00-{TRACE}-{CALLER_SPAN}-01"),
        }),
        json!({
            "tool": "mcp__py__no_such_tool",
            "arguments": {},
            "traceparent": format!("00-{UNKNOWN_TRACE}-{UNKNOWN_CALLER_SPAN}-01"),
        }),
    ];
    let answers = peer_json(
        Command::new(&python)
            .arg(repo().join("crates/toolgate-cli/tests/peers/otel_client.py"))
            .args(["--url", &format!("http://{addr}")])
            .args(calls.iter().map(Value::to_string)),
    );
    assert_eq!(answers[0]["is_error"], json!(false), "{answers}");
    let upstream: Value =
        serde_json::from_str(answers[0]["text"].as_str().expect("the trace tool's text"))
            .expect("the trace tool's JSON");
    assert!(
        answers[1]["is_error"] == json!(true) || answers[1]["raised"].is_string(),
        "an unknown tool succeeded: {answers}"
    );

    // SIGTERM: toolgate sends the queued spans before it exits.
    served.terminate(Duration::from_secs(30));
    let text = std::fs::read_to_string(&spans_file).expect("the spans file");
    assert!(
        !text.contains(SECRET),
        "a span carries the secret argument: {text}"
    );
    let spans = spans_in(&spans_file);

    // Other methods are SERVER spans too: the client's tools/list, under its own trace.
    let listed = the_span(
        &spans,
        "5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e",
        "tools/list",
        SERVER,
    );
    assert_eq!(listed["parent_span_id"], "5ca1ab1e5ca1ab1e", "{listed:#}");
    assert_eq!(attr(listed, "mcp.method.name"), "tools/list");
    assert_eq!(attr(listed, "network.transport"), "tcp");

    // One trace, the caller's: SERVER → execute_tool → CLIENT → the upstream.
    let in_trace: Vec<&Value> = spans.iter().filter(|s| s["trace_id"] == TRACE).collect();
    assert_eq!(in_trace.len(), 3, "the caller's trace: {in_trace:#?}");
    let server = the_span(&spans, TRACE, "tools/call mcp__py__trace", SERVER);
    let execute = the_span(&spans, TRACE, "execute_tool mcp__py__trace", INTERNAL);
    let client = the_span(&spans, TRACE, "tools/call trace", CLIENT);
    assert_eq!(server["parent_span_id"], CALLER_SPAN, "{server:#}");
    assert_eq!(execute["parent_span_id"], server["span_id"], "{execute:#}");
    assert_eq!(client["parent_span_id"], execute["span_id"], "{client:#}");
    let client_span = client["span_id"].as_str().expect("a span id");
    assert_eq!(
        upstream["traceparent"],
        format!("00-{TRACE}-{client_span}-01"),
        "what the upstream received: {upstream}"
    );

    for span in [server, execute, client] {
        assert_eq!(span["resource"]["service.name"], "toolgate", "{span:#}");
        assert_eq!(
            attr(span, "gen_ai.operation.name"),
            "execute_tool",
            "{span:#}"
        );
        assert!(attr(span, "error.type").is_null(), "{span:#}");
        assert_ne!(span["status"], STATUS_ERROR, "{span:#}");
    }
    assert_eq!(attr(server, "gen_ai.tool.name"), "mcp__py__trace");
    assert_eq!(attr(server, "mcp.method.name"), "tools/call");
    assert_eq!(attr(server, "network.transport"), "tcp");
    assert!(attr(server, "jsonrpc.request.id").is_string(), "{server:#}");
    assert!(
        attr(server, "mcp.protocol.version").is_string(),
        "{server:#}"
    );

    assert_eq!(attr(execute, "gen_ai.tool.name"), "mcp__py__trace");
    assert_eq!(attr(execute, "gen_ai.tool.type"), "extension");
    assert!(
        attr(execute, "gen_ai.tool.call.id")
            .as_str()
            .is_some_and(|id| id.starts_with("call_")),
        "{execute:#}"
    );
    assert_eq!(attr(execute, "toolgate.risk"), "read");
    assert_eq!(attr(execute, "toolgate.policy.decision"), "allow");
    assert!(attr(execute, "toolgate.role").is_string(), "{execute:#}");
    assert!(
        attr(execute, "toolgate.principal").is_string(),
        "{execute:#}"
    );
    assert!(
        !execute["events"].as_array().expect("events").is_empty(),
        "no stage events: {execute:#}"
    );
    // record_arguments: the arguments are there, redacted like the audit.
    let recorded = attr(execute, "gen_ai.tool.call.arguments")
        .as_str()
        .unwrap_or_else(|| panic!("no recorded arguments: {execute:#}"));
    assert!(
        recorded.contains("api_key") && recorded.contains("[REDACTED]"),
        "{recorded}"
    );

    assert_eq!(attr(client, "gen_ai.tool.name"), "trace");
    assert_eq!(attr(client, "mcp.method.name"), "tools/call");
    assert_eq!(attr(client, "network.transport"), "pipe");
    assert_eq!(attr(client, "toolgate.mcp.server"), "py");
    assert!(attr(client, "jsonrpc.request.id").is_string(), "{client:#}");

    // The unknown tool: an execute_tool span that failed with the closed code.
    let unknown = the_span(
        &spans,
        UNKNOWN_TRACE,
        "execute_tool mcp__py__no_such_tool",
        INTERNAL,
    );
    assert_eq!(attr(unknown, "error.type"), "unknown_tool", "{unknown:#}");
    assert_eq!(unknown["status"], STATUS_ERROR, "{unknown:#}");
    let unknown_server = the_span(
        &spans,
        UNKNOWN_TRACE,
        "tools/call mcp__py__no_such_tool",
        SERVER,
    );
    assert_eq!(unknown_server["parent_span_id"], UNKNOWN_CALLER_SPAN);
    assert_eq!(unknown["parent_span_id"], unknown_server["span_id"]);
}

/// `toolgate token create --operator` → the token.
fn operator_token(env: &Env) -> String {
    let run = env.run(&[
        "token",
        "create",
        "--principal",
        "scraper",
        "--role",
        "default",
        "--operator",
    ]);
    run.assert_code(0);
    let token = run.stdout.trim().to_owned();
    assert!(token.starts_with("tg_"), "{token:?}");
    token
}

/// Prometheus on a free port with its own storage, scraping `jobs` (name → target, token);
/// the process and its address.
fn prometheus(dir: &Path, jobs: &[(&str, &str, Option<&str>)]) -> (Killed, String) {
    let version = Command::new("prometheus").arg("--version").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "prometheus is not on PATH: run scripts/test.sh, which installs Debian's prometheus ({version:?})"
    );
    let mut config =
        String::from("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n");
    for (job, target, token) in jobs {
        config.push_str(&format!(
            "  - job_name: {job}\n    metrics_path: /metrics\n    scrape_interval: 1s\n    \
             static_configs:\n      - targets: ['{target}']\n"
        ));
        if let Some(token) = token {
            config.push_str(&format!(
                "    authorization:\n      type: Bearer\n      credentials: {token}\n"
            ));
        }
    }
    let config_file = dir.join("prometheus.yml");
    std::fs::write(&config_file, config).expect("write prometheus.yml");
    let storage = dir.join("tsdb");
    let log = std::fs::File::create(dir.join("prometheus.log")).expect("prometheus.log");
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Killed(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!("--storage.tsdb.path={}", storage.display()))
            .arg(format!("--web.listen-address={addr}"))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn prometheus"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&addr).is_err() || get_text(&addr, "/-/ready", &[]).0 != 200
    {
        assert!(
            Instant::now() < deadline,
            "prometheus never got ready: {}",
            std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (child, addr)
}

/// Prometheus's API answer for `path`, asserting success.
fn prometheus_api(addr: &str, path: &str) -> Value {
    let (status, body) = get_text(addr, path, &[]);
    assert_eq!(status, 200, "{path}: {body}");
    let v: Value = serde_json::from_str(&body).expect("prometheus answers JSON");
    assert_eq!(v["status"], "success", "{v}");
    v["data"].clone()
}

#[test]
fn prometheus_scrapes_the_calls_made_with_an_operator_token_and_never_without() {
    let metrics_port = free_port();
    let env = Env::with_config(&format!(
        "[telemetry]\nmetrics_listen = \"127.0.0.1:{metrics_port}\"\n"
    ));
    let token = operator_token(&env);
    let bearer = format!("Bearer {token}");
    let mut cmd = env.command();
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::null());
    let (_served, addr) = serve(cmd);
    for _ in 0..4 {
        let answer = http_with(
            &addr,
            "POST",
            "/v1/calls",
            &[("Authorization", &bearer)],
            Some(&json!({"tool": "list_dir", "arguments": {}})),
        );
        assert_eq!(
            (answer.status, &answer.body["ok"]),
            (200, &json!(true)),
            "{}",
            answer.body
        );
    }
    // Toolgate's own answers: a token is needed on the main listener, none on metrics_listen.
    let (status, _) = get_text(&addr, "/metrics", &[]);
    assert_eq!(status, 401, "/metrics without a token");
    let (status, main) = get_text(&addr, "/metrics", &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{main}");
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let (status, separate) = get_text(&metrics_addr, "/metrics", &[]);
    assert_eq!(status, 200, "{separate}");
    let calls = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("toolgate_calls_total{"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(calls(&main), calls(&separate));
    assert!(
        calls(&main)
            .iter()
            .any(|l| l.contains("gen_ai_tool_name=\"list_dir\"")
                && l.contains("toolgate_outcome=\"ok\"")
                && l.ends_with(" 4")),
        "{main}"
    );

    let dir = tempfile::tempdir().expect("prometheus dir");
    let (_prometheus, prom) = prometheus(
        dir.path(),
        &[
            ("toolgate", &addr, Some(&token)),
            ("tokenless", &addr, None),
            ("metrics_listen", &metrics_addr, None),
        ],
    );
    let query =
        encode(r#"toolgate_calls_total{gen_ai_tool_name="list_dir",toolgate_outcome="ok"}"#);
    let deadline = Instant::now() + Duration::from_secs(60);
    let by_job = loop {
        let data = prometheus_api(&prom, &format!("/api/v1/query?query={query}"));
        let by_job: BTreeMap<String, String> = data["result"]
            .as_array()
            .expect("a vector")
            .iter()
            .map(|r| {
                (
                    r["metric"]["job"].as_str().unwrap_or_default().to_owned(),
                    r["value"][1].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        if by_job.len() >= 2 {
            break by_job;
        }
        assert!(
            Instant::now() < deadline,
            "prometheus has not scraped both targets in 60s: {data}\n{}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(
        by_job,
        BTreeMap::from([
            ("metrics_listen".to_owned(), "4".to_owned()),
            ("toolgate".to_owned(), "4".to_owned()),
        ]),
        "what prometheus scraped"
    );
    // The tokenless job's target is down with toolgate's 401.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let targets = prometheus_api(&prom, "/api/v1/targets");
        let health: BTreeMap<String, (String, String)> = targets["activeTargets"]
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| {
                (
                    t["labels"]["job"].as_str().unwrap_or_default().to_owned(),
                    (
                        t["health"].as_str().unwrap_or_default().to_owned(),
                        t["lastError"].as_str().unwrap_or_default().to_owned(),
                    ),
                )
            })
            .collect();
        let tokenless = &health.get("tokenless").cloned().unwrap_or_default();
        if tokenless.0 == "down" {
            assert!(tokenless.1.contains("401"), "{targets}");
            assert_eq!(health["toolgate"].0, "up", "{targets}");
            assert_eq!(health["metrics_listen"].0, "up", "{targets}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the tokenless scrape was never refused: {targets}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `toolgate EXTRA… serve` with `TOOLGATE_LOG=info` and stderr piped: once it has logged that
/// the broken MCP server is unavailable, a request with a wrong bearer token, then SIGTERM;
/// everything it wrote to stderr.
fn serve_logs(env: &Env, extra: &[&str]) -> String {
    let mut cmd = env.command();
    cmd.env("TOOLGATE_LOG", "info")
        .env_remove("TOOLGATE_LOG_FORMAT")
        .env_remove("NO_COLOR")
        .args(extra)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped());
    let (mut served, addr) = serve(cmd);
    let logged = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let logged = std::sync::Arc::clone(&logged);
        let stderr = served.0.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut all = logged.lock().expect("the log buffer");
                all.push_str(&line);
                all.push('\n');
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !logged
        .lock()
        .expect("the log buffer")
        .contains("MCP server unavailable")
    {
        assert!(
            Instant::now() < deadline,
            "the broken MCP server was never logged: {}",
            logged.lock().expect("the log buffer")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let answer = http_with(
        &addr,
        "GET",
        "/v1/me",
        &[("Authorization", "Bearer tg_secret_should_not_leak_123")],
        None,
    );
    assert_eq!(answer.status, 401, "{}", answer.body);
    served.terminate(Duration::from_secs(30));
    reader.join().expect("the stderr reader");
    std::mem::take(&mut *logged.lock().expect("the log buffer"))
}

#[test]
fn json_logs_are_json_lines_without_colour_or_tokens_and_piped_text_has_no_colour() {
    // A federated server that cannot start: something is surely logged.
    let env = Env::with_config(
        "[[mcp.servers]]\nname = \"broken\"\ncommand = \"/nonexistent/toolgate-test-mcp-server\"\n",
    );
    // A token exists, so the wrong one is refused rather than ignored.
    let _ = operator_token(&env);

    let json_logs = serve_logs(&env, &["--log-format", "json"]);
    let lines: Vec<&str> = json_logs.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "nothing was logged");
    for line in &lines {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}\n{json_logs}"));
        assert!(v["level"].is_string(), "no level: {line}");
        assert!(
            v["message"].is_string() || v["fields"]["message"].is_string(),
            "no message: {line}"
        );
    }
    assert!(
        !json_logs.contains("\x1b["),
        "colour in JSON logs: {json_logs:?}"
    );
    assert!(
        !json_logs.contains("tg_secret_should_not_leak_123"),
        "the bearer token was logged: {json_logs}"
    );

    let text_logs = serve_logs(&env, &[]);
    assert!(!text_logs.trim().is_empty(), "nothing was logged");
    assert!(
        !text_logs.contains("\x1b["),
        "colour in piped logs: {text_logs:?}"
    );
    assert!(
        !text_logs.contains("tg_secret_should_not_leak_123"),
        "the bearer token was logged: {text_logs}"
    );
}
