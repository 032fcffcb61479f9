//! The tests' HTTP client: a thin wrapper over reqwest whose `send` holds every answer against
//! the OpenAPI document ([`crate::contract`]) before the test sees it. A JSON answer is read
//! whole, checked, and handed back as an ordinary `reqwest::Response`; a stream is checked by
//! its content type and handed back unread.

use std::fmt::Display;

use http_body_util::BodyExt;
use reqwest::Method;
use reqwest::header::{HeaderName, HeaderValue};

/// A reqwest client whose answers are checked against the document.
#[derive(Clone)]
pub struct Client(reqwest::Client);

impl Client {
    pub fn new(inner: reqwest::Client) -> Client {
        Client(inner)
    }

    pub fn request(&self, method: Method, url: impl reqwest::IntoUrl) -> Request {
        Request(self.0.request(method, url))
    }

    pub fn get(&self, url: impl reqwest::IntoUrl) -> Request {
        self.request(Method::GET, url)
    }

    pub fn post(&self, url: impl reqwest::IntoUrl) -> Request {
        self.request(Method::POST, url)
    }

    pub fn delete(&self, url: impl reqwest::IntoUrl) -> Request {
        self.request(Method::DELETE, url)
    }
}

/// A request being built; [`Request::send`] checks the answer.
pub struct Request(reqwest::RequestBuilder);

impl Request {
    pub fn header<K, V>(self, key: K, value: V) -> Request
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        Request(self.0.header(key, value))
    }

    pub fn bearer_auth(self, token: impl Display) -> Request {
        Request(self.0.bearer_auth(token))
    }

    pub fn json<T: serde::Serialize + ?Sized>(self, json: &T) -> Request {
        Request(self.0.json(json))
    }

    pub fn body(self, body: impl Into<reqwest::Body>) -> Request {
        Request(self.0.body(body))
    }

    /// Sends the request; the answer has passed the contract check (a failure panics with
    /// the route, the status, what broke and the body).
    pub async fn send(self) -> reqwest::Result<reqwest::Response> {
        let (client, request) = self.0.build_split();
        let request = request?;
        let method = request.method().as_str().to_owned();
        let target = request.url().path().to_owned();
        let resp = client.execute(request).await?;
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let json = content_type
            .as_deref()
            .is_some_and(|c| c.starts_with("application/json"));
        if !json {
            crate::contract::assert_answer(&method, &target, status, content_type.as_deref(), None);
            return Ok(resp);
        }
        // Read whole, checked, and put back together (the URL rides in the extensions).
        let (parts, body) = http::Response::<reqwest::Body>::from(resp).into_parts();
        let bytes = body.collect().await?.to_bytes();
        crate::contract::assert_answer(
            &method,
            &target,
            status,
            content_type.as_deref(),
            Some(&bytes),
        );
        Ok(reqwest::Response::from(http::Response::from_parts(
            parts, bytes,
        )))
    }
}
