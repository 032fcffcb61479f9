//! `toolgate mcp login | logout`: what is refused before any request (unknown, stdio, no
//! `auth`, client credentials, a server outside `[egress]`), and logout forgetting what a
//! login stored. The OAuth flow itself is tested against a strict fake authorization server
//! in crates/toolgate-mcp-client/tests/suite/oauth.rs.

use super::harness::Env;
use toolgate_store::{CredentialSecret, CredentialStore};

const SERVERS: &str = r#"
[[mcp.servers]]
name = "local"
command = "node"
args = ["server.js"]

[[mcp.servers]]
name = "plain"
url = "https://mcp.example.com/mcp"

[[mcp.servers]]
name = "machine"
url = "https://mcp.example.com/mcp"
auth = { type = "client_credentials", client_id = "svc", client_secret_env = "SVC_SECRET" }

[[mcp.servers]]
name = "inside"
url = "https://127.0.0.1:9/mcp"
auth = { type = "oauth" }
"#;

fn refused(env: &Env, name: &str, expected: &str) {
    let run = env.run(&["mcp", "login", name, "--no-browser"]);
    run.assert_code(1);
    assert!(
        run.stderr.contains(expected),
        "login {name}: expected `{expected}` in {:?}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{run:?}");
}

#[test]
fn login_is_refused_with_what_to_do_before_any_request() {
    let env = Env::with_config(SERVERS);
    refused(&env, "nope", "no MCP server `nope`");
    refused(&env, "local", "stdio server");
    refused(&env, "plain", "auth = { type = \"oauth\" }");
    refused(&env, "machine", "no login needed");
    // A loopback address is outside the strict default [egress]: refused before sending.
    refused(&env, "inside", "allow_hosts");
}

#[tokio::test]
async fn logout_forgets_the_stored_tokens_of_that_server_only() {
    let env = Env::with_config(SERVERS);
    let run = env.run(&["mcp", "logout", "inside"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "no tokens stored for `inside`\n");

    std::fs::create_dir_all(&env.data).expect("data dir");
    let store = CredentialStore::open(&env.data.join("toolgate.db")).expect("store");
    let secret = CredentialSecret::new(r#"{"access_token":"tok-inside"}"#);
    store
        .save(
            "inside",
            "https://127.0.0.1:9/mcp",
            None,
            "client-1",
            &secret,
        )
        .await
        .expect("save");
    store
        .save(
            "plain",
            "https://mcp.example.com/mcp",
            None,
            "client-2",
            &secret,
        )
        .await
        .expect("save");
    drop(store);

    let run = env.run(&["mcp", "logout", "inside"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout,
        "forgot the tokens of `inside` (1 stored credential(s))\n"
    );
    assert!(!run.stdout.contains("tok-inside") && !run.stderr.contains("tok-inside"));
    let store = CredentialStore::open(&env.data.join("toolgate.db")).expect("store");
    let left: Vec<String> = store
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|r| r.server)
        .collect();
    assert_eq!(left, ["plain"]);
}
