//! [`FakeHub`]: a Hugging Face Hub stand-in on 127.0.0.1 for `toolgate rag model pull`
//! tests. It serves files at `/{repo}/resolve/{revision}/{file}`, honours `Range: bytes=N-`
//! with `206` and `Content-Range` (or ignores it on request, answering `200`), can cut the
//! connection mid-file once, and records every request's path and `Range` header.
//!
//! Plain threads and `std::net`, one request per connection (`Connection: close`), so it
//! serves a synchronous test that runs the binary as well as an async one.

// A fixture that cannot bind or read its files fails the test that asked for it.
#![allow(clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// One request the hub received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubRequest {
    pub path: String,
    pub range: Option<String>,
}

#[derive(Default)]
struct HubState {
    files: HashMap<String, Vec<u8>>,
    /// The next answer for a path ending in this file name sends this many body bytes, then
    /// closes the connection.
    cut: Option<(String, usize)>,
    ignore_range: bool,
    requests: Vec<HubRequest>,
}

pub struct FakeHub {
    addr: SocketAddr,
    state: Arc<Mutex<HubState>>,
    stop: Arc<AtomicBool>,
}

impl FakeHub {
    /// Listens on 127.0.0.1 on a free port.
    pub fn start() -> FakeHub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake hub");
        let addr = listener.local_addr().expect("the fake hub's address");
        let state = Arc::new(Mutex::new(HubState::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (Arc::clone(&state), Arc::clone(&stop));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let st = Arc::clone(&st);
                std::thread::spawn(move || answer(conn, &st));
            }
        });
        FakeHub { addr, state, stop }
    }

    /// `http://127.0.0.1:PORT`, the value for `HF_ENDPOINT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `127.0.0.1:PORT`, the entry for `[egress] allow_hosts` and `allow_http`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    fn state(&self) -> MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serves `bytes` as `file` of `repo` at `revision`.
    pub fn put(&self, repo: &str, revision: &str, file: &str, bytes: Vec<u8>) {
        let path = format!("/{repo}/resolve/{revision}/{file}");
        self.state().files.insert(path, bytes);
    }

    /// Serves each of `files` from `dir`.
    pub fn put_dir(&self, repo: &str, revision: &str, dir: &Path, files: &[&str]) {
        for f in files {
            let bytes = std::fs::read(dir.join(f)).expect("read a model file to serve");
            self.put(repo, revision, f, bytes);
        }
    }

    /// Flips one byte in the middle of every served copy of `file`.
    pub fn corrupt(&self, file: &str) {
        let suffix = format!("/{file}");
        for (path, bytes) in &mut self.state().files {
            if path.ends_with(&suffix) && !bytes.is_empty() {
                let mid = bytes.len() / 2;
                bytes[mid] ^= 0x01;
            }
        }
    }

    /// The next answer for `file` stops after `after` body bytes and closes the connection.
    pub fn cut_next(&self, file: &str, after: usize) {
        self.state().cut = Some((format!("/{file}"), after));
    }

    /// Answers range requests with the whole file and `200`, as servers without range
    /// support do.
    pub fn ignore_range(&self, ignore: bool) {
        self.state().ignore_range = ignore;
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<HubRequest> {
        self.state().requests.clone()
    }
}

impl Drop for FakeHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// `bytes=N-` → N.
fn range_from(value: &str) -> Option<usize> {
    value
        .trim()
        .strip_prefix("bytes=")?
        .strip_suffix('-')?
        .parse()
        .ok()
}

fn answer(conn: TcpStream, state: &Mutex<HubState>) {
    let Ok(read_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut range = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("range")
        {
            range = Some(value.trim().to_owned());
        }
    }
    let (body, cut, ignore) = {
        let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
        st.requests.push(HubRequest {
            path: path.clone(),
            range: range.clone(),
        });
        let body = st.files.get(&path).cloned();
        let cut = match &st.cut {
            Some((suffix, n)) if path.ends_with(suffix.as_str()) => {
                let n = *n;
                st.cut = None;
                Some(n)
            }
            _ => None,
        };
        (body, cut, st.ignore_range)
    };
    let mut out = conn;
    let Some(body) = body else {
        let _ = out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 15\r\nConnection: close\r\n\r\nEntry not found",
        );
        return;
    };
    let from = range.as_deref().and_then(range_from).filter(|_| !ignore);
    let head = match from {
        Some(n) if n >= body.len() => {
            let _ = write!(
                out,
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                body.len()
            );
            return;
        }
        Some(n) => format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {n}-{}/{}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n",
            body.len() - 1,
            body.len(),
            body.len() - n
        ),
        None => format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n",
            body.len()
        ),
    };
    let slice = &body[from.unwrap_or(0)..];
    let send = cut.map_or(slice.len(), |n| n.min(slice.len()));
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&slice[..send]);
    let _ = out.flush();
    if cut.is_some() {
        // An abrupt end: the client sees fewer bytes than Content-Length promised.
        let _ = out.shutdown(std::net::Shutdown::Both);
    }
}
