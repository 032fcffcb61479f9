//! Answers read off a raw TCP socket (tests that send what an HTTP client would refuse to, or
//! hold connections open), parsed just enough to hold them against the OpenAPI document
//! ([`crate::contract`]) like the fixture's client does.

/// One HTTP/1.1 answer.
pub struct RawAnswer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// Parses `bytes` as one answer; `None` while incomplete (the head not ended, or fewer body
/// bytes than `Content-Length`; without one, the body runs to the end of `bytes`).
pub fn parse(bytes: &[u8]) -> Option<RawAnswer> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]);
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut content_type = None;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = Some(value.trim().to_owned()),
            "content-length" => length = value.trim().parse::<usize>().ok(),
            _ => {}
        }
    }
    let rest = &bytes[end + 4..];
    let body = match length {
        Some(n) if rest.len() < n => return None,
        Some(n) => rest[..n].to_vec(),
        None => rest.to_vec(),
    };
    Some(RawAnswer {
        status,
        content_type,
        body,
    })
}

/// The status of the answer `bytes` to the request `head` (its request line first), after
/// checking the answer against the document. The HTTP layer's own refusals — no
/// `Content-Type` and an empty body, for a request hyper could not parse — never reached a
/// route, so the document does not describe them. `None` if `bytes` holds no whole answer.
pub fn checked_status(head: &str, bytes: &[u8]) -> Option<u16> {
    let answer = parse(bytes)?;
    let mut request_line = head.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (
        request_line.next().unwrap_or_default(),
        request_line.next().unwrap_or_default(),
    );
    if answer.content_type.is_some() || !answer.body.is_empty() {
        crate::contract::assert_answer(
            method,
            target,
            answer.status,
            answer.content_type.as_deref(),
            Some(&answer.body),
        );
    }
    Some(answer.status)
}
