//! The egress proxy of sandboxed processes: the only way out of a sandbox's network
//! namespace. One [`EgressProxy`] per grant (an MCP server, the shell of a role) listens on
//! a Unix socket that the sandbox's view binds in; inside, a relay turns
//! `HTTP_PROXY`/`HTTPS_PROXY` = `http://127.0.0.1:3128` into that socket.
//!
//! Per connection: the request head is read (16 KiB at most, within 10 s); `CONNECT
//! host:port` (any TLS or other stream) or an absolute-form plain-HTTP request
//! (`GET http://host/path`) names the destination; the host must match the grant's
//! allowlist, then the SSRF guard judges it as for every other request toolgate makes
//! ([`check_url`](crate::check_url)-style checks of a literal address, [`check_resolved`]
//! on the looked-up addresses, which are the ones connected to). Every decision — allowed
//! or refused, with the bytes relayed — goes to the grant's [`ProxyAudit`].

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use url::Host;

use crate::addr::classify;
use crate::check::check_resolved;
use crate::pattern::HostPattern;
use crate::policy::EgressPolicy;
use crate::resolve::Lookup;

/// Largest request head read before deciding.
const MAX_HEAD: usize = 16 * 1024;
/// Deadline for the request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// What one sandboxed process may reach.
#[derive(Clone)]
pub struct ProxyGrant {
    /// Who the grant is for, as audited (`mcp:everything`, `shell:ci`).
    pub name: String,
    /// Destinations allowed at all (nothing else is).
    pub allow: Vec<HostPattern>,
    /// The SSRF guard's rules (`[egress]`): an allowed name must still resolve to public
    /// addresses unless these allow more.
    pub policy: Arc<EgressPolicy>,
    pub lookup: Arc<dyn Lookup>,
}

impl std::fmt::Debug for ProxyGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyGrant")
            .field("name", &self.name)
            .field("allow", &self.allow)
            .finish_non_exhaustive()
    }
}

/// How the destination was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyMethod {
    /// `CONNECT host:port`: a tunnel.
    Connect,
    /// An absolute-form plain-HTTP request.
    Http,
}

/// One decided connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEvent {
    pub grant: String,
    pub method: Option<ProxyMethod>,
    /// The destination as asked (empty when the request could not be read).
    pub host: String,
    pub port: u16,
    /// `None`: relayed; `Some(why)`: refused.
    pub refused: Option<String>,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub duration: Duration,
}

/// Where every decided connection is recorded.
pub trait ProxyAudit: Send + Sync + std::fmt::Debug + 'static {
    fn record(&self, event: ProxyEvent);
}

/// A running proxy: stops and removes its socket when dropped.
#[derive(Debug)]
pub struct EgressProxy {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl EgressProxy {
    /// Listens on a new Unix socket at `path` (its directory must be private to toolgate)
    /// on the current tokio runtime.
    pub fn bind(
        path: impl Into<PathBuf>,
        grant: ProxyGrant,
        audit: Arc<dyn ProxyAudit>,
    ) -> std::io::Result<Self> {
        let path = path.into();
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        let grant = Arc::new(grant);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let (grant, audit) = (Arc::clone(&grant), Arc::clone(&audit));
                tokio::spawn(async move {
                    let event = serve(client, &grant).await;
                    audit.record(event);
                });
            }
        });
        Ok(EgressProxy { path, task })
    }

    /// The socket to bind into a sandbox's view.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The destination named by a request head.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    method: ProxyMethod,
    host: String,
    port: u16,
    /// For plain HTTP: the head to send upstream (origin-form request line, no proxy
    /// headers, one request per connection).
    forward: Option<Vec<u8>>,
}

