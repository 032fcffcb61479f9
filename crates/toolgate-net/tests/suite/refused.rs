//! Every way of reaching a non-public address is refused before a connection is opened:
//! the counting server sees nothing, and the error is the guard's (found in reqwest's
//! error chain with `egress_refusal`).

use std::net::IpAddr;
use std::sync::Arc;

use toolgate_net::{
    AddrClass, EgressError, EgressPolicy, StaticLookup, client, client_with_lookup, egress_refusal,
};

use super::server::{CountingServer, redirect_response};

/// Plain http allowed everywhere, so that what is refused is the address, not the scheme.
pub fn http_everywhere() -> EgressPolicy {
    ["0.0.0.0/0", "::/0", "localhost", "*.test"]
        .iter()
        .fold(EgressPolicy::default(), |p, e| {
            p.allow_plain_http(e).unwrap()
        })
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The guard's refusal of a GET to `url` (`None`: it failed otherwise, or succeeded).
pub async fn refusal(client: &reqwest::Client, url: &str) -> Option<EgressError> {
    match client.get(url).send().await {
        Ok(resp) => panic!("{url} was fetched: {}", resp.status()),
        Err(e) => egress_refusal(&e).cloned(),
    }
}

fn literal(addr: &str, port: Option<u16>, class: AddrClass) -> Option<EgressError> {
    Some(EgressError::ForbiddenAddress {
        addr: ip(addr),
        port,
        class,
    })
}

fn resolved(host: &str, addr: &str, class: AddrClass) -> Option<EgressError> {
    Some(EgressError::ForbiddenResolution {
        host: host.into(),
        addr: ip(addr),
        class,
    })
}

#[tokio::test]
async fn ip_literals_in_every_spelling_are_refused_without_a_connection() {
    let server = CountingServer::ok().await;
    let p = server.port();
    let client = client(&http_everywhere()).unwrap();
    use AddrClass::*;
    // Loopback first: if the guard were broken these reach only our own server, and the
    // test stops before the metadata address is tried.
    let cases = [
        (
            format!("http://127.0.0.1:{p}/"),
            literal("127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("http://0.0.0.0:{p}/"),
            literal("0.0.0.0", Some(p), Unspecified),
        ),
        (
            format!("http://[::1]:{p}/"),
            literal("::1", Some(p), Loopback),
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{p}/"),
            literal("::ffff:127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("http://[::127.0.0.1]:{p}/"),
            literal("::127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("http://2130706433:{p}/"),
            literal("127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("http://0x7f.0.0.1:{p}/"),
            literal("127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("http://0x7f.1:{p}/"),
            literal("127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("http://0177.0.0.1:{p}/"),
            literal("127.0.0.1", Some(p), Loopback),
        ),
        (
            format!("https://127.0.0.1:{p}/"),
            literal("127.0.0.1", Some(p), Loopback),
        ),
    ];
    for (url, want) in &cases {
        assert_eq!((url, &refusal(&client, url).await), (url, want));
    }
    assert_eq!((server.connections(), server.bytes()), (0, 0));
    assert_eq!(
        refusal(&client, "http://169.254.169.254/latest/meta-data/").await,
        literal("169.254.169.254", None, CloudMetadata)
    );
}

#[tokio::test]
async fn names_resolving_to_non_public_addresses_are_refused() {
    let server = CountingServer::ok().await;
    let p = server.port();
    // The system resolver: localhost is loopback whichever family comes first.
    let system = client(&http_everywhere()).unwrap();
    match refusal(&system, &format!("http://localhost:{p}/")).await {
        Some(EgressError::ForbiddenResolution { host, addr, class }) => {
            assert_eq!(
                (
                    host.as_str(),
                    addr.is_loopback() || addr.to_canonical().is_loopback(),
                    class
                ),
                ("localhost", true, AddrClass::Loopback)
            );
        }
        other => panic!("localhost: {other:?}"),
    }
    let lookup = StaticLookup::new()
        .with("evil.test", &[ip("127.0.0.1")])
        .with("mapped.test", &[ip("::ffff:127.0.0.1")])
        .with("half.test", &[ip("93.184.216.34"), ip("127.0.0.1")])
        .with("private.test", &[ip("10.0.0.1")]);
    let guarded = client_with_lookup(&http_everywhere(), Arc::new(lookup)).unwrap();
    let got = [
        refusal(&guarded, &format!("http://evil.test:{p}/")).await,
        refusal(&guarded, &format!("http://mapped.test:{p}/")).await,
        refusal(&guarded, &format!("http://half.test:{p}/")).await,
    ];
    assert_eq!(
        got,
        [
            resolved("evil.test", "127.0.0.1", AddrClass::Loopback),
            resolved("mapped.test", "::ffff:127.0.0.1", AddrClass::Loopback),
            resolved("half.test", "127.0.0.1", AddrClass::Loopback),
        ]
    );
    assert_eq!(server.connections(), 0);
    // Only after the loopback cases held: a private address is refused the same way.
    assert_eq!(
        refusal(&guarded, "http://private.test/").await,
        resolved("private.test", "10.0.0.1", AddrClass::Private)
    );
}

#[tokio::test]
async fn a_redirect_to_a_non_public_address_is_refused_at_the_hop() {
    let target = CountingServer::ok().await;
    let t = target.port();
    let literal_hop = CountingServer::start(move |_| {
        redirect_response(&format!("http://127.0.0.1:{t}/internal"))
    })
    .await;
    let named_hop =
        CountingServer::start(move |_| redirect_response(&format!("http://evil.test:{t}/"))).await;
    let lookup = StaticLookup::new()
        .with("public.test", &[ip("127.0.0.1")])
        .with("evil.test", &[ip("127.0.0.1")]);
    let policy = http_everywhere().allow_host("public.test").unwrap();
    let client = client_with_lookup(&policy, Arc::new(lookup)).unwrap();
    let got = [
        refusal(
            &client,
            &format!("http://public.test:{}/", literal_hop.port()),
        )
        .await,
        refusal(
            &client,
            &format!("http://public.test:{}/", named_hop.port()),
        )
        .await,
    ];
    assert_eq!(
        got,
        [
            literal("127.0.0.1", Some(t), AddrClass::Loopback),
            resolved("evil.test", "127.0.0.1", AddrClass::Loopback),
        ]
    );
    assert_eq!(
        [
            literal_hop.connections(),
            named_hop.connections(),
            target.connections()
        ],
        [1, 1, 0]
    );
}

#[tokio::test]
async fn the_strict_default_refuses_plain_http() {
    let server = CountingServer::ok().await;
    let p = server.port();
    let client = client(&EgressPolicy::default()).unwrap();
    let got = [
        refusal(&client, &format!("http://127.0.0.1:{p}/")).await,
        refusal(&client, &format!("http://example.com:{p}/")).await,
    ];
    assert_eq!(
        got,
        [
            Some(EgressError::PlainHttp {
                host: "127.0.0.1".into()
            }),
            Some(EgressError::PlainHttp {
                host: "example.com".into()
            }),
        ]
    );
    assert_eq!(server.connections(), 0);
}
