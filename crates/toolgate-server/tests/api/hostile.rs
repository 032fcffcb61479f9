//! Issue 12, item 11: the Host and Origin guard parses the authority strictly. Hostile values
//! are sent over a raw TCP socket (an HTTP client library would refuse to send many of them),
//! to a public route, so that 200 means "accepted by the guard" and anything else — 403 from
//! the guard, 400 from the HTTP parser, a closed connection — means refused.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::fixture::TestServer;

/// Sends `head` (request line and headers, without the blank line) and returns the status,
/// or `None` if the server closed the connection without one. The answer is checked against
/// the OpenAPI document ([`crate::raw::checked_status`]).
pub async fn raw_status(addr: SocketAddr, head: &str) -> Option<u16> {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("{head}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        tcp.read_to_end(&mut buf),
    )
    .await
    .expect("the server answers or closes");
    if read.is_err() && buf.is_empty() {
        return None;
    }
    crate::raw::checked_status(head, &buf)
}

/// Host values an attacker (a rebinding page, a confused proxy) may send. `P` is the port.
fn hostile_hosts(p: u16) -> Vec<String> {
    [
        // the two of the issue
        "localhost:evil",
        "127.0.0.1:P@evil.com",
        // userinfo
        "localhost:P@evil.com",
        "user@localhost:P",
        "evil.com@localhost",
        "localhost@evil.com",
        "user:pass@127.0.0.1:P",
        // bad ports
        "localhost:99999",
        "localhost:65536",
        "localhost:-1",
        "localhost:+80",
        "localhost:",
        "localhost:P:P",
        "localhost:0x50",
        "localhost:000000000080",
        "localhost:8 0",
        "LOCALHOST:P:evil",
        "localhost:P,evil.com",
        // trailing dots and look-alike names
        "localhost.",
        "localhost.:P",
        "127.0.0.1.:P",
        "localhost..",
        "localhost.evil.com",
        "localhost.evil.com:P",
        "evil-localhost",
        "127.0.0.1.evil.com",
        // percent-encoding and odd bytes
        "localhost%2eevil.com",
        "%6cocalhost",
        "localhost%00",
        "local%20host",
        "localhost\\@evil.com",
        "localhost;evil.com",
        // whitespace inside
        "local host",
        "localhost :P",
        "localhost\t:P",
        // IPv6: zone ids, unbracketed, junk after the bracket
        "[::1%25lo]:P",
        "[::1%lo]:P",
        "[fe80::1%eth0]",
        "[::1",
        "[::1]evil",
        "[::1]:P:P",
        "[::1]@evil.com",
        "::1",
        "[127.0.0.1]",
        "[::ffff:127.0.0.1]x",
        // paths, queries, fragments
        "127.0.0.1/evil",
        "localhost/..",
        "localhost?x",
        "localhost#x",
        // numeric tricks resolving to 127.0.0.1 elsewhere
        "127.1",
        "2130706433",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "127.000.000.001",
        // empty
        "",
    ]
    .iter()
    .map(|h| h.replace('P', &p.to_string()))
    .collect()
}

#[tokio::test]
async fn hostile_host_values_are_refused() {
    let s = TestServer::with_internal_hosts().await;
    let p = s.addr.port();
    let mut through = Vec::new();
    let hosts = hostile_hosts(p);
    for host in &hosts {
        let status = raw_status(s.addr, &format!("GET /v1/health HTTP/1.1\r\nHost: {host}")).await;
        if status == Some(200) {
            through.push(host.clone());
        }
    }
    // Header-level tricks: no Host, two Hosts (either order), the absolute form naming
    // another authority, an obs-fold continuation.
    let tricks = [
        "GET /v1/health HTTP/1.1".to_owned(),
        format!("GET /v1/health HTTP/1.1\r\nHost: localhost:{p}\r\nHost: evil.com"),
        format!("GET /v1/health HTTP/1.1\r\nHost: evil.com\r\nHost: localhost:{p}"),
        format!("GET http://evil.com/v1/health HTTP/1.1\r\nHost: localhost:{p}"),
        format!("GET http://localhost:{p}@evil.com/v1/health HTTP/1.1\r\nHost: localhost:{p}"),
        format!("GET /v1/health HTTP/1.1\r\nHost: localhost:{p}\r\n evil.com"),
    ];
    for head in &tricks {
        if raw_status(s.addr, head).await == Some(200) {
            through.push(head.clone());
        }
    }
    assert_eq!(
        through,
        Vec::<String>::new(),
        "{} of {} hostile Host vectors got through",
        through.len(),
        hosts.len() + tricks.len()
    );
}

