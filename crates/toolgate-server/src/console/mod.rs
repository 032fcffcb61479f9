//! The web console at `/`: one HTML page, a stylesheet and a few ES modules, compiled into
//! the binary (no CDN, no build step, nothing fetched from elsewhere). The page talks only to
//! the `/v1` API of the server that served it.
//!
//! Every console response carries a strict Content-Security-Policy (`default-src 'self'`, no
//! inline script or style, no framing), `X-Content-Type-Options: nosniff` and
//! `Referrer-Policy: no-referrer`. Assets are revalidated by `ETag` (`Cache-Control:
//! no-cache`), so an upgraded binary is picked up on the next load.
//!
//! The files themselves need no credentials (they hold no data; the API they call is what
//! is guarded): the router mounts these routes outside authentication.

mod assets;
#[cfg(test)]
mod tests;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub use assets::{Asset, embedded};

/// The policy every console response carries.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'; object-src 'none'";

/// The console's routes; they use no state, so they fit any router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(page))
        .route("/assets/{name}", get(asset))
}

async fn page(headers: HeaderMap) -> Response {
    match embedded("index.html") {
        Some(a) => respond(a, &headers),
        None => not_found(),
    }
}

async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    match embedded(&name).filter(|a| a.name != "index.html") {
        Some(a) => respond(a, &headers),
        None => not_found(),
    }
}

/// The asset, or 304 when the browser already holds this exact version.
fn respond(asset: &Asset, request: &HeaderMap) -> Response {
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == asset.etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = asset.body.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        r
    };
    let h = response.headers_mut();
    if let Ok(tag) = HeaderValue::from_str(&asset.etag) {
        h.insert(header::ETAG, tag);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    secure(h);
    response
}

fn not_found() -> Response {
    let mut response = (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "no such console asset",
    )
        .into_response();
    secure(response.headers_mut());
    response
}

fn secure(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}
