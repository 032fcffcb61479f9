//! [`ApiKey`]: a search API key that cannot be printed. `Debug` shows `[redacted]`, there
//! is no `Display`, and [`ApiKey::scrub`] removes it from text quoted back from a service
//! (an error page may echo the request's headers).

use reqwest::header::HeaderValue;

#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key as a header value marked sensitive (left out of reqwest's and hyper's
    /// debug output); `None` if it holds characters a header cannot carry.
    pub fn header_value(&self) -> Option<HeaderValue> {
        let mut value = HeaderValue::from_str(&self.0).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "[redacted]")
        }
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_never_shown() {
        let key = ApiKey::new("sk-123");
        assert_eq!(
            (
                format!("{key:?}"),
                key.scrub("bad token sk-123 (sk-123)"),
                format!("{:?}", key.header_value().unwrap())
            ),
            (
                "ApiKey([redacted])".to_owned(),
                "bad token [redacted] ([redacted])".to_owned(),
                "Sensitive".to_owned()
            )
        );
    }
}
