//! The readable cause of a failed request.

/// The innermost causes of a reqwest error ("tcp connect error: Connection refused (os
/// error 111)"), without reqwest's own "error sending request for url (…)" wrapper.
pub(crate) fn causes(err: &reqwest::Error) -> String {
    let mut found: Vec<String> = Vec::new();
    let mut cause = std::error::Error::source(err);
    while let Some(c) = cause {
        let text = c.to_string();
        if !found.iter().any(|seen| seen.contains(&text)) {
            found.push(text);
        }
        cause = c.source();
    }
    if found.is_empty() {
        err.to_string()
    } else {
        found.join(": ")
    }
}
