use std::net::IpAddr;
use std::sync::Arc;

use toolgate_net::{AddrClass, EgressError, EgressPolicy, StaticLookup};

use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn guard(policy: EgressPolicy, origins: &[&str]) -> RequestGuard {
    let lookup = StaticLookup::new()
        .with("evil.test", &[ip("10.0.0.1")])
        .with("public.test", &[ip("93.184.216.34")])
        .with("app.test", &[ip("127.0.0.1")]);
    let origins = origins.iter().map(|o| o.parse().unwrap()).collect();
    RequestGuard::new(policy, Arc::new(lookup), origins)
}

async fn check(g: &RequestGuard, url: &str) -> Result<Vec<IpAddr>, GuardRefusal> {
    g.check(&Url::parse(url).unwrap()).await
}

#[tokio::test]
async fn requests_are_decided_by_scheme_origin_address_and_resolution() {
    let g = guard(
        EgressPolicy::default()
            .allow_host("app.test")
            .unwrap()
            .allow_plain_http("app.test")
            .unwrap(),
        &[],
    );
    let got = [
        check(&g, "https://public.test/x").await,
        check(&g, "http://app.test:8080/").await,
        check(&g, "https://evil.test/").await,
        check(&g, "https://169.254.169.254/").await,
        check(&g, "file:///etc/passwd").await,
        check(&g, "https://unknown.test/").await,
    ];
    assert_eq!(
        got,
        [
            Ok(vec![ip("93.184.216.34")]),
            Ok(vec![ip("127.0.0.1")]),
            Err(GuardRefusal::Egress(EgressError::ForbiddenResolution {
                host: "evil.test".into(),
                addr: ip("10.0.0.1"),
                class: AddrClass::Private,
            })),
            Err(GuardRefusal::Egress(EgressError::ForbiddenAddress {
                addr: ip("169.254.169.254"),
                port: None,
                class: AddrClass::CloudMetadata,
            })),
            Err(GuardRefusal::Scheme {
                scheme: "file".into()
            }),
            Err(GuardRefusal::Unresolved {
                host: "unknown.test".into(),
                error: "unknown.test is not in the static lookup table".into(),
            }),
        ]
    );
}

#[tokio::test]
async fn the_origin_allowlist_narrows_and_tunnels_follow_it() {
    let g = guard(
        EgressPolicy::default()
            .allow_host("127.0.0.1")
            .unwrap()
            .allow_plain_http("127.0.0.1")
            .unwrap(),
        &["http://127.0.0.1:8080"],
    );
    let refused = |origin: &str| GuardRefusal::Origin {
        origin: origin.into(),
    };
    assert_eq!(
        [
            check(&g, "http://127.0.0.1:8080/a").await,
            check(&g, "http://127.0.0.1:9090/").await,
            check(&g, "https://public.test/").await,
        ],
        [
            Ok(vec![]),
            Err(refused("http://127.0.0.1:9090")),
            Err(refused("https://public.test"))
        ]
    );
    // A tunnel (a WebSocket to the allowed http origin) is admitted; another port is not.
    assert_eq!(
        [
            g.tunnel_destinations("127.0.0.1", 8080).await,
            g.tunnel_destinations("127.0.0.1", 9090).await,
        ],
        [
            Ok(vec!["127.0.0.1:8080".parse().unwrap()]),
            Err(refused("https://127.0.0.1:9090"))
        ]
    );
}

#[test]
fn shown_urls_lose_credentials_queries_and_length() {
    let long = format!("https://example.com/{}", "a".repeat(300));
    assert_eq!(
        [
            display_url(&Url::parse("https://u:pw@example.com/p?token=s#f").unwrap()),
            display_url(&Url::parse(&long).unwrap())
                .chars()
                .count()
                .to_string(),
        ],
        ["https://example.com/p".to_owned(), "201".to_owned()]
    );
    assert_eq!(
        [authority("Example.COM", 443), authority("::1", 80)],
        ["example.com:443", "[::1]:80"]
    );
}
