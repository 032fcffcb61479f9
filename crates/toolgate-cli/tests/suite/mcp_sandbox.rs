//! MCP servers in the OS sandbox, end to end through the `toolgate` binary: a `sandbox`
//! table's grants, the default confinement (no secret, no data dir, no audit key, no
//! inherited descriptor) and network only through the egress proxy (`npx -y` with only its
//! registry, configured or by the package runner's preset).

use std::path::Path;

use serde_json::{Value, json};

use super::harness::Env;
use super::mcp::{node, server};

/// `sandbox = {…}` on a stdio server: the shell tool's sandbox (the namespace view, Landlock,
/// seccomp) confines it.
/// server-filesystem is told it may use `a` and `b`; the sandbox lets it write `a` only.
#[test]
fn a_sandboxed_server_cannot_write_outside_its_writable_dir() {
    let env = Env::new();
    for dir in ["a", "b"] {
        std::fs::create_dir(env.ws.join(dir)).unwrap();
    }
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    let config = format!(
        "[roles.ci]\nwrite = \"allow\"\ndangerous = \"allow\"\n\n\
         [[mcp.servers]]\nname = \"files\"\ncommand = \"{}\"\nargs = [\"{}\", \"{}\", \"{}\"]\n\
         sandbox = {{ writable = [\"a\"], readable = [\"{}\"] }}\n",
        node(),
        server("server-filesystem"),
        env.ws.join("a").display(),
        env.ws.join("b").display(),
        peers.canonicalize().unwrap().display(),
    );
    std::fs::write(env.ws.join("toolgate.toml"), config).unwrap();
    let write = |dir: &str| {
        let path = env.ws.join(dir).join("note.txt");
        env.call_with(
            &["--role", "ci"],
            "mcp__files__write_file",
            &json!({"path": path, "content": "from the sandbox"}),
            &[],
        )
    };
    write("a").assert_code(0);
    assert_eq!(env.read("a/note.txt"), "from the sandbox");
    let refused = write("b");
    refused.assert_code(2);
    let error = &refused.json()["error"];
    assert_eq!(error["code"], json!("execution_failed"));
    // `b` does not exist in the server's view: it dropped it from its allowed directories
    // at start (were it there, the write would fail with EACCES).
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("EACCES: permission denied")
            || message.contains("path outside allowed directories"),
        "{refused:#?}"
    );
    assert!(!env.ws.join("b/note.txt").exists());
}

/// A sandboxed server starts from an empty environment: only PATH, LANG, LC_ALL and its own
/// `env` table reach it, never toolgate's secrets.
#[test]
fn a_sandboxed_server_does_not_inherit_the_environment() {
    let env = Env::new();
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    let config = format!(
        "[roles.ci]\nwrite = \"allow\"\n\n\
         [[mcp.servers]]\nname = \"everything\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\
         env = {{ GIVEN = \"yes\" }}\nsandbox = {{ readable = [\"{}\"] }}\n",
        node(),
        server("server-everything"),
        peers.canonicalize().unwrap().display(),
    );
    std::fs::write(env.ws.join("toolgate.toml"), config).unwrap();
    let run = env
        .command()
        .env("TOOLGATE_TEST_SECRET", "sk-do-not-leak")
        .args([
            "--role",
            "ci",
            "call",
            "mcp__everything__get-env",
            "--no-prompt",
        ])
        .output()
        .unwrap();
    let run = super::harness::Run::from_output(run);
    run.assert_code(0);
    let text = run.json()["data"].as_str().unwrap_or_default().to_owned();
    let vars: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("get-env returned no JSON ({e}): {run:#?}"));
    let mut names: Vec<&str> = vars
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    assert!(
        names.contains(&"GIVEN") && names.contains(&"PATH"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"TOOLGATE_TEST_SECRET") && !names.contains(&"USER"),
        "{names:?}"
    );
    // Its writable directory defaults to a state directory of its own in the data dir.
    assert!(env.data.join("mcp/everything").is_dir());
}

