//! The server to load: `http://HOST:PORT[/path]` split into what a raw HTTP/1.1 connection
//! needs (the authority to dial and send as `Host`, and the path). No TLS: the benchmark
//! measures the server, on loopback.

use crate::error::LoadError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `HOST:PORT`, dialled and sent as the `Host` header.
    pub authority: String,
    /// The URL's path; `/` when it has none.
    pub path: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Self, LoadError> {
        let bad = |reason| LoadError::Url {
            url: url.to_owned(),
            reason,
        };
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("only http:// is supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = authority
            .rsplit_once(':')
            .ok_or_else(|| bad("the port is missing"))?;
        if host.is_empty() {
            return Err(bad("the host is missing"));
        }
        port.parse::<u16>()
            .map_err(|_| bad("the port is not a number"))?;
        Ok(Endpoint {
            authority: authority.to_owned(),
            path: path.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_authority_and_path() {
        assert_eq!(
            Endpoint::parse("http://127.0.0.1:8765/mcp").unwrap(),
            Endpoint {
                authority: "127.0.0.1:8765".into(),
                path: "/mcp".into()
            }
        );
        assert_eq!(
            Endpoint::parse("http://localhost:80").unwrap(),
            Endpoint {
                authority: "localhost:80".into(),
                path: "/".into()
            }
        );
    }

    #[test]
    fn refuses_what_it_cannot_dial() {
        let reason = |url| match Endpoint::parse(url) {
            Err(LoadError::Url { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(reason("https://h:1/"), "only http:// is supported");
        assert_eq!(reason("http://h/mcp"), "the port is missing");
        assert_eq!(reason("http://h:x/"), "the port is not a number");
        assert_eq!(reason("http://:80/"), "the host is missing");
    }
}
