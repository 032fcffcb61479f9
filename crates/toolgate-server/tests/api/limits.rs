//! Issue 12, item 10: `serve` drops a client that sends its headers too slowly (slowloris),
//! and holds at most `max_connections` connections, closing new ones above that.

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
