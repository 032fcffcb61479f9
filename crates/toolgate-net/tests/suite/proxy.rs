//! Proxy environment variables are ignored: a proxy would resolve and connect on our behalf,
//! unchecked. The variables are set only in a child process (this test binary, re-run for
//! one test), so no other test sees them.

use std::sync::Arc;

use toolgate_net::{StaticLookup, client_with_lookup};

use super::refused::{http_everywhere, ip};
use super::server::CountingServer;

const CHILD: &str = "TOOLGATE_NET_TEST_PROXY_CHILD_TARGET_PORT";

#[tokio::test]
async fn proxy_variables_are_not_honoured() {
    let proxy = CountingServer::ok().await;
    let target = CountingServer::ok().await;
    let proxy_url = format!("http://{}", proxy.addr);
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "suite::proxy::child_requests_under_proxy_variables",
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD, target.port().to_string())
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("REQUEST_METHOD");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        child.env(var, &proxy_url);
    }
    let out = child.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The proxy saw only the control request of a plain reqwest client; the guarded client
    // went straight to its target.
    assert_eq!([proxy.connections(), target.connections()], [1, 1]);
}

/// Runs in the child only (does nothing when run directly).
#[tokio::test]
async fn child_requests_under_proxy_variables() {
    let Ok(port) = std::env::var(CHILD) else {
        return;
    };
    let plain = reqwest::Client::new();
    let control = plain.get("http://control.test/").send().await.unwrap();
    assert_eq!(
        control.status().as_u16(),
        200,
        "the control request used the proxy"
    );

    let lookup = StaticLookup::new().with("target.test", &[ip("127.0.0.1")]);
    let policy = http_everywhere().allow_host("target.test").unwrap();
    let guarded = client_with_lookup(&policy, Arc::new(lookup)).unwrap();
    let resp = guarded
        .get(format!("http://target.test:{port}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}
