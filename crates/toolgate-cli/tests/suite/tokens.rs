//! Tokens without restarts (issue 16, item 3), against `toolgate serve` as users run it:
//! `toolgate token create|revoke|rotate` in another process take effect on the running
//! server — a revoked token is refused within a second of `revoke` returning, on every
//! replica sharing a PostgreSQL store; a tokenless caller stops being the local operator
//! once a token exists; rotation keeps the old token for its grace only; expiry and last use
//! are recorded; operators manage tokens through `/v1/tokens` (the console's API), which never
//! shows a token again or its hash.

#![allow(clippy::print_stderr)] // the measured delays go to the test log

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Answer, Env, http_with};

/// `GET /v1/me` with `token` (none: no Authorization header).
fn me(addr: &str, token: Option<&str>) -> Answer {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    http_with(addr, "GET", "/v1/me", &headers, None)
}

/// Polls `/v1/me` with `token` until it answers `status`; how long that took.
fn until_status(addr: &str, token: Option<&str>, status: u16, within: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let answer = me(addr, token);
        if answer.status == status {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "{addr}: still {} after {within:?} (wanted {status}): {}",
            answer.status,
            answer.body
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `toolgate token create …` → (id, token).
fn create(env: &Env, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "token",
        "create",
        "--principal",
        "ci-bot",
        "--role",
        "default",
    ];
    args.extend_from_slice(extra);
    let run = env.run(&args);
    run.assert_code(0);
    let token = run.stdout.trim().to_owned();
    assert!(token.starts_with("tg_") && token.len() == 67, "{token:?}");
    let id = run
        .stderr
        .split_whitespace()
        .find(|w| w.starts_with("tok_"))
        .unwrap_or_else(|| panic!("no id in {}", run.stderr))
        .to_owned();
    (id, token)
}

fn listed(env: &Env) -> Vec<Value> {
    let run = env.run(&["token", "list", "--json"]);
    run.assert_code(0);
    run.json().as_array().unwrap().clone()
}

struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn issued_and_revoked_on_a_running_server_within_a_second() {
    let env = Env::new();
    let (child, addr) = env.serve();
    let _served = Served(child);

    // Local development: no token exists, a tokenless caller is the local operator.
    let before = me(&addr, None);
    assert_eq!(
        (before.status, &before.body["operator"]),
        (200, &json!(true))
    );

    let (id, token) = create(&env, &["--note", "nightly"]);
    let admitted = until_status(&addr, Some(&token), 200, Duration::from_secs(1));
    let answer = me(&addr, Some(&token));
    assert_eq!(answer.body["principal"], "ci-bot", "{}", answer.body);
    eprintln!("a new token was admitted {admitted:?} after `token create` returned");

    // Once a token exists, a caller without one is refused.
    let tokenless = me(&addr, None);
    assert_eq!(tokenless.status, 401, "{}", tokenless.body);

    // Last use is recorded (written every second).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let rows = listed(&env);
        let row = rows.iter().find(|r| r["id"] == id.as_str()).unwrap();
        assert_eq!(
            (row["state"].as_str(), row["note"].as_str()),
            (Some("active"), Some("nightly"))
        );
        assert!(row.get("sha256").is_none() && !row.to_string().contains(&token));
        if !row["last_used_at"].is_null() {
            break;
        }
        assert!(Instant::now() < deadline, "last use never recorded: {row}");
        std::thread::sleep(Duration::from_millis(200));
    }

    let run = env.run(&["token", "revoke", &id]);
    run.assert_code(0);
    let refused = until_status(&addr, Some(&token), 401, Duration::from_secs(1));
    eprintln!("a revoked token was refused {refused:?} after `token revoke` returned");
    let answer = me(&addr, Some(&token));
    assert_eq!(
        answer.body["error"]["message"],
        format!("bearer token {id} was revoked")
    );
    assert!(
        answer
            .header("www-authenticate")
            .is_some_and(|h| h.contains("resource_metadata=")),
        "{:?}",
        answer.headers
    );
    let again = env.run(&["token", "revoke", &id]);
    again.assert_code(1);
    assert!(again.stderr.contains("already revoked"), "{}", again.stderr);
    // Still no tokenless operator: a revoked token still counts as issued.
    assert_eq!(me(&addr, None).status, 401);
}

#[test]
fn rotation_keeps_the_old_token_for_its_grace_and_expiry_ends_a_token() {
    let env = Env::new();
    let (child, addr) = env.serve();
    let _served = Served(child);
    let (id, old) = create(&env, &[]);
    until_status(&addr, Some(&old), 200, Duration::from_secs(1));

    let run = env.run(&["token", "rotate", &id, "--grace", "1h"]);
    run.assert_code(0);
    let new = run.stdout.trim().to_owned();
    until_status(&addr, Some(&new), 200, Duration::from_secs(1));
    assert_eq!(
        me(&addr, Some(&old)).status,
        200,
        "the old token works for its grace"
    );

    let new_id = listed(&env)
        .iter()
        .find(|r| r["replaces"] == id.as_str())
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .unwrap();
    let run = env.run(&["token", "rotate", &new_id]);
    run.assert_code(0);
    let newest = run.stdout.trim().to_owned();
    until_status(&addr, Some(&new), 401, Duration::from_secs(1));
    until_status(&addr, Some(&newest), 200, Duration::from_secs(1));
    assert_eq!(
        me(&addr, Some(&new)).body["error"]["message"],
        format!("bearer token {new_id} has expired")
    );

    let (_, brief) = create(&env, &["--expires", "2s"]);
    until_status(&addr, Some(&brief), 200, Duration::from_secs(1));
    until_status(&addr, Some(&brief), 401, Duration::from_secs(4));
}

