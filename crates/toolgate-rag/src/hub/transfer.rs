//! One file's bytes from the hub into `FILE.part`: a fresh GET, or a `Range: bytes=N-` GET
//! continuing a `.part` of N bytes. A `206` whose `Content-Range` starts at N is appended; a
//! `200` (the server ignored the range) starts the file over; a `416` means the part is
//! already whole and verification decides. What was received is flushed and synced to disk
//! even when the connection breaks, so the next pull can resume from it.

use std::path::Path;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, RANGE};
use tokio::io::AsyncWriteExt;
use url::Url;

use super::error::PullError;
use super::pull::PullEvent;

/// How long a transfer may go without a byte before it is abandoned (resumable).
pub(crate) const IDLE: Duration = Duration::from_secs(60);

/// How a transfer ended.
pub(crate) struct Transfer {
    /// The offset it continued from, when it was resumed.
    pub resumed_from: Option<u64>,
}

/// The URL as shown in messages: origin and path, never a query (signed redirect links).
pub(crate) fn shown(url: &Url) -> String {
    format!("{}{}", url.origin().ascii_serialization(), url.path())
}

/// A `reqwest` failure as a [`PullError`]: the guard's refusal, or the error's chain
/// without any URL in it.
pub(crate) fn request_error(url: &Url, error: reqwest::Error) -> PullError {
    if let Some(refusal) = toolgate_net::egress_refusal(&error) {
        return PullError::Refused {
            url: shown(url),
            refusal: refusal.clone(),
        };
    }
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    PullError::Request {
        url: shown(url),
        error: text,
    }
}

fn stalled(url: &Url) -> PullError {
    PullError::Stalled {
        url: shown(url),
        secs: IDLE.as_secs(),
    }
}

/// The first byte offset of a `Content-Range: bytes START-END/TOTAL` answer.
fn range_start(resp: &reqwest::Response) -> Option<u64> {
    let value = resp.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    let rest = value.strip_prefix("bytes ")?;
    rest.split('-').next()?.trim().parse().ok()
}

fn status_hint(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 | 403 => {
            ": the repository is gated or private (toolgate sends no Hugging Face token); download it yourself and set [rag] model_dir"
        }
        404 => ": no such repository, revision or file on this hub",
        _ => "",
    }
}

/// Fetches `url` into `part`, continuing from its first `from` bytes when the server allows.
/// `limit` is the most bytes the file may have.
pub(crate) async fn transfer(
    client: &reqwest::Client,
    url: &Url,
    part: &Path,
    from: u64,
    limit: u64,
    file: &str,
    on_event: &mut (dyn FnMut(PullEvent) + Send),
) -> Result<Transfer, PullError> {
    let mut req = client.get(url.clone());
    if from > 0 {
        req = req.header(RANGE, format!("bytes={from}-"));
    }
    let mut resp = tokio::time::timeout(IDLE, req.send())
        .await
        .map_err(|_| stalled(url))?
        .map_err(|e| request_error(url, e))?;
    let status = resp.status();
    let start = match status {
        StatusCode::OK => {
            if from > 0 {
                on_event(PullEvent::Restarted {
                    file: file.to_owned(),
                    reason: "the server ignored the Range request (answered 200): downloading from the start".to_owned(),
                });
            }
            0
        }
        StatusCode::PARTIAL_CONTENT if from > 0 && range_start(&resp) == Some(from) => from,
        StatusCode::RANGE_NOT_SATISFIABLE if from > 0 => {
            return Ok(Transfer {
                resumed_from: Some(from),
            });
        }
        other => {
            return Err(PullError::Status {
                url: shown(url),
                status: other.as_u16(),
                hint: status_hint(other),
            });
        }
    };
    let total = resp.content_length().map(|n| n.saturating_add(start));
    if total.is_some_and(|t| t > limit) {
        return Err(PullError::TooLarge {
            url: shown(url),
            limit,
        });
    }
    let mut out = open_part(part, start > 0)
        .await
        .map_err(|e| PullError::io(part, e))?;
    on_event(PullEvent::Started {
        file: file.to_owned(),
        from: start,
        total,
    });
    let mut received = start;
    let copied = async {
        loop {
            let chunk = tokio::time::timeout(IDLE, resp.chunk())
                .await
                .map_err(|_| stalled(url))?
                .map_err(|e| request_error(url, e))?;
            let Some(bytes) = chunk else {
                return Ok(());
            };
            received += bytes.len() as u64;
            if received > limit {
                return Err(PullError::TooLarge {
                    url: shown(url),
                    limit,
                });
            }
            out.write_all(&bytes)
                .await
                .map_err(|e| PullError::io(part, e))?;
            on_event(PullEvent::Progress {
                file: file.to_owned(),
                received,
                total,
            });
        }
    }
    .await;
    // Kept on disk whatever happened: the next pull resumes from it.
    let synced = match out.flush().await {
        Ok(()) => out.sync_all().await,
        Err(e) => Err(e),
    };
    copied?;
    synced.map_err(|e| PullError::io(part, e))?;
    Ok(Transfer {
        resumed_from: (start > 0).then_some(start),
    })
}

/// Opens `part` to continue it (`resume`) or as a new file, never through a link: a `.part`
/// planted as a symbolic link (to a file outside the cache) is not followed — a fresh one
/// replaces the link by a new file (`O_EXCL`), a resumed one fails (`O_NOFOLLOW`).
pub(crate) async fn open_part(part: &Path, resume: bool) -> std::io::Result<tokio::fs::File> {
    let mut options = tokio::fs::OpenOptions::new();
    options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    if resume {
        return options.append(true).open(part).await;
    }
    match tokio::fs::remove_file(part).await {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    options.write(true).create_new(true).open(part).await
}