/// Issue 12, item 8: a stdio server without a `sandbox` key is confined by default. It
/// inherits no secret from toolgate's environment, and cannot read toolgate's data dir
/// even when it is told to serve a tree that holds it.
#[test]
fn a_server_without_a_sandbox_key_is_confined_and_sees_no_secret() {
    let env = Env::new();
    let base = env.ws.parent().unwrap().to_path_buf();
    let config = format!(
        "[roles.ci]\nwrite = \"allow\"\n\n\
         [[mcp.servers]]\nname = \"files\"\ncommand = \"{node}\"\nargs = [\"{files}\", \"{base}\"]\n\n\
         [[mcp.servers]]\nname = \"everything\"\ncommand = \"{node}\"\nargs = [\"{everything}\", \"stdio\"]\n",
        node = node(),
        files = server("server-filesystem"),
        everything = server("server-everything"),
        base = base.display(),
    );
    std::fs::write(env.ws.join("toolgate.toml"), config).unwrap();
    let call = |tool: &str, args: &Value| {
        let run = env
            .command()
            .env("TOOLGATE_TEST_SECRET", "sk-do-not-leak")
            .args(["--role", "ci", "call", tool, "--no-prompt", "--args"])
            .arg(args.to_string())
            .output()
            .unwrap();
        super::harness::Run::from_output(run)
    };
    let vars = call("mcp__everything__get-env", &json!({}));
    let text = vars.json()["data"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains("PATH"), "{vars:#?}");
    assert!(!text.contains("sk-do-not-leak"), "{vars:#?}");

    let db = env.data.join("toolgate.db");
    let read = call("mcp__files__read_text_file", &json!({ "path": db }));
    assert!(db.is_file());
    assert!(
        !read.stdout.contains("SQLite format"),
        "the server read toolgate.db: {read:#?}"
    );
    let write = call(
        "mcp__files__write_file",
        &json!({ "path": env.data.join("planted"), "content": "x" }),
    );
    assert!(!env.data.join("planted").exists(), "{write:#?}");

    // Issue 29: the tree it serves holds the audit key's directory too (as `$HOME` holds
    // `~/.config/toolgate/keys`); whoever reads the key can forge the log.
    let keys: Vec<_> = std::fs::read_dir(env.key_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    assert!(
        !keys.is_empty(),
        "no audit key in {}",
        env.key_dir().display()
    );
    for key in keys {
        let secret = std::fs::read(&key).unwrap();
        let read = call("mcp__files__read_text_file", &json!({ "path": key }));
        let head = String::from_utf8_lossy(&secret[..secret.len().min(16)]).into_owned();
        assert!(
            head.trim().is_empty() || !read.stdout.contains(head.trim()),
            "the server read the audit key {}: {read:#?}",
            key.display()
        );
        assert_ne!(read.json()["ok"], json!(true), "{read:#?}");
    }
}

/// A stdio MCP server answering one tool, `probe`, with what it finds on descriptor 7.
const FD_PROBE_SERVER: &str = r#"
import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"].get("protocolVersion", "2025-11-25"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "fd", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "probe", "inputSchema": {"type": "object"},
                             "annotations": {"readOnlyHint": True}}]}
    elif method == "tools/call":
        try:
            seen = os.read(7, 100).decode(errors="replace")
        except OSError as e:
            seen = "closed: " + e.strerror
        result = {"content": [{"type": "text", "text": seen}]}
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                     "error": {"code": -32601, "message": "no"}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"#;