async fn serve(mut client: UnixStream, grant: &ProxyGrant) -> ProxyEvent {
    let started = Instant::now();
    let mut event = ProxyEvent {
        grant: grant.name.clone(),
        method: None,
        host: String::new(),
        port: 0,
        refused: None,
        bytes_up: 0,
        bytes_down: 0,
        duration: Duration::ZERO,
    };
    let outcome = async {
        let (head, rest) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client))
            .await
            .map_err(|_| (408, "no request head within 10 s".to_owned()))??;
        let target = parse_head(&head).map_err(|why| (400, why))?;
        event.method = Some(target.method);
        event.host.clone_from(&target.host);
        event.port = target.port;
        let upstream = open(grant, &target.host, target.port)
            .await
            .map_err(|why| (403, why))?;
        Ok::<_, (u16, String)>((target, rest, upstream))
    }
    .await;
    match outcome {
        Err((status, why)) => {
            let reason = match status {
                400 => "Bad Request",
                408 => "Request Timeout",
                _ => "Forbidden",
            };
            let body = format!("toolgate egress proxy: {why}\n");
            let answer = format!(
                "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = client.write_all(answer.as_bytes()).await;
            event.refused = Some(why);
        }
        Ok((target, rest, mut upstream)) => {
            let first = match &target.forward {
                None => {
                    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
                    if client.write_all(established).await.is_err() {
                        event.duration = started.elapsed();
                        return event;
                    }
                    rest
                }
                Some(head) => [head.as_slice(), &rest].concat(),
            };
            if upstream.write_all(&first).await.is_ok() {
                let (up, down) = relay(&mut client, &mut upstream).await;
                event.bytes_up = up + first.len() as u64;
                event.bytes_down = down;
            }
        }
    }
    event.duration = started.elapsed();
    event
}

