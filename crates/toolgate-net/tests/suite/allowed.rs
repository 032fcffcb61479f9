//! What an explicit allowlist lets through, and the redirect cap.

use std::sync::Arc;

use toolgate_net::{
    AddrClass, EgressError, EgressPolicy, StaticLookup, client, client_with_lookup,
};

use super::refused::{http_everywhere, ip, refusal};
use super::server::{CountingServer, redirect_response};

async fn fetch(client: &reqwest::Client, url: &str) -> (u16, String) {
    let resp = client.get(url).send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

#[tokio::test]
async fn an_allowlisted_loopback_port_with_plain_http_is_reached() {
    let server = CountingServer::ok().await;
    let other = CountingServer::ok().await;
    let here = format!("127.0.0.1:{}", server.port());
    let policy = EgressPolicy::default()
        .allow_host(&here)
        .unwrap()
        .allow_plain_http(&here)
        .unwrap();
    let client = client(&policy).unwrap();
    assert_eq!(
        fetch(&client, &format!("http://{here}/x")).await,
        (200, "ok".into())
    );
    assert_eq!(server.connections(), 1);
    // The entry names one port: the same address on another port is still refused.
    let elsewhere = format!("http://127.0.0.1:{}/", other.port());
    assert_eq!(
        refusal(&client, &elsewhere).await,
        Some(EgressError::PlainHttp {
            host: "127.0.0.1".into()
        })
    );
    assert_eq!(other.connections(), 0);
}

#[tokio::test]
async fn a_name_allowlisted_on_one_port_resolves_only_for_that_port() {
    let server = CountingServer::ok().await;
    let other = CountingServer::ok().await;
    let lookup = StaticLookup::new().with("svc.test", &[ip("127.0.0.1")]);
    let policy = http_everywhere()
        .allow_host(&format!("svc.test:{}", server.port()))
        .unwrap();
    let client = client_with_lookup(&policy, Arc::new(lookup)).unwrap();
    let url = |p: u16| format!("http://svc.test:{p}/");
    assert_eq!(
        fetch(&client, &url(server.port())).await,
        (200, "ok".into())
    );
    assert_eq!(
        refusal(&client, &url(other.port())).await,
        Some(EgressError::ForbiddenResolution {
            host: "svc.test".into(),
            addr: ip("127.0.0.1"),
            class: AddrClass::Loopback
        })
    );
    assert_eq!([server.connections(), other.connections()], [1, 0]);
}

#[tokio::test]
async fn a_redirect_to_another_allowlisted_host_is_followed() {
    let second = CountingServer::ok().await;
    let to = format!("http://b.test:{}/landing", second.port());
    let first = CountingServer::start(move |_| redirect_response(&to)).await;
    let lookup = StaticLookup::new()
        .with("a.test", &[ip("127.0.0.1")])
        .with("b.test", &[ip("127.0.0.1")]);
    let policy = http_everywhere()
        .allow_host("a.test")
        .unwrap()
        .allow_host("b.test")
        .unwrap();
    let client = client_with_lookup(&policy, Arc::new(lookup)).unwrap();
    let resp = client
        .get(format!("http://a.test:{}/", first.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(
        (resp.status().as_u16(), resp.url().as_str()),
        (
            200,
            format!("http://b.test:{}/landing", second.port()).as_str()
        )
    );
    assert_eq!([first.connections(), second.connections()], [1, 1]);
}

#[tokio::test]
async fn more_than_max_redirects_hops_are_refused() {
    // /0 → /1 → /2 → … forever.
    let chain = CountingServer::start(|target| {
        let n: u32 = target.trim_start_matches('/').parse().unwrap_or(0);
        redirect_response(&format!("/{}", n + 1))
    })
    .await;
    let lookup = StaticLookup::new().with("loop.test", &[ip("127.0.0.1")]);
    let policy = EgressPolicy {
        max_redirects: 2,
        ..http_everywhere().allow_host("loop.test").unwrap()
    };
    let client = client_with_lookup(&policy, Arc::new(lookup)).unwrap();
    let origin = format!("http://loop.test:{}", chain.port());
    assert_eq!(
        refusal(&client, &format!("{origin}/0")).await,
        Some(EgressError::TooManyRedirects {
            max: 2,
            next: origin.clone()
        })
    );
    // The first request and two hops.
    assert_eq!(chain.connections(), 3);
}
