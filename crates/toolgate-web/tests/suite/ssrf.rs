//! url_read never reaches what `[egress]` does not allow: literal loopback, names that
//! resolve to loopback, and redirects from an allowed host to the cloud metadata address or
//! to a non-allowlisted port. Refusals are `PolicyDenied` with the guard's own message, and
//! the counting listener behind each refused target sees no connection at all.

use serde_json::json;
use toolgate_core::ToolError;
use toolgate_net::EgressPolicy;
use toolgate_web::UrlReadConfig;

use super::fixture::{
    CountingListener, call, dev_policy, http_everywhere, redirect, serve_fn, url_read,
};

fn denied(message: &str) -> Result<serde_json::Value, ToolError> {
    Err(ToolError::PolicyDenied(message.to_owned()))
}

#[tokio::test]
async fn loopback_is_refused_unless_allowlisted() {
    let target = CountingListener::start().await;
    let p = target.port();
    let open_http = url_read(UrlReadConfig::default(), &http_everywhere());
    let strict = url_read(UrlReadConfig::default(), &EgressPolicy::default());
    let got = [
        call(&open_http, json!({"url": format!("http://127.0.0.1:{p}/")})).await,
        call(&open_http, json!({"url": format!("http://[::1]:{p}/")})).await,
        call(
            &open_http,
            json!({"url": format!("http://2130706433:{p}/")}),
        )
        .await,
        call(&strict, json!({"url": format!("http://127.0.0.1:{p}/")})).await,
        call(&strict, json!({"url": "file:///etc/passwd"})).await,
    ];
    assert_eq!(
        got,
        [
            denied(&format!(
                "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{p}\" to [egress] allow_hosts"
            )),
            denied(&format!(
                "refused: ::1 is loopback; to allow it add \"[::1]:{p}\" to [egress] allow_hosts"
            )),
            denied(&format!(
                "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{p}\" to [egress] allow_hosts"
            )),
            denied(
                "refused: plain http to 127.0.0.1; use https, or to allow it add \"127.0.0.1\" to [egress] allow_http"
            ),
            denied(
                "refused: file: uses scheme `file`; only https (and http for [egress] allow_http hosts) is allowed"
            ),
        ]
    );
    assert_eq!(target.connections(), 0);
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_before_connecting() {
    let target = CountingListener::start().await;
    let tool = url_read(UrlReadConfig::default(), &dev_policy());
    let got = call(
        &tool,
        json!({"url": format!("http://evil.test:{}/", target.port())}),
    )
    .await;
    assert_eq!(
        got,
        denied(
            "refused: evil.test resolves to 127.0.0.1, which is loopback; to allow it add \"evil.test\" to [egress] allow_hosts"
        )
    );
    assert_eq!(target.connections(), 0);
}

#[tokio::test]
async fn redirects_from_an_allowed_host_are_checked_at_every_hop() {
    let target = CountingListener::start().await;
    let t = target.port();
    let public = serve_fn(move |path, _| match path {
        "/metadata" => redirect("http://169.254.169.254/latest/meta-data/iam"),
        "/loopback" => redirect(&format!("http://127.0.0.1:{t}/admin")),
        "/rebind" => redirect(&format!("http://evil.test:{t}/admin")),
        _ => redirect("/metadata"),
    })
    .await;
    let tool = url_read(UrlReadConfig::default(), &dev_policy());
    let from = |path: &str| json!({"url": format!("http://public.test:{public}{path}")});
    let got = [
        call(&tool, from("/metadata")).await,
        call(&tool, from("/start")).await,
        call(&tool, from("/loopback")).await,
        call(&tool, from("/rebind")).await,
    ];
    let metadata = "refused: 169.254.169.254 is link-local (cloud metadata); to allow it add \"169.254.169.254\" to [egress] allow_hosts";
    assert_eq!(
        got,
        [
            denied(metadata),
            denied(metadata),
            denied(&format!(
                "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{t}\" to [egress] allow_hosts"
            )),
            denied(
                "refused: evil.test resolves to 127.0.0.1, which is loopback; to allow it add \"evil.test\" to [egress] allow_hosts"
            ),
        ]
    );
    assert_eq!(target.connections(), 0);
}

#[tokio::test]
async fn the_redirect_limit_comes_from_egress() {
    let looping = serve_fn(|path, _| {
        let n: u32 = path.trim_start_matches('/').parse().unwrap_or(0);
        redirect(&format!("/{}", n + 1))
    })
    .await;
    let policy = EgressPolicy {
        max_redirects: 2,
        ..dev_policy()
    };
    let tool = url_read(UrlReadConfig::default(), &policy);
    let got = call(
        &tool,
        json!({"url": format!("http://site.test:{looping}/0")}),
    )
    .await;
    assert_eq!(
        got,
        denied(&format!(
            "refused: more than 2 redirects (the next was to http://site.test:{looping}); raise [egress] max_redirects to follow more"
        ))
    );
}
