//! `toolgate audit tail | query` print any record, however wide its fields (issue 12,
//! item 10: a column wider than 65,535 characters made the table formatting panic).

use serde_json::json;

use super::harness::Env;

#[test]
fn tail_and_query_print_records_with_huge_fields() {
    let env = Env::new();
    let huge = "t".repeat(70_000);
    // An unknown tool is audited under the name it was called by.
    let run = env.call(&huge, &json!({}));
    assert_ne!(run.code, 0);
    env.call("read_file", &json!({"path": "missing.txt"}));
    for args in [
        vec!["audit", "tail"],
        vec!["audit", "query"],
        vec!["audit", "query", "--tool", &huge],
    ] {
        let run = env.run(&args);
        run.assert_code(0);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        let widest = run.stdout.lines().map(|l| l.chars().count()).max();
        assert!(
            widest.is_some_and(|w| w < 400),
            "{widest:?}: {:.300}",
            run.stdout
        );
        assert!(run.stdout.contains("ttt"), "{:.300}", run.stdout);
    }
    // JSON output keeps whatever the log holds.
    let run = env.run(&["audit", "tail", "--json"]);
    run.assert_code(0);
}

/// Three audited calls on the real (anchored) data dir.
fn three_calls() -> Env {
    let env = Env::new();
    for i in 0..3 {
        env.write(&format!("f{i}.txt"), "x\n");
        env.call("read_file", &json!({"path": format!("f{i}.txt")}))
            .assert_code(0);
    }
    env
}

fn verify_json(env: &Env) -> (i32, serde_json::Value) {
    let run = env.run(&["audit", "verify", "--json"]);
    let code = run.code;
    (code, run.json())
}

/// sha256 chain line for `record` at `seq` after `prev`, as someone without the key makes it.
fn forge(record: &serde_json::Value, seq: u64, prev: &str) -> (String, String) {
    use sha2::{Digest, Sha256};
    let mut rec = record.clone();
    for k in ["hash", "mac", "seq", "prev"] {
        rec.as_object_mut().map(|m| m.remove(k));
    }
    let body = rec.to_string();
    let rest = format!("\"seq\":{seq},\"prev\":\"{prev}\",{}", &body[1..]);
    let hash = hex::encode(Sha256::digest(rest.as_bytes()));
    (format!("{{\"hash\":\"{hash}\",{rest}\n"), hash)
}

fn first_bad_seq(v: &serde_json::Value) -> Option<u64> {
    v["first_bad"]["seq"].as_u64()
}

#[test]
fn forging_cutting_or_deleting_the_log_exits_4() {
    // A forged appended record (seq, prev and hash recomputed).
    let env = three_calls();
    let (code, v) = verify_json(&env);
    assert_eq!(
        (code, v["ok"].clone(), v["anchored"].clone()),
        (0, json!(true), json!(3))
    );
    let records = env.audit_records();
    let last = records.last().unwrap();
    let (line, _) = forge(last, 4, last["hash"].as_str().unwrap());
    let mut text = std::fs::read_to_string(env.audit_path()).unwrap();
    text.push_str(&line);
    std::fs::write(env.audit_path(), &text).unwrap();
    let (code, v) = verify_json(&env);
    assert_eq!((code, first_bad_seq(&v)), (4, Some(4)), "{v}");

    // A rehashed chain with the SQLite index deleted.
    let env = three_calls();
    let mut prev = "0".repeat(64);
    let mut text = String::new();
    for (i, rec) in env.audit_records().iter().enumerate() {
        let mut rec = rec.clone();
        if i == 1 {
            rec["principal"] = json!("mallory");
        }
        let (line, hash) = forge(&rec, i as u64 + 1, &prev);
        text.push_str(&line);
        prev = hash;
    }
    std::fs::write(env.audit_path(), &text).unwrap();
    std::fs::remove_file(env.data.join("toolgate.db")).unwrap();
    let (code, v) = verify_json(&env);
    assert_eq!((code, first_bad_seq(&v)), (4, Some(1)), "{v}");

    // The log deleted.
    let env = three_calls();
    std::fs::remove_file(env.audit_path()).unwrap();
    let (code, v) = verify_json(&env);
    assert_eq!((code, first_bad_seq(&v)), (4, Some(1)), "{v}");
    // … and not silently started afresh by the next call.
    assert_ne!(env.call("read_file", &json!({"path": "f0.txt"})).code, 0);
    assert!(!env.audit_path().exists());

    // The last record cut off, with the index deleted.
    let env = three_calls();
    let text = std::fs::read_to_string(env.audit_path()).unwrap();
    let cut: String = text.split_inclusive('\n').take(2).collect();
    std::fs::write(env.audit_path(), cut).unwrap();
    std::fs::remove_file(env.data.join("toolgate.db")).unwrap();
    let (code, v) = verify_json(&env);
    assert_eq!((code, first_bad_seq(&v)), (4, Some(3)), "{v}");
}

#[test]
fn an_edited_last_line_exits_4_and_is_kept_as_it_is() {
    let env = three_calls();
    let text = std::fs::read_to_string(env.audit_path()).unwrap();
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    let last = lines.pop().unwrap().replacen("read_file", "reed_file", 1);
    lines.push(last);
    let edited = lines.concat();
    std::fs::write(env.audit_path(), &edited).unwrap();
    let (code, v) = verify_json(&env);
    assert_eq!((code, first_bad_seq(&v)), (4, Some(3)), "{v}");
    // Opening the log (any call) refuses instead of "repairing" the evidence away.
    let run = env.call("read_file", &json!({"path": "f0.txt"}));
    assert_ne!(run.code, 0);
    assert_eq!(std::fs::read_to_string(env.audit_path()).unwrap(), edited);
    let (code, _) = verify_json(&env);
    assert_eq!(code, 4);
}

