//! Inside a namespace view without network: `127.0.0.1:EGRESS_PORT` relayed to the egress
//! proxy's Unix socket, bound into the view. The command's `HTTP_PROXY`/`HTTPS_PROXY`
//! point at the port; the proxy (run by toolgate outside) decides what each connection may
//! reach. Nothing else leaves the namespace: it has only a loopback interface.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use super::error::SandboxError;

/// The proxy's port on the view's loopback interface.
pub const EGRESS_PORT: u16 = 3128;

/// The listening relay (bound before the inner stage confines itself).
#[derive(Debug)]
pub(crate) struct Relay {
    listener: TcpListener,
    socket: PathBuf,
}

impl Relay {
    pub(crate) fn listen(socket: PathBuf) -> Result<Self, SandboxError> {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, EGRESS_PORT)).map_err(SandboxError::io(
                format!("listen on 127.0.0.1:{EGRESS_PORT} for the egress proxy"),
            ))?;
        Ok(Relay { listener, socket })
    }

    /// Accepts and relays on threads of their own until the process ends.
    pub(crate) fn serve_in_background(self) {
        std::thread::spawn(move || {
            for client in self.listener.incoming().flatten() {
                let socket = self.socket.clone();
                std::thread::spawn(move || relay(client, &socket));
            }
        });
    }
}

fn relay(client: TcpStream, socket: &std::path::Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        let _ = (&client).write_all(
            b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
        return;
    };
    let (Ok(client2), Ok(proxy2)) = (client.try_clone(), proxy.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        copy(client2, &proxy2);
        let _ = proxy2.shutdown(Shutdown::Write);
    });
    copy(&proxy, &client);
    let _ = client.shutdown(Shutdown::Write);
    let _ = up.join();
}

fn copy(mut from: impl Read, mut to: impl Write) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}
