//! One keep-alive HTTP/1.1 connection per worker (hyper's low-level client: no pool, no
//! retries, no redirects — a failure is the server's and is reported as such). Bodies are
//! read whole: a Streamable HTTP POST's SSE stream ends after the answer.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{SendRequest, handshake};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::endpoint::Endpoint;
use crate::error::LoadError;

/// What the server answered: status, the headers the protocols need, the whole body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

pub struct Connection {
    sender: SendRequest<Full<Bytes>>,
    host: HeaderValue,
}

impl Connection {
    pub async fn open(endpoint: &Endpoint) -> Result<Self, LoadError> {
        let connect_error = |source| LoadError::Connect {
            authority: endpoint.authority.clone(),
            source,
        };
        let stream = TcpStream::connect(&endpoint.authority)
            .await
            .map_err(connect_error)?;
        stream.set_nodelay(true).map_err(connect_error)?;
        let (sender, connection) = handshake(TokioIo::new(stream)).await?;
        // Ends when the server closes the connection or the sender is dropped; a failure
        // surfaces on the next request.
        tokio::spawn(connection);
        let host = HeaderValue::from_str(&endpoint.authority).map_err(http::Error::from)?;
        Ok(Connection { sender, host })
    }

    /// POSTs a JSON `body` to `path` with `headers`.
    pub async fn post_json(
        &mut self,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
    ) -> Result<Reply, LoadError> {
        self.send(Method::POST, path, headers, Some(body)).await
    }

    /// Sends one request and reads the whole answer.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Option<Bytes>,
    ) -> Result<Reply, LoadError> {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.host.clone());
        if body.is_some() {
            request = request.header(CONTENT_TYPE, "application/json");
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request.body(Full::new(body.unwrap_or_default()))?;
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok(Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
}
