//! Issue 12, item 10: `serve` drops a client that sends its headers too slowly (slowloris),
//! and holds at most `max_connections` connections, closing new ones above that.
//! Issue 30, item 4: a body trickled with a valid token is cut at the body read deadline, and
//! one address holds at most `max_connections_per_ip` connections.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolgate_server::ServerConfig;

use crate::fixture::{Setup, TestServer, tokens};

async fn server(header_read_timeout_ms: u64, max_connections: usize) -> TestServer {
    TestServer::with(Setup {
        server: ServerConfig {
            tokens: tokens(),
            header_read_timeout_ms,
            max_connections,
            ..ServerConfig::default()
        },
        ..Setup::default()
    })
    .await
}

/// Reads until the server closes the connection (EOF or reset); `false` if it is still open
/// after `within` (a guard against hanging, not the assertion).
async fn closed_by_server(tcp: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(within, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    read.await.is_ok()
}

/// One complete request on `tcp`; the status of its answer (checked against the OpenAPI
/// document), `None` if the server closed the connection or sent no whole answer in 20 s.
async fn get_health(tcp: &mut TcpStream, port: u16) -> Option<u16> {
    let head = format!("GET /v1/health HTTP/1.1\r\nHost: localhost:{port}");
    tcp.write_all(format!("{head}\r\n\r\n").as_bytes())
        .await
        .ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        while crate::raw::parse(&buf).is_none() {
            match tcp.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .ok()??;
    crate::raw::checked_status(&head, &buf)
}

#[tokio::test]
async fn a_slowloris_client_is_disconnected_after_the_header_timeout() {
    let s = server(300, 1024).await;
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    let (mut rd, mut wr) = tcp.split();
    let trickle = async {
        // One byte of a never-ending header every 50 ms, until the server hangs up.
        let head = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        for b in head.iter().cycle() {
            if wr.write_all(&[*b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let watch = async {
        let mut buf = [0u8; 256];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
    };
    let closed = tokio::time::timeout(Duration::from_secs(15), async {
        tokio::select! {
            closed = watch => closed,
            () = trickle => true,
        }
    })
    .await
    .unwrap_or(false);
    assert!(closed, "the server kept the slowloris connection open");
    // A well-behaved client still gets its answer.
    let mut ok = TcpStream::connect(s.addr).await.unwrap();
    assert_eq!(get_health(&mut ok, s.addr.port()).await, Some(200));
}

#[tokio::test]
async fn an_idle_connection_that_never_sends_a_header_is_dropped() {
    let s = server(300, 1024).await;
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    assert!(closed_by_server(&mut tcp, Duration::from_secs(15)).await);
}

async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.unwrap()
}

#[tokio::test]
async fn connections_over_the_cap_are_closed_and_those_within_work() {
    let s = server(30_000, 2).await;
    let port = s.addr.port();
    let mut a = connect(s.addr).await;
    let mut b = connect(s.addr).await;
    // Both within the cap answer (and keep the connection open: HTTP/1.1 keep-alive).
    assert_eq!(get_health(&mut a, port).await, Some(200));
    assert_eq!(get_health(&mut b, port).await, Some(200));
    // A third is closed without an answer.
    let mut c = connect(s.addr).await;
    assert_eq!(get_health(&mut c, port).await, None);
    assert!(closed_by_server(&mut c, Duration::from_secs(15)).await);
    // Those within the cap still work.
    assert_eq!(get_health(&mut a, port).await, Some(200));
    // Once one closes, a new connection gets its place.
    drop(b);
    let mut served = false;
    for _ in 0..200 {
        let mut d = connect(s.addr).await;
        if get_health(&mut d, port).await == Some(200) {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(served, "a freed place was never reused");
}

async fn limited(body_read_timeout_ms: u64, max_connections: usize, per_ip: usize) -> TestServer {
    TestServer::with(Setup {
        server: ServerConfig {
            tokens: tokens(),
            body_read_timeout_ms,
            max_connections,
            max_connections_per_ip: per_ip,
            ..ServerConfig::default()
        },
        ..Setup::default()
    })
    .await
}

/// A connection from `local` (any 127.x address is this host's).
async fn connect_from(local: &str, addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// `GET /v1/health` on fresh connections until one is answered 200 (within 20 s).
async fn eventually_served(addr: SocketAddr, from: &str) -> bool {
    for _ in 0..400 {
        let mut tcp = connect_from(from, addr).await;
        if get_health(&mut tcp, addr.port()).await == Some(200) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Issue 30, 30.20: every connection a valid caller trickling a body (the attack held 1,100);
/// the body deadline ends each, so the cap frees up and a legitimate request is answered.
#[tokio::test]
async fn trickled_bodies_are_cut_at_the_body_deadline_and_others_are_served() {
    let s = limited(300, 4, 4).await;
    let port = s.addr.port();
    let mut slow = Vec::new();
    for _ in 0..4 {
        let mut tcp = connect(s.addr).await;
        let head = format!(
            "POST /v1/calls HTTP/1.1\r\nHost: localhost:{port}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{",
            crate::fixture::DEV
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        slow.push(tcp);
    }
    let trickle = async {
        // One byte per connection every 50 ms, for longer than the test waits.
        for _ in 0..600 {
            for tcp in &mut slow {
                let _ = tcp.write_all(b" ").await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let served = tokio::select! {
        served = eventually_served(s.addr, "127.0.0.1") => served,
        () = trickle => false,
    };
    assert!(served, "trickled bodies held every connection");
    for mut tcp in slow {
        assert!(
            closed_by_server(&mut tcp, Duration::from_secs(15)).await,
            "a trickled body's connection stayed open"
        );
    }
}

/// Issue 30, 30.21: one address flooding connections (unauthenticated, reconnecting) holds
/// its budget and no more; another address is served while the flood holds it.
#[tokio::test]
async fn one_address_holds_its_budget_and_others_are_served() {
    let s = limited(30_000, 8, 3).await;
    let mut flood = Vec::new();
    for _ in 0..3 {
        flood.push(connect_from("127.0.0.1", s.addr).await);
    }
    // The fourth from the same address is closed without an answer.
    let mut over = connect_from("127.0.0.1", s.addr).await;
    assert_eq!(get_health(&mut over, s.addr.port()).await, None);
    // Another address still gets its answer while the flood holds its share.
    let mut other = connect_from("127.0.0.2", s.addr).await;
    assert_eq!(get_health(&mut other, s.addr.port()).await, Some(200));
    // The flood's share comes back as its connections close.
    drop(flood);
    assert!(eventually_served(s.addr, "127.0.0.1").await);
}