/// A descriptor toolgate's caller left open (`7<secret`) never reaches an MCP server — not
/// even one with `sandbox = "off"`, spawned directly (issue 12, item 7).
#[test]
fn an_mcp_server_inherits_no_descriptor_from_toolgates_caller() {
    let env = Env::new();
    let script = env.root().join("fd_probe.py");
    std::fs::write(&script, FD_PROBE_SERVER).unwrap();
    let secret = env.root().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-ON-FD-7").unwrap();
    std::fs::write(
        env.ws.join("toolgate.toml"),
        format!(
            "[roles.fd]\ntools = [\"mcp__fd__*\"]\n\n[[mcp.servers]]\nname = \"fd\"\n\
             command = \"python3\"\nargs = [\"{}\"]\nsandbox = \"off\"\nrisk = {{ probe = \"read\" }}\n",
            script.display()
        ),
    )
    .unwrap();
    // The shell opens descriptor 7 without close-on-exec and execs toolgate with it.
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", "exec 7<\"$0\"; exec \"$@\""])
        .arg(&secret)
        .arg(super::harness::BIN)
        .args(["--workspace"])
        .arg(&env.ws)
        .arg("--data-dir")
        .arg(&env.data)
        .args(["--role", "fd", "call", "mcp__fd__probe", "--args", "{}"])
        .env("TOOLGATE_KEY_DIR", env.key_dir())
        .env_remove("TOOLGATE_CONFIG")
        .env_remove("TOOLGATE_ROLE")
        .current_dir(env.root())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("TOP-SECRET"), "{stdout}");
    assert!(
        stdout.contains("closed: Bad file descriptor"),
        "{stdout}\n{out:?}"
    );
}

/// Issue 29: an `npx -y` MCP server starts inside the sandbox with network only through
/// toolgate's egress proxy and only its registry allowed — configured, or by the package
/// runner's preset without a `sandbox` key (issue 33); every connection it made is in the
/// audit, and with another allowlist the same server cannot fetch its package.
#[test]
fn an_npx_server_starts_through_the_egress_proxy_with_only_its_registry() {
    // `[egress] allow_hosts`: on machines where the registry is reached through an
    // interception address (a documentation range here), the SSRF guard must be told.
    let config = |allow: &str| {
        format!(
            "[egress]\nallow_hosts = [\"registry.npmjs.org\"]\n\n\
             [[mcp.servers]]\nname = \"everything\"\ncommand = \"npx\"\n\
             args = [\"-y\", \"@modelcontextprotocol/server-everything@2026.8.31\", \"stdio\"]\n\
             startup_timeout = \"180s\"\nsandbox = {{ egress = [\"{allow}\"] }}\n"
        )
    };
    let env = Env::with_config(&config("registry.npmjs.org"));
    let status = env.run(&["mcp", "status", "--json"]);
    status.assert_code(0);
    assert_eq!(
        (&status.json()[0]["state"], &status.json()[0]["tools"]),
        (&json!("ready"), &json!(14)),
        "{status:#?}"
    );
    let egress = egress_records(&env);
    assert!(!egress.is_empty(), "no egress connection was audited");
    for record in &egress {
        assert_eq!(
            (
                &record["principal"],
                &record["arguments"]["host"],
                &record["outcome"]
            ),
            (
                &json!("sandbox:mcp:everything"),
                &json!("registry.npmjs.org"),
                &json!("ok")
            ),
            "{record:#}"
        );
    }

    // Without a `sandbox` key the package runner's preset allows its registry only.
    let env = Env::with_config(&config("x").replace("sandbox = { egress = [\"x\"] }\n", ""));
    let status = env.run(&["mcp", "status", "--json"]);
    assert_eq!(status.json()[0]["state"], json!("ready"), "{status:#?}");
    assert!(
        egress_records(&env)
            .iter()
            .all(|r| r["arguments"]["host"] == json!("registry.npmjs.org")),
        "{:#?}",
        egress_records(&env)
    );

    let env = Env::with_config(&config("example.com"));
    let status = env.run(&["mcp", "status", "--json"]);
    assert_ne!(status.json()[0]["state"], json!("ready"), "{status:#?}");
    let egress = egress_records(&env);
    assert!(
        egress.iter().any(|r| r["outcome"] == json!("policy_denied")
            && r["arguments"]["host"] == json!("registry.npmjs.org")),
        "{egress:#?}"
    );
    assert!(
        egress.iter().all(|r| r["outcome"] != json!("ok")),
        "{egress:#?}"
    );
}

/// The audit's `egress` records.
fn egress_records(env: &Env) -> Vec<Value> {
    std::fs::read_to_string(env.audit_path())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["tool"] == json!("egress"))
        .collect()
}