#[tokio::test]
async fn legitimate_host_values_are_accepted() {
    let s = TestServer::with_internal_hosts().await;
    let p = s.addr.port();
    for host in [
        "localhost".to_owned(),
        format!("localhost:{p}"),
        format!("LocalHost:{p}"),
        format!("127.0.0.1:{p}"),
        "127.0.0.1".to_owned(),
        format!("[::1]:{p}"),
        "[::1]".to_owned(),
        "toolgate.internal".to_owned(),
        "toolgate.internal:443".to_owned(),
        "TOOLGATE.internal".to_owned(),
    ] {
        let status = raw_status(s.addr, &format!("GET /v1/health HTTP/1.1\r\nHost: {host}")).await;
        assert_eq!(status, Some(200), "Host: {host}");
    }
    // The absolute form naming this server is fine.
    let status = raw_status(
        s.addr,
        &format!("GET http://localhost:{p}/v1/health HTTP/1.1\r\nHost: localhost:{p}"),
    )
    .await;
    assert_eq!(status, Some(200));
}

#[tokio::test]
async fn hostile_origins_are_refused_and_ours_accepted() {
    let s = TestServer::with_internal_hosts().await;
    let p = s.addr.port();
    let hostile: Vec<String> = [
        "http://localhost:evil",
        "http://127.0.0.1:P@evil.com",
        "http://user@localhost:P",
        "http://localhost:P@evil.com",
        "http://evil.com#@localhost:P",
        "http://localhost:P/path",
        "http://localhost:P/",
        "http://localhost:P?x",
        "http://localhost.:P",
        "http://localhost:P.evil.com",
        "http://localhost.evil.com:P",
        "http://localhost:65536",
        "http://localhost:P:P",
        "http://[::1%25lo]:P",
        "http://[::1]evil:P",
        "http://local%68ost:P",
        "javascript://localhost:P",
        "file://localhost",
        "ws://localhost:P",
        "null",
        "localhost:P",
        "http:/localhost:P",
        "http:///localhost:P",
        "http://",
        // another port or scheme on a loopback name is another origin (a local web app)
        "http://localhost:1",
        "http://127.0.0.1:3000",
        "https://localhost:P",
        // allowed_origins is matched whole, not as a prefix
        "https://console.example.evil.com",
        "https://console.example:8443",
    ]
    .iter()
    .map(|o| o.replace('P', &p.to_string()))
    .collect();
    let mut through = Vec::new();
    for origin in &hostile {
        let head = format!("GET /v1/health HTTP/1.1\r\nHost: localhost:{p}\r\nOrigin: {origin}");
        if raw_status(s.addr, &head).await == Some(200) {
            through.push(origin.clone());
        }
    }
    let two = format!(
        "GET /v1/health HTTP/1.1\r\nHost: localhost:{p}\r\nOrigin: http://localhost:{p}\r\nOrigin: http://evil.com"
    );
    if raw_status(s.addr, &two).await == Some(200) {
        through.push("two Origin headers".into());
    }
    assert_eq!(
        through,
        Vec::<String>::new(),
        "{} got through",
        through.len()
    );

    for origin in [
        format!("http://localhost:{p}"),
        format!("http://127.0.0.1:{p}"),
        format!("http://[::1]:{p}"),
        format!("HTTP://LOCALHOST:{p}"),
        "https://console.example".to_owned(),
    ] {
        let head = format!("GET /v1/health HTTP/1.1\r\nHost: localhost:{p}\r\nOrigin: {origin}");
        assert_eq!(
            raw_status(s.addr, &head).await,
            Some(200),
            "Origin: {origin}"
        );
    }
}
