//! Replicas of `toolgate serve` sharing one PostgreSQL store (issue 15), run as users run
//! them: two processes, each with its own data dir, the same `[store] url` (a scratch schema
//! on the test server, `toolgate_testkit::pg`).
//!
//! - an approval asked on replica A is decided through replica B's API, and A's waiting call
//!   proceeds;
//! - an approval outlives the replica that asked: A is killed, the decision is taken on B,
//!   the identical call re-sent to B proceeds, once;
//! - two concurrent calls with one idempotency key, one per replica, act once;
//! - a result offloaded on A is paged by `read_result` on B;
//! - a 2025-11-25 MCP session opened on A continues on B;
//! - one `audit verify` checks both replicas' chains after load, with A SIGKILLed while it
//!   was answering write calls: every acknowledged call has its records; an export verifies,
//!   and fails once a line is removed;
//! - `toolgate store status|migrate`, two replicas migrating together, and a binary older
//!   than the schema refusing to start;
//! - a replica that loses PostgreSQL (a proxy the test cuts) refuses what needs the store with
//!   `unavailable`, is reported not ready, and recovers by itself when the database returns.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_testkit::pg::Scratch;

use super::harness::{Env, http, peer_json};

fn scratch() -> Scratch {
    runtime().block_on(Scratch::new())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A cluster's configuration: the shared store, and a loopback caller acting in `role` as an
/// operator (so one test client can call and decide).
fn cluster_config(url: &str, role: &str, extra: &str) -> String {
    format!(
        "[store]\nurl = \"{url}\"\n\n[server.anonymous]\nrole = \"{role}\"\noperator = true\n\n{extra}"
    )
}

struct Replica {
    child: Child,
    addr: String,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn replica(env: &Env, data: &Path) -> Replica {
    let (child, addr) = env.serve_with(data);
    Replica { child, addr }
}

/// The pending approvals `at` lists, polled until one for `tool` appears.
fn wait_for_pending(at: &str, tool: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, listed) = http(at, "GET", "/v1/approvals", None);
        assert_eq!(status, 200, "{listed}");
        if let Some(found) = listed
            .as_array()
            .and_then(|a| a.iter().find(|r| r["tool"] == tool).cloned())
        {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no pending {tool} approval on {at}: {listed}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_approval_asked_on_one_replica_is_decided_on_another_and_the_call_proceeds() {
    let db = scratch();
    // A minute between re-reads: only the change feed (NOTIFY) can wake the waiting call in
    // time for the test.
    let env = Env::with_config(&cluster_config(
        db.url(),
        "default",
        "[approvals]\nwait = true\npoll_millis = 60000\n",
    ));
    let a = replica(&env, &env.root().join("data-a"));
    let b = replica(&env, &env.root().join("data-b"));
    let caller = a.addr.clone();
    let call = std::thread::spawn(move || {
        let body = json!({
            "tool": "write_file",
            "arguments": {"path": "from-a.md", "content": "decided on b"},
            "wait_for_approval": true,
        });
        let (status, envelope) = http(&caller, "POST", "/v1/calls", Some(&body));
        (status, envelope, Instant::now())
    });
    // B lists the request A created: one table for the whole cluster.
    let pending = wait_for_pending(&b.addr, "write_file");
    let id = pending["id"].as_str().unwrap().to_owned();
    let (status, decided) = http(
        &b.addr,
        "POST",
        &format!("/v1/approvals/{id}/decision"),
        Some(&json!({"approve": true, "reason": "from replica b"})),
    );
    let decided_at = Instant::now();
    assert_eq!(status, 200, "{decided}");
    let (status, envelope, returned_at) = call.join().unwrap();
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["ok"], json!(true), "{envelope}");
    assert_eq!(env.read("from-a.md"), "decided on b");
    // Woken by the change feed, not by the minute-long re-read (a behaviour, not a speed:
    // measured, it is a few milliseconds).
    let waited = returned_at.saturating_duration_since(decided_at);
    assert!(
        waited < Duration::from_secs(30),
        "the call waited {waited:?} after the decision"
    );
    // And A sees it decided.
    let (_, on_a) = http(&a.addr, "GET", &format!("/v1/approvals/{id}"), None);
    assert_eq!(on_a["status"], json!("approved"), "{on_a}");
    assert_eq!(on_a["consumed"], json!(true), "{on_a}");
}

#[test]
fn an_approval_outlives_the_replica_that_asked_and_lets_one_call_through() {
    let db = scratch();
    let env = Env::with_config(&cluster_config(db.url(), "default", ""));
    let call = json!({
        "tool": "write_file",
        "arguments": {"path": "survivor.md", "content": "once"},
        "wait_for_approval": false,
    });
    let id = {
        let a = replica(&env, &env.root().join("data-a"));
        let (status, asked) = http(&a.addr, "POST", "/v1/calls", Some(&call));
        assert_eq!(status, 200, "{asked}");
        assert_eq!(
            asked["error"]["code"],
            json!("approval_required"),
            "{asked}"
        );
        asked["error"]["details"]["approval_id"]
            .as_str()
            .unwrap()
            .to_owned()
        // A is killed here.
    };
    let b = replica(&env, &env.root().join("data-b"));
    let (status, decided) = http(
        &b.addr,
        "POST",
        &format!("/v1/approvals/{id}/decision"),
        Some(&json!({"approve": true})),
    );
    assert_eq!(status, 200, "{decided}");
    let (_, first) = http(&b.addr, "POST", "/v1/calls", Some(&call));
    assert_eq!(first["ok"], json!(true), "{first}");
    assert_eq!(env.read("survivor.md"), "once");
    // Consumed: the same call again asks afresh.
    let (_, second) = http(&b.addr, "POST", "/v1/calls", Some(&call));
    assert_eq!(
        second["error"]["code"],
        json!("approval_required"),
        "{second}"
    );
    assert_ne!(
        second["error"]["details"]["approval_id"],
        json!(id),
        "{second}"
    );
}

#[test]
fn one_idempotency_key_acts_once_across_two_replicas() {
    let db = scratch();
    let env = Env::with_config(&cluster_config(
        db.url(),
        "worker",
        "[roles.worker]\nwrite = \"allow\"\ndangerous = \"allow\"\n\
         rules = [{ tool = \"shell\", decision = \"allow\", confirm = false }]\n",
    ));
    let a = replica(&env, &env.root().join("data-a"));
    let b = replica(&env, &env.root().join("data-b"));
    for round in 0..3 {
        let body = json!({
            "tool": "shell",
            "arguments": {"command": format!("sleep 0.4; echo run >> runs-{round}.txt; echo done")},
            "idempotency_key": format!("deploy-{round}"),
        });
        let calls: Vec<_> = [
            a.addr.clone(),
            b.addr.clone(),
            a.addr.clone(),
            b.addr.clone(),
        ]
        .into_iter()
        .map(|at| {
            let body = body.clone();
            std::thread::spawn(move || http(&at, "POST", "/v1/calls", Some(&body)).1)
        })
        .collect();
        let envelopes: Vec<Value> = calls.into_iter().map(|c| c.join().unwrap()).collect();
        for e in &envelopes {
            assert_eq!(e["ok"], json!(true), "{e}");
        }
        assert_eq!(
            env.read(&format!("runs-{round}.txt")),
            "run\n",
            "round {round}: the command ran more than once: {envelopes:?}"
        );
        let datas: Vec<&Value> = envelopes.iter().map(|e| &e["data"]).collect();
        assert!(datas.windows(2).all(|w| w[0] == w[1]), "{datas:?}");
    }
}

#[test]
fn a_result_offloaded_on_one_replica_is_read_on_another() {
    let db = scratch();
    let env = Env::with_config(&cluster_config(
        db.url(),
        "readonly",
        "[limits]\nresult_budget_bytes = 100\n",
    ));
    let content: String = (0..5000u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    env.write("five.txt", &content);
    let a = replica(&env, &env.root().join("data-a"));
    let b = replica(&env, &env.root().join("data-b"));
    let call = json!({"tool": "read_file", "arguments": {"path": "five.txt"}});
    let (_, first) = http(&a.addr, "POST", "/v1/calls", Some(&call));
    let id = first["truncated"]["result_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no result id: {first}"))
        .to_owned();
    let total = first["truncated"]["total_bytes"].as_u64().unwrap();
    let mut text = String::new();
    let mut offset = 0u64;
    loop {
        let page = json!({"tool": "read_result", "arguments": {"id": id, "offset": offset, "limit": 1000}});
        let (_, got) = http(&b.addr, "POST", "/v1/calls", Some(&page));
        assert_eq!(got["ok"], json!(true), "{got}");
        text.push_str(got["data"]["text"].as_str().unwrap());
        match got["data"]["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(text.len() as u64, total);
    assert!(
        text.starts_with(&first["data"].as_str().unwrap()[..100]),
        "{text}"
    );
    assert!(text.contains(&content[..200]));
}

#[test]
fn an_mcp_session_opened_on_one_replica_continues_on_another() {
    let db = scratch();
    let env = Env::with_config(&cluster_config(db.url(), "readonly", ""));
    let a = replica(&env, &env.root().join("data-a"));
    let b = replica(&env, &env.root().join("data-b"));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    let seen = peer_json(
        std::process::Command::new(&python)
            .arg(repo.join("crates/toolgate-cli/tests/peers/session_move_client.py"))
            .args(["--a", &format!("http://{}/mcp", a.addr)])
            .args(["--b", &format!("http://{}/mcp", b.addr)])
            .args(["--tool", "list_dir"]),
    );
    assert!(
        seen["listed"]
            .as_array()
            .unwrap()
            .contains(&json!("list_dir")),
        "{seen}"
    );
    assert_eq!(seen["called"]["isError"], json!(false), "{seen}");
    // Ended on B: gone for the cluster.
    assert_eq!(seen["deleted"], json!(204), "{seen}");
    assert_eq!(seen["after"], json!(404), "{seen}");
}

#[test]
fn one_audit_verify_covers_every_replica_even_after_a_replica_is_killed_mid_load() {
    let db = scratch();
    let env = Env::with_config(&cluster_config(
        db.url(),
        "writer",
        "[roles.writer]\nwrite = \"allow\"\n",
    ));
    let mut a = replica(&env, &env.root().join("data-a"));
    let b = replica(&env, &env.root().join("data-b"));
    let call = |at: String, n: u32| {
        let body = json!({"tool": "write_file", "arguments": {"path": format!("f{n}.md"), "content": "x"}});
        let (status, envelope) = http(&at, "POST", "/v1/calls", Some(&body));
        (status, envelope)
    };
    // Both replicas under load together.
    let workers: Vec<_> = (0..4u32)
        .map(|w| {
            let at = if w % 2 == 0 {
                a.addr.clone()
            } else {
                b.addr.clone()
            };
            std::thread::spawn(move || {
                (0..20u32)
                    .map(|i| call(at.clone(), w * 100 + i).1)
                    .collect::<Vec<Value>>()
            })
        })
        .collect();
    let mut acknowledged: Vec<String> = Vec::new();
    for w in workers {
        for e in w.join().unwrap() {
            assert_eq!(e["ok"], json!(true), "{e}");
            acknowledged.push(e["call_id"].as_str().unwrap().to_owned());
        }
    }
    // A stream of calls to A, and A killed in the middle of it.
    let stream = {
        let at = a.addr.clone();
        std::thread::spawn(move || {
            let mut ok = Vec::new();
            for i in 0..400u32 {
                let Ok((_, e)) = std::panic::catch_unwind(|| call(at.clone(), 10_000 + i)) else {
                    break;
                };
                match e["call_id"].as_str() {
                    Some(id) if e["ok"] == json!(true) => ok.push(id.to_owned()),
                    _ => break,
                }
            }
            ok
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    a.child.kill().unwrap();
    let _ = a.child.wait();
    acknowledged.extend(stream.join().unwrap());

    let verify = env.run(&["audit", "verify", "--json"]);
    verify.assert_code(0);
    let report = verify.json();
    assert_eq!(report["ok"], json!(true), "{report}");
    assert_eq!(report["keyed"], json!(true), "{report}");
    assert!(report["chains"].as_u64().unwrap() >= 2, "{report}");

    let export = env.root().join("audit.jsonl");
    env.run(&["audit", "export", "--out", export.to_str().unwrap()])
        .assert_code(0);
    let text = std::fs::read_to_string(&export).unwrap();
    let outcomes: std::collections::BTreeSet<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == json!("outcome"))
        .filter_map(|v| v["call_id"].as_str().map(str::to_owned))
        .collect();
    let missing: Vec<&String> = acknowledged
        .iter()
        .filter(|id| !outcomes.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "acknowledged calls without an outcome record: {missing:?}"
    );
    assert!(acknowledged.len() > 80, "{}", acknowledged.len());

    let file_check = env.run(&["audit", "verify", "--file", export.to_str().unwrap()]);
    file_check.assert_code(0);
    let cut: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 3)
        .map(|(_, l)| l)
        .collect();
    std::fs::write(&export, cut.join("\n")).unwrap();
    let cut_check = env.run(&["audit", "verify", "--file", export.to_str().unwrap()]);
    cut_check.assert_code(4);
    assert!(cut_check.stdout.contains("FAILED"), "{cut_check:?}");
}

#[test]
fn store_status_and_migrate_and_a_newer_schema_is_refused() {
    let db = scratch();
    let env = Env::with_config(&format!("[store]\nurl = \"{}\"\n", db.url()));
    let status = env.run(&["store", "status", "--json"]);
    status.assert_code(3);
    assert_eq!(status.json()["schema"], json!(0), "{status:?}");
    assert_eq!(status.json()["pending"][0]["version"], json!(1));
    let dry = env.run(&["store", "migrate", "--dry-run"]);
    dry.assert_code(0);
    assert!(dry.stdout.contains("would apply 1:"), "{dry:?}");
    env.run(&["store", "status"]).assert_code(3);

    // Two replicas migrating at once: the advisory lock lets one apply, the other finds it
    // done.
    let racers: Vec<_> = (0..2)
        .map(|_| env.command().args(["store", "migrate"]).output().unwrap())
        .collect();
    for out in &racers {
        assert!(out.status.success(), "{out:?}");
    }
    let status = env.run(&["store", "status", "--json"]);
    status.assert_code(0);
    let known = status.json()["known"].as_i64().unwrap();
    assert!(known >= 1, "{status:?}");
    assert_eq!(status.json()["schema"], json!(known));
    let rows = runtime().block_on(async {
        let (client, conn) = tokio_postgres::connect(db.url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let n: i64 = client
            .query_one("SELECT count(*) FROM toolgate_schema", &[])
            .await
            .unwrap()
            .get(0);
        client
            .execute(
                "INSERT INTO toolgate_schema (version, name) VALUES (99, 'from the future')",
                &[],
            )
            .await
            .unwrap();
        n
    });
    assert_eq!(rows, known, "schema steps applied once");

    env.run(&["store", "status"]).assert_code(2);
    let refused = env
        .command()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "schema is at version 99, newer than this toolgate knows ({known})"
        )),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_or_malformed_store_url_is_a_clear_error() {
    let env = Env::with_config("[store]\nurl = \"mysql://root@localhost/db\"\n");
    let check = env.run(&["config", "check"]);
    assert_ne!(check.code, 0, "{check:?}");
    assert!(check.stderr.contains("[store] url"), "{check:?}");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = Env::with_config(&format!(
        "[store]\nurl = \"postgres://postgres@127.0.0.1:{port}/test?connect_timeout=2\"\n"
    ));
    let call = env.call("read_file", &json!({"path": "nothing"}));
    assert_ne!(call.code, 0);
    assert!(
        call.stderr
            .contains(&format!("postgres://postgres@127.0.0.1:{port}/test")),
        "{call:?}"
    );
    assert!(!call.stderr.contains("panicked"), "{call:?}");
}

/// A TCP proxy to the database that the test can cut: `down` closes every connection through
/// it and refuses new ones (what clients see when PostgreSQL restarts or the network fails),
/// `up` forwards again.
struct CuttableProxy {
    addr: String,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    live: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl CuttableProxy {
    fn start(upstream: String) -> CuttableProxy {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let live = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (d, l) = (down.clone(), live.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if d.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                    continue;
                };
                {
                    let mut live = l.lock().unwrap();
                    live.push(client.try_clone().unwrap());
                    live.push(server.try_clone().unwrap());
                }
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        CuttableProxy { addr, down, live }
    }

    fn cut(&self) {
        self.down.store(true, std::sync::atomic::Ordering::SeqCst);
        for stream in self.live.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.down.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_replica_that_loses_postgresql_refuses_what_needs_it_and_recovers() {
    let db = scratch();
    let proxy = CuttableProxy::start(db.server_addr());
    let env = Env::with_config(&cluster_config(&db.url_via(&proxy.addr), "default", ""));
    let a = replica(&env, &env.root().join("data-a"));
    let write = |n: u32| json!({"tool": "write_file", "arguments": {"path": format!("w{n}.md"), "content": "x"}});
    let (_, asked) = http(&a.addr, "POST", "/v1/calls", Some(&write(1)));
    assert_eq!(
        asked["error"]["code"],
        json!("approval_required"),
        "{asked}"
    );

    proxy.cut();
    let (_, refused) = http(&a.addr, "POST", "/v1/calls", Some(&write(2)));
    assert_eq!(refused["error"]["code"], json!("unavailable"), "{refused}");
    assert_eq!(refused["error"]["retryable"], json!(true), "{refused}");
    assert!(!env.root().join("ws/w2.md").exists(), "nothing ran");
    let (status, ready) = http(&a.addr, "GET", "/v1/ready", None);
    assert_eq!(status, 503, "{ready}");
    // A read acts on nothing, but the cluster's audit cannot record it: its data is
    // withheld.
    let (_, read) = http(
        &a.addr,
        "POST",
        "/v1/calls",
        Some(&json!({"tool": "list_dir", "arguments": {"path": "."}})),
    );
    assert_eq!(read["error"]["code"], json!("unavailable"), "{read}");
    assert!(
        read["error"]["message"]
            .as_str()
            .unwrap()
            .contains("withheld"),
        "{read}"
    );

    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, again) = http(&a.addr, "POST", "/v1/calls", Some(&write(3)));
        if again["error"]["code"] == json!("approval_required") {
            break;
        }
        assert_eq!(again["error"]["code"], json!("unavailable"), "{again}");
        assert!(
            Instant::now() < deadline,
            "no recovery within 30 s: {again}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let (status, ready) = http(&a.addr, "GET", "/v1/ready", None);
    assert_eq!(status, 200, "{ready}");
}
