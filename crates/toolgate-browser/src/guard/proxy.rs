//! [`EgressProxy`]: the loopback HTTP proxy every Chromium connection goes through.
//!
//! Chromium is started with `--proxy-server=http://127.0.0.1:<port>` and
//! `--proxy-bypass-list=<-loopback>` (which removes the implicit bypass for loopback), so it
//! neither resolves names nor opens connections itself. For each client connection the proxy
//! reads one request head:
//! - `CONNECT host:port` (https, wss): the tunnel is checked like an https URL to that
//!   authority (an `allow_origins` entry of either scheme on that host and port admits it);
//! - an absolute-form request (`GET http://host/path`): the URL is checked as it is, the
//!   request is forwarded in origin form with `Connection: close`.
//!
//! Either way the name is resolved once, every address is checked, and only the checked
//! addresses are connected to. Refusals answer `403`; those for a host a page asked for are
//! recorded for the model (the rest is Chromium's own background traffic). One request per client
//! connection keeps the proxy free of HTTP state: Chromium opens a new one for the next.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, copy_bidirectional};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use url::Url;

use super::{Refusal, Refusals, RequestGuard, authority, display_url};

/// Largest request head accepted (Chromium's are far smaller).
const MAX_HEAD: usize = 32 * 1024;
/// Deadline for connecting to one checked address.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The running proxy; stops when dropped.
#[derive(Debug)]
pub struct EgressProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl EgressProxy {
    /// Binds an ephemeral loopback port and serves until dropped.
    pub async fn start(guard: RequestGuard, refusals: Refusals) -> io::Result<EgressProxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let guard = guard.clone();
                let refusals = refusals.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(client, &guard, &refusals).await {
                        tracing::debug!("browser proxy connection ended: {e}");
                    }
                });
            }
        });
        Ok(EgressProxy { addr, task })
    }

    /// Where Chromium should send its requests.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One parsed request head.
#[derive(Debug, PartialEq, Eq)]
enum Head {
    Connect {
        host: String,
        port: u16,
    },
    Forward {
        method: String,
        url: Url,
        version: String,
        headers: Vec<(String, String)>,
    },
}

async fn serve(mut client: TcpStream, guard: &RequestGuard, refusals: &Refusals) -> io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let parsed = match parse_head(&head) {
        Ok(h) => h,
        Err(why) => return answer(&mut client, "400 Bad Request", why).await,
    };
    let (target, shown, dest) = match &parsed {
        Head::Connect { host, port } => {
            let dest = authority(host, *port);
            (
                guard.tunnel_destinations(host, *port).await,
                dest.clone(),
                dest,
            )
        }
        Head::Forward { url, .. } => {
            let host = url.host_str().unwrap_or_default();
            let dest = authority(host, url.port_or_known_default().unwrap_or(80));
            (guard.destinations(url).await, display_url(url), dest)
        }
    };
    let addrs = match target {
        Ok(addrs) => addrs,
        Err(refusal) => {
            let status = if refusal.is_policy() {
                "403 Forbidden"
            } else {
                "502 Bad Gateway"
            };
            let reason = refusal.to_string();
            if !refusals.is_page_authority(&dest) {
                tracing::debug!(
                    "browser proxy refused Chromium's own request to {shown}: {reason}"
                );
            } else if refusal.is_policy() {
                refusals.record(Refusal {
                    url: shown,
                    reason: reason.clone(),
                    navigation: false,
                    frame: None,
                });
            }
            return answer(&mut client, status, &reason).await;
        }
    };
    let mut upstream = match connect_any(&addrs).await {
        Ok(s) => s,
        Err(e) => return answer(&mut client, "502 Bad Gateway", &e.to_string()).await,
    };
    let _ = upstream.set_nodelay(true);
    match parsed {
        Head::Connect { .. } => {
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?;
        }
        Head::Forward {
            method,
            url,
            version,
            headers,
        } => {
            upstream
                .write_all(origin_form(&method, &url, &version, &headers).as_bytes())
                .await?;
        }
    }
    upstream.write_all(&rest).await?;
    copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

async fn connect_any(addrs: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = e,
            Err(_) => {
                last = io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connecting to {addr} timed out"),
                )
            }
        }
    }
    Err(last)
}

/// Reads up to the end of the head; returns it and whatever body bytes came with it.
async fn read_head(client: &mut TcpStream) -> io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed before a request head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            let head = String::from_utf8(buf).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidData, "request head is not UTF-8")
            })?;
            return Ok((head, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
    }
}

fn parse_head(head: &str) -> Result<Head, &'static str> {
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("malformed request line");
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let url =
            Url::parse(&format!("https://{target}/")).map_err(|_| "CONNECT needs host:port")?;
        let host = url.host_str().ok_or("CONNECT needs host:port")?;
        let port = url
            .port_or_known_default()
            .ok_or("CONNECT needs host:port")?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        return Ok(Head::Connect { host, port });
    }
    let url = Url::parse(target).map_err(|_| "a proxy request needs an absolute http URL")?;
    if url.scheme() != "http" {
        return Err("a proxy request needs an absolute http URL");
    }
    let headers = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Head::Forward {
        method: method.to_owned(),
        url,
        version: version.to_owned(),
        headers,
    })
}

/// The request as the origin server expects it: path form, no proxy headers, one request.
fn origin_form(method: &str, url: &Url, version: &str, headers: &[(String, String)]) -> String {
    let mut path = url.path().to_owned();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let mut out = format!("{method} {path} {version}\r\n");
    let hop = [
        "connection",
        "proxy-connection",
        "proxy-authorization",
        "keep-alive",
    ];
    for (k, v) in headers {
        if !hop.contains(&k.to_ascii_lowercase().as_str()) {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    out
}

async fn answer(client: &mut TcpStream, status: &str, reason: &str) -> io::Result<()> {
    let body = format!("toolgate browser guard: {reason}\n");
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(msg.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_into_tunnels_and_forwards() {
        let connect =
            parse_head("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
        let v6 = parse_head("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n");
        let get = parse_head(
            "GET http://127.0.0.1:8080/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Connection: keep-alive\r\n\r\n",
        );
        let bad = parse_head("GET /relative HTTP/1.1\r\n\r\n");
        assert_eq!(
            [connect, v6, bad],
            [
                Ok(Head::Connect {
                    host: "example.com".into(),
                    port: 443
                }),
                Ok(Head::Connect {
                    host: "::1".into(),
                    port: 8443
                }),
                Err("a proxy request needs an absolute http URL"),
            ]
        );
        let Ok(Head::Forward {
            method,
            url,
            version,
            headers,
        }) = get
        else {
            panic!("not a forward: {get:?}");
        };
        assert_eq!(
            origin_form(&method, &url, &version, &headers),
            "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n"
        );
    }
}
