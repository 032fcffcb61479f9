//! The guard against a real browser: redirects and page scripts that head for the metadata
//! address or a local port, names that resolve to loopback, a name whose answer changes
//! between the check and the connection, the origin allowlist and non-http schemes.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::ToolError;
use toolgate_net::{EgressPolicy, Lookup, LookupFuture, StaticLookup};
use toolgate_protocol::ToolOutput;

use super::fixture::{Browser, Trap, config, ip, page_text, serve_site, site_policy};

/// The refusals a navigation caused: from its error, its result, or — for a page script
/// that navigates after load — the snapshots that follow (polled a bounded number of times).
async fn refusals_after(b: &Browser, navigated: Result<ToolOutput, ToolError>) -> Vec<String> {
    let mut found = match navigated {
        Err(ToolError::PolicyDenied(msg)) => return vec![msg],
        Err(other) => panic!("unexpected error: {other:?}"),
        Ok(out) => blocked(&out),
    };
    for _ in 0..50 {
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        found = blocked(&b.read(json!({"action": "snapshot"})).await.unwrap());
    }
    found
}

fn blocked(out: &ToolOutput) -> Vec<String> {
    out.data["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} blocked: {}",
                r["url"].as_str().unwrap(),
                r["reason"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_to_the_metadata_address_or_a_local_port_are_blocked() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    // Plain http is allowed to both targets, so it is the address that is refused.
    let egress = site_policy(site)
        .allow_plain_http("169.254.169.254")
        .unwrap()
        .allow_plain_http(&trap.addr.to_string())
        .unwrap();
    let b = Browser::new(&config(egress), Arc::new(StaticLookup::new()), "redirects");
    let go = |to: String| json!({"action": "navigate", "url": format!("http://{site}/redirect?to={to}")});
    let metadata = b
        .read(go("http://169.254.169.254/latest/meta-data/".into()))
        .await;
    let local = b.read(go(format!("http://{}/secret", trap.addr))).await;
    assert_eq!(
        [metadata.unwrap_err(), local.unwrap_err()],
        [
            ToolError::PolicyDenied(
                "navigation to http://169.254.169.254/latest/meta-data/ was blocked: refused: 169.254.169.254 is link-local (cloud metadata); to allow it add \"169.254.169.254\" to [egress] allow_hosts".into()
            ),
            ToolError::PolicyDenied(format!(
                "navigation to http://{0}/secret was blocked: refused: 127.0.0.1 is loopback; to allow it add \"{0}\" to [egress] allow_hosts",
                trap.addr
            )),
        ]
    );
    // The direct way is refused before the browser is asked.
    let direct = b
        .read(json!({"action": "navigate", "url": "http://169.254.169.254/"}))
        .await
        .unwrap_err();
    assert!(matches!(direct, ToolError::PolicyDenied(_)), "{direct:?}");
    b.close().await;
    assert_eq!(trap.hits(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_scripts_cannot_navigate_to_forbidden_addresses() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let egress = site_policy(site)
        .allow_plain_http("169.254.169.254")
        .unwrap()
        .allow_plain_http(&trap.addr.to_string())
        .unwrap();
    let b = Browser::new(&config(egress), Arc::new(StaticLookup::new()), "scripts");
    let nav = |path: &str| json!({"action": "navigate", "url": format!("http://{site}{path}")});

    let to_metadata = b.read(nav("/jump-to-metadata")).await;
    let metadata = refusals_after(&b, to_metadata).await;
    let to_trap = b.read(nav("/jump-to-trap")).await;
    let local = refusals_after(&b, to_trap).await;
    let strip = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .map(|m| {
                m.replace("navigation to ", "")
                    .replace(" was blocked: ", " blocked: ")
            })
            .collect()
    };
    assert_eq!(
        (strip(metadata), strip(local)),
        (
            vec!["http://169.254.169.254/latest/meta-data/ blocked: refused: 169.254.169.254 is link-local (cloud metadata); to allow it add \"169.254.169.254\" to [egress] allow_hosts".to_owned()],
            vec![format!(
                "http://{0}/secret blocked: refused: 127.0.0.1 is loopback; to allow it add \"{0}\" to [egress] allow_hosts",
                trap.addr
            )],
        )
    );
    b.close().await;
    assert_eq!(trap.hits(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_resolved_by_the_guard_not_by_chromium() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    let lookup = StaticLookup::new()
        .with("evil.test", &[ip("127.0.0.1")])
        .with("app.test", &[ip("127.0.0.1")]);
    let egress = site_policy(site)
        .allow_plain_http("evil.test")
        .unwrap()
        .allow_host("app.test")
        .unwrap()
        .allow_plain_http("app.test")
        .unwrap();
    let b = Browser::new(&config(egress), Arc::new(lookup), "names");

    // A name that resolves to loopback is refused, whatever the port.
    let evil = b
        .read(
            json!({"action": "navigate", "url": format!("http://evil.test:{}/", trap.addr.port())}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        evil,
        ToolError::PolicyDenied(format!(
            "navigation to http://evil.test:{}/ was blocked: refused: evil.test resolves to 127.0.0.1, which is loopback; to allow it add \"evil.test\" to [egress] allow_hosts",
            trap.addr.port()
        ))
    );
    // An allowlisted name that only the test's lookup knows loads: Chromium never resolved
    // it, the guard's proxy did.
    let home = b
        .read(json!({"action": "navigate", "url": format!("http://app.test:{}/", site.port())}))
        .await
        .unwrap();
    assert!(
        page_text(&home).starts_with("Title: Home\n"),
        "{}",
        page_text(&home)
    );
    b.close().await;
    assert_eq!(trap.hits(), 0);
}

/// Answers 127.0.0.1 to the first `honest` lookups of `rebind.test`, then 127.0.0.2: a DNS
/// rebinding.
struct Rebinding {
    honest: usize,
    calls: AtomicUsize,
}

impl Lookup for Rebinding {
    fn lookup(&self, host: &str) -> LookupFuture {
        if host != "rebind.test" {
            // Chromium's own background requests (search-engine preconnects and the like).
            let host = host.to_owned();
            return Box::pin(async move {
                Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host}: not in the test's DNS"),
                ))
            });
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let addr: IpAddr = if n < self.honest {
            ip("127.0.0.1")
        } else {
            ip("127.0.0.2")
        };
        Box::pin(async move { Ok::<_, io::Error>(vec![addr]) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_answer_after_the_check_does_not_reach_its_target() {
    let placeholder = Trap::bind("127.0.0.1").await;
    let site = serve_site(placeholder.addr).await;
    // The rebinding target: the site's port on another loopback address.
    let trap = Trap::bind_at(SocketAddr::new(ip("127.0.0.2"), site.port())).await;
    let egress = EgressPolicy::default()
        .allow_host(&site.to_string())
        .unwrap()
        .allow_plain_http("rebind.test")
        .unwrap();
    // Two honest answers: the navigate pre-check and the request interception. The third
    // lookup, the one a connection is made from, gets the rebinding answer.
    let lookup = Rebinding {
        honest: 2,
        calls: AtomicUsize::new(0),
    };
    let b = Browser::new(&config(egress), Arc::new(lookup), "rebinding");
    let out = b
        .read(json!({"action": "navigate", "url": format!("http://rebind.test:{}/", site.port())}))
        .await
        .unwrap();
    // Chromium may also ask for /favicon.ico; it meets the same refusal.
    let refusal = "blocked: refused: rebind.test resolves to 127.0.0.2, which is loopback; to allow it add \"rebind.test\" to [egress] allow_hosts";
    let page = format!("http://rebind.test:{}/", site.port());
    let seen = blocked(&out);
    assert_eq!(seen.first(), Some(&format!("{page} {refusal}")), "{seen:?}");
    assert!(
        seen.iter().all(|line| line == &format!("{page} {refusal}")
            || line == &format!("{page}favicon.ico {refusal}")),
        "{seen:?}"
    );
    b.close().await;
    assert_eq!(trap.hits(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_origin_allowlist_and_non_http_schemes_are_enforced() {
    let trap = Trap::bind("127.0.0.1").await;
    let site = serve_site(trap.addr).await;
    // Egress would allow all of loopback; the origin allowlist narrows it to the site.
    let mut cfg = config(
        EgressPolicy::default()
            .allow_host("127.0.0.1")
            .unwrap()
            .allow_plain_http("127.0.0.1")
            .unwrap(),
    );
    cfg.allow_origins = vec![format!("http://{site}").parse().unwrap()];
    let b = Browser::new(&cfg, Arc::new(StaticLookup::new()), "origins");
    let nav = |url: String| json!({"action": "navigate", "url": url});
    let home = b.read(nav(format!("http://{site}/"))).await.unwrap();
    assert!(page_text(&home).starts_with("Title: Home\n"));
    let results: Vec<Result<Value, ToolError>> = vec![
        b.read(nav(format!("http://{}/", trap.addr)))
            .await
            .map(|o| o.data),
        b.read(nav(format!(
            "http://{site}/redirect?to=http://{}/",
            trap.addr
        )))
        .await
        .map(|o| o.data),
        b.read(nav("file:///etc/passwd".into()))
            .await
            .map(|o| o.data),
        b.read(nav("data:text/html,<h1>hi</h1>".into()))
            .await
            .map(|o| o.data),
        b.read(nav("chrome://settings".into()))
            .await
            .map(|o| o.data),
    ];
    let origin_refusal = |url: String| {
        Err(ToolError::PolicyDenied(format!(
            "navigation to {url} was blocked: http://{0} is not in [browser] allow_origins; to allow it add \"http://{0}\" there",
            trap.addr
        )))
    };
    let scheme_refusal = |url: &str, scheme: &str| {
        Err(ToolError::PolicyDenied(format!(
            "navigation to {url} was blocked: the browser only loads http and https URLs, not `{scheme}:`"
        )))
    };
    assert_eq!(
        results,
        vec![
            origin_refusal(format!("http://{}/", trap.addr)),
            origin_refusal(format!("http://{}/", trap.addr)),
            scheme_refusal("file:///etc/passwd", "file"),
            scheme_refusal("data:text/html,<h1>hi</h1>", "data"),
            scheme_refusal("chrome://settings", "chrome"),
        ]
    );
    let blank = b.read(nav("about:blank".into())).await.unwrap();
    assert_eq!(blank.data["url"], json!("about:blank"));
    b.close().await;
    assert_eq!(trap.hits(), 0);
}
