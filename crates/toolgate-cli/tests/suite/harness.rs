//! One temp directory per test holding a workspace (`ws/`) and a data dir (`data/`), and the
//! real `toolgate` binary run against them with both passed explicitly, stdin closed and the
//! `TOOLGATE_*` environment removed, so nothing waits for a terminal or leaks in from outside.
//!
//! Envelopes carry random call ids; [`Run::envelope`] checks the id's shape and replaces it with
//! [`CALL_ID`], so tests can compare whole envelopes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_toolgate");
/// `$USER` for every run, so principals (`cli:tester`) and approvers are predictable.
pub const USER: &str = "tester";
/// What [`Run::envelope`] puts in place of the call id.
pub const CALL_ID: &str = "<call_id>";

const CLEARED_ENV: [&str; 5] = [
    "TOOLGATE_WORKSPACE",
    "TOOLGATE_DATA_DIR",
    "TOOLGATE_CONFIG",
    "TOOLGATE_ROLE",
    "TOOLGATE_LOG",
];

pub struct Env {
    root: TempDir,
    pub ws: PathBuf,
    pub data: PathBuf,
}

/// A finished `toolgate` process.
#[derive(Debug)]
pub struct Run {
    /// The exit status; `-1` when the process died from a signal.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from_output(out: std::process::Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Stdout as one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:#?}"))
    }

    /// Stdout as an envelope, its call id checked and replaced by [`CALL_ID`].
    pub fn envelope(&self) -> Value {
        let mut v = self.json();
        let id = call_id(&v);
        assert!(is_call_id(&id), "call id `{id}` has the wrong shape");
        v["call_id"] = json!(CALL_ID);
        v
    }

    /// The exit code, asserting it is one of toolgate's own (never a panic's 101 or a signal).
    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "unexpected exit code: {self:#?}");
        assert!(!self.stderr.contains("panicked"), "a panic: {self:#?}");
        self
    }
}

/// `call_` and 32 hex digits (a UUIDv7 without dashes).
pub fn is_call_id(id: &str) -> bool {
    id.strip_prefix("call_")
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub fn call_id(envelope: &Value) -> String {
    envelope["call_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no call_id in {envelope}"))
        .to_owned()
}

/// `{"ok": false, "call_id": CALL_ID, "error": error}`.
pub fn failure(error: Value) -> Value {
    json!({"ok": false, "call_id": CALL_ID, "error": error})
}

/// `{"ok": true, "call_id": CALL_ID, "data": data}`.
pub fn success(data: Value) -> Value {
    json!({"ok": true, "call_id": CALL_ID, "data": data})
}

/// The approval id an `approval_required` envelope names.
pub fn approval_id(envelope: &Value) -> String {
    envelope["error"]["details"]["approval_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval id in {envelope}"))
        .to_owned()
}

/// The whole `approval_required` envelope for `id`; `expires_at_ms` is taken from `actual`
/// after checking it is a number.
pub fn approval_required(actual: &Value, tool: &str, id: &str, confirm: bool) -> Value {
    let expires = actual["error"]["details"]["expires_at_ms"].clone();
    assert!(expires.is_u64(), "expires_at_ms is not a number: {actual}");
    let flag = if confirm {
        format!(" --confirm {tool}")
    } else {
        String::new()
    };
    failure(json!({
        "code": "approval_required",
        "message": format!("`{tool}` needs approval: {id}"),
        "retryable": true,
        "hint": format!(
            "an operator approves with `toolgate approvals approve {id}{flag}`; then repeat the identical call"
        ),
        "details": {"approval_id": id, "expires_at_ms": expires, "requires_confirmation": confirm},
    }))
}

impl Env {
    /// `toolgate serve --listen 127.0.0.1:0` (stderr discarded), once it prints where it
    /// serves: the child and its `ADDR:PORT`.
    pub fn serve(&self) -> (std::process::Child, String) {
        self.serve_with(&self.data)
    }

    /// `toolgate serve` on this workspace with the data dir `data`: another replica.
    pub fn serve_with(&self, data: &Path) -> (std::process::Child, String) {
        let mut child = self
            .command_for(data)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn toolgate serve");
        let addr = serving_address(&mut child);
        (child, addr)
    }

    pub fn new() -> Env {
        let root = tempfile::tempdir().expect("temp dir");
        let base = root.path().canonicalize().expect("canonical temp dir");
        let ws = base.join("ws");
        std::fs::create_dir(&ws).expect("workspace dir");
        Env {
            root,
            ws,
            data: base.join("data"),
        }
    }

    /// A workspace whose `toolgate.toml` is `config`.
    pub fn with_config(config: &str) -> Env {
        let env = Env::new();
        std::fs::write(env.ws.join("toolgate.toml"), config).expect("write config");
        env
    }

    /// The temp dir holding `ws/` and `data/`; scratch space for tests.
    pub fn root(&self) -> PathBuf {
        self.ws.parent().expect("ws has a parent").to_path_buf()
    }

