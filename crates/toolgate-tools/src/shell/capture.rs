//! Draining one output pipe of the shell with a cap.
//!
//! The pipe is read to its end (or until told to stop) so the child never blocks on a full
//! pipe; only the first `cap` bytes are kept, but every byte is counted.

use tokio::io::{AsyncRead, AsyncReadExt};
use toolgate_core::CancellationToken;

/// What one stream produced.
#[derive(Debug, Default)]
pub(super) struct Captured {
    /// The first `cap` bytes.
    pub kept: Vec<u8>,
    /// Every byte read, kept or not.
    pub total: u64,
}

impl Captured {
    pub(super) fn truncated(&self) -> bool {
        self.total > self.kept.len() as u64
    }

    /// The kept bytes as text; invalid UTF-8 (also a character cut by the cap) becomes
    /// U+FFFD.
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}

/// Reads `pipe` until end of file or `stop`, keeping the first `cap` bytes. A read error
/// ends the capture with what was read so far.
pub(super) async fn capture<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    cap: usize,
    stop: CancellationToken,
) -> Captured {
    let mut out = Captured::default();
    let Some(mut pipe) = pipe else { return out };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            biased;
            () = stop.cancelled() => return out,
            read = pipe.read(&mut buf) => match read {
                Ok(0) | Err(_) => return out,
                Ok(n) => n,
            },
        };
        out.total += n as u64;
        let room = cap.saturating_sub(out.kept.len());
        out.kept.extend_from_slice(&buf[..n.min(room)]);
    }
}
