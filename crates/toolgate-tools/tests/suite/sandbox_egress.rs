//! Network for sandboxed commands only through toolgate's egress proxy (issue 29): the
//! namespace view has no network but a relay to the proxy's socket; the proxy lets a role
//! reach the hosts of its allowlist that the SSRF guard accepts, refuses everything else,
//! and records every decision.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_net::{EgressPolicy, EgressProxy, ProxyAudit, ProxyEvent, ProxyGrant, StaticLookup};
use toolgate_tools::{ShellEgress, ShellOptions};

use super::sandbox::sandboxed;

/// The proxy's decisions, as recorded.
#[derive(Debug, Default)]
struct Recorded(Mutex<Vec<ProxyEvent>>);

impl ProxyAudit for Recorded {
    fn record(&self, event: ProxyEvent) {
        self.0.lock().unwrap().push(event);
    }
}

/// Role `ci` goes through the one proxy; every other role has no network.
#[derive(Debug)]
struct CiOnly(PathBuf);

impl ShellEgress for CiOnly {
    fn socket_for(&self, role: &str) -> Option<PathBuf> {
        (role == "ci").then(|| self.0.clone())
    }
}

/// A web server on the host's loopback answering every request with `hello`.
async fn hello_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = conn.read(&mut buf).await;
                let _ = conn
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    )
                    .await;
            });
        }
    });
    port
}

async fn run(fx: &super::fixture::Fixture, role: &str, command: &str) -> Value {
    let mut ctx = toolgate_core::ToolContext::for_test();
    ctx.role = role.into();
    fx.run_with("shell", json!({ "command": command }), ctx)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_goes_only_through_the_proxy_to_allowed_hosts() {
    let port = hello_server().await;
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let lookup = StaticLookup::new()
        .with("allowed.test", &[loopback])
        .with("private.test", &[loopback])
        .with("denied.test", &[loopback]);
    // allowed.test may be private (the guard's own allowlist); private.test is in the
    // grant but the guard refuses its loopback address.
    let policy = EgressPolicy::default().allow_host("allowed.test").unwrap();
    let grant = ProxyGrant {
        name: "shell:ci".to_owned(),
        allow: ["allowed.test", "private.test"]
            .iter()
            .map(|h| h.parse().unwrap())
            .collect(),
        policy: Arc::new(policy),
        lookup: Arc::new(lookup),
    };
    let dir = tempfile::tempdir().unwrap();
    let audit = Arc::new(Recorded::default());
    let proxy = EgressProxy::bind(dir.path().join("egress.sock"), grant, audit.clone()).unwrap();
    let fx = sandboxed(ShellOptions {
        egress: Some(Arc::new(CiOnly(proxy.path().to_owned()))),
        ..ShellOptions::default()
    });

    // Plain HTTP forwarded, and a CONNECT tunnel (-p), to the allowed host.
    let plain = run(
        &fx,
        "ci",
        &format!("curl -sS --max-time 20 http://allowed.test:{port}/"),
    )
    .await;
    assert_eq!(plain["stdout"], json!("hello"), "{plain}");
    let tunnel = run(
        &fx,
        "ci",
        &format!("curl -sS -p --max-time 20 http://allowed.test:{port}/"),
    )
    .await;
    assert_eq!(tunnel["stdout"], json!("hello"), "{tunnel}");

    // Another host, a private address behind an allowed name, a literal address: refused.
    for (url, why) in [
        (
            format!("http://denied.test:{port}/"),
            "not in this sandbox's egress allowlist",
        ),
        (format!("http://private.test:{port}/"), "private.test"),
        (
            format!("http://127.0.0.1:{port}/"),
            "not in this sandbox's egress allowlist",
        ),
    ] {
        let out = run(&fx, "ci", &format!("curl -sS --max-time 20 {url}")).await;
        assert!(
            out["stdout"].as_str().unwrap().contains(why),
            "{url}: {out}"
        );
    }
    // No way around the proxy: a direct socket, curl told to ignore it.
    let direct = run(
        &fx,
        "ci",
        &format!(
            "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>&1; \
             curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{port}/ 2>&1; true"
        ),
    )
    .await;
    assert!(
        !direct["stdout"].as_str().unwrap().contains("hello"),
        "{direct}"
    );
    // Another role has no proxy at all.
    let other = run(
        &fx,
        "default",
        &format!("curl -sS --max-time 5 http://allowed.test:{port}/ 2>&1; true"),
    )
    .await;
    assert!(
        !other["stdout"].as_str().unwrap().contains("hello"),
        "{other}"
    );

    // Every decision recorded: two relayed, three refused.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let events = audit.0.lock().unwrap().clone();
    let relayed: Vec<_> = events.iter().filter(|e| e.refused.is_none()).collect();
    let refused: Vec<_> = events.iter().filter(|e| e.refused.is_some()).collect();
    assert_eq!(relayed.len(), 2, "{events:#?}");
    assert!(
        relayed
            .iter()
            .all(|e| e.host == "allowed.test" && e.bytes_down > 0)
    );
    assert_eq!(
        refused.iter().map(|e| e.host.as_str()).collect::<Vec<_>>(),
        ["denied.test", "private.test", "127.0.0.1"],
        "{events:#?}"
    );
    assert!(events.iter().all(|e| e.grant == "shell:ci"));
}