/// Reads until the end of the head; returns it and whatever followed it.
async fn read_head(
    client: &mut (impl AsyncRead + Unpin),
) -> Result<(Vec<u8>, Vec<u8>), (u16, String)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err((400, format!("request head over {MAX_HEAD} bytes")));
        }
        let n = client
            .read(&mut chunk)
            .await
            .map_err(|e| (400, format!("reading the request: {e}")))?;
        if n == 0 {
            return Err((
                400,
                "the connection closed before a request head".to_owned(),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `CONNECT host:port HTTP/1.1` or `METHOD http://host[:port]/path HTTP/1.x`.
fn parse_head(head: &[u8]) -> Result<Target, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_owned())?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("not a request line: {line:?}"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("unsupported protocol {version:?}"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let url = url::Url::parse(&format!("tcp://{target}"))
            .map_err(|e| format!("CONNECT target {target:?}: {e}"))?;
        let (Some(host), Some(port)) = (url.host_str(), url.port()) else {
            return Err(format!("CONNECT needs host:port, got {target:?}"));
        };
        if !url.username().is_empty() || url.path() != "" && url.path() != "/" {
            return Err(format!("CONNECT needs host:port, got {target:?}"));
        }
        return Ok(Target {
            method: ProxyMethod::Connect,
            host: host.trim_matches(['[', ']']).to_owned(),
            port,
            forward: None,
        });
    }
    let url = url::Url::parse(target).map_err(|_| {
        format!("a plain request must name an absolute http:// URL (https goes through CONNECT), got {target:?}")
    })?;
    if url.scheme() != "http" {
        return Err(format!(
            "only http:// is forwarded as a request (https goes through CONNECT), got {}",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("credentials in the URL are refused".to_owned());
    }
    let host = url.host_str().ok_or("the URL has no host")?;
    let port = url.port_or_known_default().unwrap_or(80);
    let mut origin = url.path().to_owned();
    if let Some(q) = url.query() {
        origin.push('?');
        origin.push_str(q);
    }
    let mut forward = format!("{method} {origin} {version}\r\n");
    for header in lines.filter(|h| !h.is_empty()) {
        let name = header.split(':').next().unwrap_or_default().trim();
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("proxy-") || lower == "connection" || lower == "keep-alive" {
            continue;
        }
        forward.push_str(header);
        forward.push_str("\r\n");
    }
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Target {
        method: ProxyMethod::Http,
        host: host.trim_matches(['[', ']']).to_owned(),
        port,
        forward: Some(forward.into_bytes()),
    })
}

/// Allowlist, then the SSRF guard, then a connection to the checked addresses.
async fn open(grant: &ProxyGrant, host: &str, port: u16) -> Result<TcpStream, String> {
    let parsed = Host::parse(host).map_err(|e| format!("bad host {host:?}: {e}"))?;
    let parsed_ref = match &parsed {
        Host::Domain(d) => Host::Domain(d.as_str()),
        Host::Ipv4(v4) => Host::Ipv4(*v4),
        Host::Ipv6(v6) => Host::Ipv6(*v6),
    };
    if !grant
        .allow
        .iter()
        .any(|p| p.matches_host(&parsed_ref, Some(port)))
    {
        return Err(format!(
            "{host}:{port} is not in this sandbox's egress allowlist ({})",
            grant.name
        ));
    }
    let addrs: Vec<IpAddr> = match parsed {
        Host::Domain(name) => {
            let addrs = grant
                .lookup
                .lookup(&name)
                .await
                .map_err(|e| format!("cannot resolve {name}: {e}"))?;
            check_resolved(&grant.policy, &name, Some(port), &addrs).map_err(|e| e.to_string())?;
            addrs
        }
        Host::Ipv4(_) | Host::Ipv6(_) => {
            let ip = match parsed {
                Host::Ipv4(v4) => IpAddr::V4(v4),
                Host::Ipv6(v6) => IpAddr::V6(v6),
                Host::Domain(_) => unreachable!("matched above"),
            };
            if classify(ip).is_forbidden() && !grant.policy.allows_host(&parsed_ref, Some(port)) {
                return Err(format!(
                    "{host}:{port} is a non-public address ({}); [egress] allow_hosts does not \
                     name it",
                    classify(ip)
                ));
            }
            vec![ip]
        }
    };
    let deadline = grant
        .policy
        .connect_timeout()
        .unwrap_or(Duration::from_secs(30));
    let mut last = format!("{host} has no address");
    for ip in addrs {
        match tokio::time::timeout(deadline, TcpStream::connect(SocketAddr::new(ip, port))).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = format!("cannot connect to {ip}:{port}: {e}"),
            Err(_) => last = format!("connecting to {ip}:{port} timed out"),
        }
    }
    Err(last)
}

/// Copies both ways until both sides are done; the bytes each way.
async fn relay(
    client: &mut (impl AsyncRead + AsyncWrite + Unpin),
    upstream: &mut (impl AsyncRead + AsyncWrite + Unpin),
) -> (u64, u64) {
    tokio::io::copy_bidirectional(client, upstream)
        .await
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_name_their_destination() {
        let connect =
            parse_head(b"CONNECT registry.npmjs.org:443 HTTP/1.1\r\nHost: x\r\n").unwrap();
        assert_eq!(
            (connect.method, connect.host.as_str(), connect.port),
            (ProxyMethod::Connect, "registry.npmjs.org", 443)
        );
        let v6 = parse_head(b"CONNECT [::1]:8443 HTTP/1.1\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
        let get = parse_head(
            b"GET http://example.com:8080/a?b=1 HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n",
        )
        .unwrap();
        assert_eq!((get.host.as_str(), get.port), ("example.com", 8080));
        assert_eq!(
            String::from_utf8(get.forward.unwrap()).unwrap(),
            "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
        );
        for bad in [
            &b"GET /relative HTTP/1.1\r\n"[..],
            b"GET https://example.com/ HTTP/1.1\r\n",
            b"GET http://u:p@example.com/ HTTP/1.1\r\n",
            b"CONNECT example.com HTTP/1.1\r\n",
            b"CONNECT example.com:443 SPDY/3\r\n",
        ] {
            assert!(parse_head(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
