//! A tiny HTTP/1.1 server on 127.0.0.1 that counts accepted connections and bytes received,
//! and answers each request from a function of its request target (one request per
//! connection: `Connection: close`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type Reply = Arc<dyn Fn(&str) -> String + Send + Sync>;

pub struct CountingServer {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    bytes: Arc<AtomicUsize>,
}

impl CountingServer {
    pub async fn start(reply: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = CountingServer {
            addr: listener.local_addr().unwrap(),
            connections: Arc::default(),
            bytes: Arc::default(),
        };
        let (connections, bytes) = (Arc::clone(&server.connections), Arc::clone(&server.bytes));
        let reply: Reply = Arc::new(reply);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer(stream, Arc::clone(&bytes), Arc::clone(&reply)));
            }
        });
        server
    }

    /// A server answering every request `200 ok`.
    pub async fn ok() -> Self {
        CountingServer::start(|_| ok_response()).await
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::SeqCst)
    }
}

async fn answer(mut stream: tokio::net::TcpStream, bytes: Arc<AtomicUsize>, reply: Reply) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                bytes.fetch_add(n, Ordering::SeqCst);
                head.extend_from_slice(&buf[..n]);
            }
        }
    }
    let text = String::from_utf8_lossy(&head);
    let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
    let _ = stream.write_all(reply(&target).as_bytes()).await;
    let _ = stream.shutdown().await;
}

pub fn ok_response() -> String {
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".to_owned()
}

pub fn redirect_response(location: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}