    /// The audit key's directory (`TOOLGATE_KEY_DIR` of every command).
    pub fn key_dir(&self) -> PathBuf {
        self.root().join("keys")
    }

    pub fn audit_path(&self) -> PathBuf {
        self.data.join("logs").join("tool-audit.jsonl")
    }

    /// `toolgate --workspace WS --data-dir DATA` with a clean environment and stdin closed.
    pub fn command(&self) -> Command {
        self.command_for(&self.data)
    }

    /// Like [`Env::command`] with another data dir.
    pub fn command_for(&self, data: &Path) -> Command {
        let mut cmd = bare_command(self.root.path());
        cmd.env("TOOLGATE_KEY_DIR", self.key_dir());
        cmd.arg("--workspace")
            .arg(&self.ws)
            .arg("--data-dir")
            .arg(data);
        cmd
    }

    /// Runs `toolgate <global flags> ARGS` to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.command().args(args).output().expect("spawn toolgate");
        Run::from_output(out)
    }

    /// `toolgate [PRE…] call TOOL --args JSON --no-prompt [POST…]`.
    pub fn call_with(&self, pre: &[&str], tool: &str, args: &Value, post: &[&str]) -> Run {
        let text = args.to_string();
        let mut all: Vec<&str> = pre.to_vec();
        all.extend(["call", tool, "--args", &text, "--no-prompt"]);
        all.extend(post);
        self.run(&all)
    }

    /// `toolgate call TOOL --args JSON --no-prompt`.
    pub fn call(&self, tool: &str, args: &Value) -> Run {
        self.call_with(&[], tool, args, &[])
    }

    /// Writes a workspace file, creating parent directories.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.ws.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create parents");
        }
        std::fs::write(path, content).expect("write workspace file");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.join(rel)).expect("read workspace file")
    }

    /// Every record of the audit JSONL file, parsed.
    pub fn audit_records(&self) -> Vec<Value> {
        audit_lines(&self.audit_path())
            .iter()
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }

    /// The outcome record of one call, read from the JSONL file.
    pub fn outcome_of(&self, call_id: &str) -> Value {
        let found: Vec<Value> = self
            .audit_records()
            .into_iter()
            .filter(|r| r["call_id"] == call_id && r["kind"] == "outcome")
            .collect();
        assert_eq!(found.len(), 1, "outcome records of {call_id}: {found:#?}");
        found.into_iter().next().expect("one record")
    }

    /// `approvals approve ID EXTRA…`, asserting it succeeded.
    pub fn approve(&self, id: &str, extra: &[&str]) -> Run {
        let mut args = vec!["approvals", "approve", id];
        args.extend(extra);
        let run = self.run(&args);
        run.assert_code(0);
        run
    }
}

/// `toolgate` run in `cwd` with no flags: a clean environment and stdin closed.
pub fn bare_command(cwd: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .env("USER", USER)
        .env("LOGNAME", USER);
    for var in CLEARED_ENV {
        cmd.env_remove(var);
    }
    // The audit key lives outside the workspace and data dir, in the user's config dir:
    // never the real one in tests.
    cmd.env_remove("TOOLGATE_KEY_DIR").env(
        "XDG_CONFIG_HOME",
        std::env::temp_dir().join("toolgate-cli-tests-config"),
    );
    // Nor the user's model cache or hub: a test that pulls names its own.
    cmd.env(
        "TOOLGATE_MODEL_CACHE",
        std::env::temp_dir().join("toolgate-cli-tests-no-models"),
    )
    .env_remove("HF_ENDPOINT");
    cmd
}

/// The lines of an audit file.
pub fn audit_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read audit log")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Copies a directory tree (the data dir, for tampering with a copy).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy file");
        }
    }
}

/// One HTTP/1.1 request on a fresh connection; the body of the answer (chunked or not).
pub fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let answer = http_with(addr, method, path, &[], body);
    (answer.status, answer.body)
}

/// An answer of [`http_with`]: status, headers (names lowercased), JSON body (`Null` if none).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as text (`Null` in `body` when it is not JSON).
    pub text: String,
}

impl Answer {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Like [`http`], with extra request headers, and the answer's headers kept.
pub fn http_with(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let extra: String = headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, mut rest) = raw.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut text = String::new();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            text.push_str(&after[..n]);
            rest = &after[n + 2..];
        }
    } else {
        text.push_str(rest);
    }
    Answer {
        status,
        headers,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    }
}

/// Runs a test peer that prints one JSON document: fails the test with the peer's stderr
/// when it exits unsuccessfully, else the document.
pub fn peer_json(command: &mut std::process::Command) -> Value {
    let out = command.output().expect("run the test peer");
    assert!(
        out.status.success(),
        "the peer failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the peer printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The Python of the test peers (`.venv`, installed by `scripts/test.sh`), or a panic that
/// says how to get it.
pub fn peer_python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh, which installs the Python peers",
        python.display()
    );
    python
}

/// The `ADDR:PORT` a `toolgate serve` child (stdout piped) prints on its first line.
pub fn serving_address(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the serving line");
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .trim_end_matches('/')
        .to_owned()
}