#[test]
fn the_audit_key_is_private_and_outside_the_data_dir() {
    use std::os::unix::fs::PermissionsExt;
    let env = three_calls();
    let key = env.key_dir().join("audit.key");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&key), mode(&env.key_dir())), (0o600, 0o700));
    assert!(env.audit_records().iter().all(|r| r["mac"].is_string()));
    // A key dir inside the data dir is refused.
    let run = {
        let mut cmd = env.command();
        cmd.env("TOOLGATE_KEY_DIR", env.data.join("keys"));
        cmd.args([
            "call",
            "read_file",
            "--args",
            r#"{"path":"f0.txt"}"#,
            "--no-prompt",
        ]);
        super::harness::Run::from_output(cmd.output().unwrap())
    };
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("audit key directory"), "{}", run.stderr);
}

/// Issue 30, 30.25: a caller's tool name and arguments carrying ESC, CR and RLO were printed
/// raw by `audit tail`/`query`, so a record could repaint the operator's terminal. Shown as
/// markers now; `--json` stays exact.
#[test]
fn tail_and_query_show_terminal_escapes_as_markers() {
    let env = Env::new();
    let name = "x\u{1b}[2J\rrm -rf\u{202e}fdp";
    let run = env.call(name, &json!({}));
    assert_ne!(run.code, 0);
    env.call(
        "read_file",
        &json!({"path": "\u{1b}]0;owned\u{7}\r\u{202e}.txt"}),
    );
    for args in [vec!["audit", "tail"], vec!["audit", "query"]] {
        let run = env.run(&args);
        run.assert_code(0);
        for bad in ['\u{1b}', '\r', '\u{202e}', '\u{7}'] {
            assert!(
                !run.stdout.contains(bad),
                "{args:?} printed {bad:?}: {:?}",
                run.stdout
            );
        }
        assert!(
            run.stdout.contains("x⟨ESC⟩[2J⟨CR⟩rm -rf⟨U+202E⟩fdp"),
            "{:?}",
            run.stdout
        );
    }
    let json = env.run(&["audit", "query", "--json"]);
    json.assert_code(0);
    assert!(json.stdout.contains('\u{202e}'), "--json must stay exact");
    let tools: Vec<String> = serde_json::from_str::<serde_json::Value>(&json.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["tool"].as_str().map(str::to_owned))
        .collect();
    assert!(tools.iter().any(|t| t == name), "{tools:?}");
}

/// Issue 30, 30.26: `audit verify --file /dev/zero` read one endless line into memory.
/// A device, a pipe or a directory is refused before anything is read.
#[test]
fn verify_file_refuses_what_is_not_a_regular_file() {
    let env = Env::new();
    for file in ["/dev/zero", "/dev/stdin", "/"] {
        let mut child = env
            .command()
            .args(["audit", "verify", "--file", file])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut waited = 0;
        while child.try_wait().unwrap().is_none() && waited < 300 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            waited += 1;
        }
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            panic!("`audit verify --file {file}` still reading after 30 s");
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{file}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("is not a regular file"),
            "{file}: {out:?}"
        );
    }
}

/// Issue 30, 30.25: a server's tool description with ESC, CR and RLO was printed raw by
/// `tools list` and `tools show`. Marked now; `--json` keeps the description exact.
#[test]
fn tools_list_and_show_mark_a_descriptions_terminal_escapes() {
    let env = Env::new();
    let description = "Adds.\u{1b}]0;owned\u{7}\u{1b}[2J\rIGNORE\u{202e}exe.txt";
    let server = env.root().join("escapes.py");
    std::fs::write(
        &server,
        format!(
            r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    m = msg.get("method")
    if m == "initialize":
        r = {{"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "esc", "version": "1"}}}}
    elif m == "tools/list":
        r = {{"tools": [{{"name": "add", "description": {}, "inputSchema": {{"type": "object"}}}}]}}
    else:
        sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "error": {{"code": -32601, "message": "no"}}}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": r}}) + "\n")
    sys.stdout.flush()
"#,
            serde_json::to_string(description).unwrap()
        ),
    )
    .unwrap();
    std::fs::write(
        env.ws.join("toolgate.toml"),
        format!(
            "[[mcp.servers]]\nname = \"esc\"\ncommand = \"python3\"\nargs = [\"{}\"]\n\
             protocol = \"2025-11-25\"\nsandbox = \"off\"\n",
            server.display()
        ),
    )
    .unwrap();
    for args in [
        vec!["tools", "list"],
        vec!["tools", "show", "mcp__esc__add"],
    ] {
        let run = env.run(&args);
        run.assert_code(0);
        for bad in ['\u{1b}', '\r', '\u{202e}', '\u{7}'] {
            assert!(
                !run.stdout.contains(bad),
                "{args:?} printed {bad:?}: {:?}",
                run.stdout
            );
        }
        assert!(
            run.stdout.contains("Adds.⟨ESC⟩]0;owned⟨U+0007⟩"),
            "{args:?}: {:?}",
            run.stdout
        );
    }
    let json = env.run(&["tools", "show", "mcp__esc__add", "--json"]);
    json.assert_code(0);
    assert_eq!(json.json()["description"], serde_json::json!(description));
}