#[test]
fn operators_manage_tokens_through_the_api_which_never_shows_one_again() {
    let env = Env::new();
    let (child, addr) = env.serve();
    let _served = Served(child);
    let (_, admin) = create(&env, &["--operator"]);
    until_status(&addr, Some(&admin), 200, Duration::from_secs(1));
    let as_admin = format!("Bearer {admin}");
    let auth = [("Authorization", as_admin.as_str())];

    let made = http_with(
        &addr,
        "POST",
        "/v1/tokens",
        &auth,
        Some(&json!({"principal": "agent-7", "role": "readonly", "expires_in_secs": 3600})),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let token = made.body["token"].as_str().unwrap().to_owned();
    let id = made.body["id"].as_str().unwrap().to_owned();
    // Effective at once on the server that made it.
    let who = me(&addr, Some(&token));
    assert_eq!((who.status, &who.body["role"]), (200, &json!("readonly")));

    let list = http_with(&addr, "GET", "/v1/tokens", &auth, None);
    assert_eq!(list.status, 200);
    let text = list.body.to_string();
    assert!(!text.contains(&token) && !text.contains(&admin) && !text.contains("sha256"));
    assert_eq!(list.body.as_array().unwrap().len(), 2);

    // A non-operator may not list or revoke.
    let as_agent = format!("Bearer {token}");
    let denied = http_with(
        &addr,
        "GET",
        "/v1/tokens",
        &[("Authorization", &as_agent)],
        None,
    );
    assert_eq!(denied.status, 403, "{}", denied.body);

    let unknown_role = http_with(
        &addr,
        "POST",
        "/v1/tokens",
        &auth,
        Some(&json!({"principal": "x", "role": "nope"})),
    );
    assert_eq!(unknown_role.status, 404, "{}", unknown_role.body);

    let revoked = http_with(
        &addr,
        "POST",
        &format!("/v1/tokens/{id}/revoke"),
        &auth,
        None,
    );
    assert_eq!(
        (revoked.status, &revoked.body["state"]),
        (200, &json!("revoked"))
    );
    assert_eq!(
        me(&addr, Some(&token)).status,
        401,
        "refused at once where revoked"
    );
    let missing = http_with(
        &addr,
        "POST",
        "/v1/tokens/tok_000000000000/revoke",
        &auth,
        None,
    );
    assert_eq!(missing.status, 404);
}

#[test]
fn a_revocation_reaches_every_replica_within_a_second() {
    let scratch = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(toolgate_testkit::pg::Scratch::new());
    let env = Env::with_config(&format!("[store]\nurl = \"{}\"\n", scratch.url()));
    let (a, addr_a) = env.serve_with(&env.root().join("data-a"));
    let _a = Served(a);
    let (b, addr_b) = env.serve_with(&env.root().join("data-b"));
    let _b = Served(b);

    let (id, token) = create(&env, &[]);
    for addr in [&addr_a, &addr_b] {
        until_status(addr, Some(&token), 200, Duration::from_secs(1));
        assert_eq!(
            me(addr, None).status,
            401,
            "no tokenless operator once a token exists"
        );
    }
    env.run(&["token", "revoke", &id]).assert_code(0);
    let start = Instant::now();
    for addr in [&addr_a, &addr_b] {
        let left = Duration::from_secs(1).saturating_sub(start.elapsed());
        until_status(addr, Some(&token), 401, left);
    }
    eprintln!(
        "both replicas refused the revoked token within {:?}",
        start.elapsed()
    );
}

/// The first token ends loopback's implicit operator access, and `token create` says so —
/// once; not when `[server.anonymous]` already decides what tokenless callers get.
#[test]
fn the_first_token_warns_that_loopback_operator_access_ends() {
    let env = Env::new();
    let args = ["token", "create", "--principal", "a", "--role", "default"];
    let first = env.run(&args);
    first.assert_code(0);
    assert!(
        first.stderr.contains("this is the first token"),
        "{}",
        first.stderr
    );
    let second = env.run(&args);
    second.assert_code(0);
    assert!(!second.stderr.contains("first token"), "{}", second.stderr);
    let anonymous =
        Env::with_config("[server.anonymous]\nrole = \"readonly\"\nprincipal = \"visitor\"\n");
    let run = anonymous.run(&args);
    run.assert_code(0);
    assert!(!run.stderr.contains("first token"), "{}", run.stderr);
}
