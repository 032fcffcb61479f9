//! The console's routes in-process: content types, security and cache headers, revalidation,
//! unknown assets, and that the page references only files that are embedded.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use tower::ServiceExt;

use super::{CONTENT_SECURITY_POLICY, embedded, routes};

const SCRIPTS: [&str; 14] = [
    "app.js",
    "api.js",
    "feed.js",
    "ui.js",
    "keys.js",
    "tools.js",
    "approvals.js",
    "audit.js",
    "health.js",
    "tokens.js",
    "dashboard.js",
    "metrics.js",
    "stats.js",
    "charts.js",
];

async fn get(path: &str, if_none_match: Option<&str>) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = Request::get(path);
    if let Some(tag) = if_none_match {
        req = req.header(header::IF_NONE_MATCH, tag);
    }
    let resp = routes::<()>()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap()
        .to_vec();
    (status, headers, body)
}

fn header_of(h: &HeaderMap, name: header::HeaderName) -> &str {
    h.get(&name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no {name} header in {h:?}"))
}

fn security_headers(h: &HeaderMap) -> [&str; 4] {
    [
        header_of(h, header::CONTENT_SECURITY_POLICY),
        header_of(h, header::X_CONTENT_TYPE_OPTIONS),
        header_of(h, header::REFERRER_POLICY),
        header_of(h, header::X_FRAME_OPTIONS),
    ]
}

const SECURE: [&str; 4] = [CONTENT_SECURITY_POLICY, "nosniff", "no-referrer", "DENY"];

#[tokio::test]
async fn the_page_is_served_at_the_root_with_strict_headers() {
    let (status, h, body) = get("/", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        [
            header_of(&h, header::CONTENT_TYPE),
            header_of(&h, header::CACHE_CONTROL),
            header_of(&h, header::ETAG),
        ],
        [
            "text/html; charset=utf-8",
            "no-cache",
            embedded("index.html").unwrap().etag.as_str(),
        ]
    );
    assert_eq!(security_headers(&h), SECURE);
    assert!(CONTENT_SECURITY_POLICY.starts_with("default-src 'self';"));
    assert_eq!(body, embedded("index.html").unwrap().body);
}

#[tokio::test]
async fn each_asset_has_its_content_type() {
    let mut seen = Vec::new();
    for name in ["app.css", "app.js", "favicon.svg"] {
        let (status, h, body) = get(&format!("/assets/{name}"), None).await;
        assert_eq!(status, StatusCode::OK, "{name}");
        assert_eq!(security_headers(&h), SECURE, "{name}");
        assert_eq!(body, embedded(name).unwrap().body, "{name}");
        seen.push(header_of(&h, header::CONTENT_TYPE).to_owned());
    }
    assert_eq!(
        seen,
        [
            "text/css; charset=utf-8",
            "text/javascript; charset=utf-8",
            "image/svg+xml"
        ]
    );
}

#[tokio::test]
async fn a_matching_etag_is_answered_with_304_and_no_body() {
    let tag = embedded("app.js").unwrap().etag.clone();
    let (status, h, body) = get("/assets/app.js", Some(&format!("\"other\", {tag}"))).await;
    assert_eq!(
        (status, header_of(&h, header::ETAG), body.len()),
        (StatusCode::NOT_MODIFIED, tag.as_str(), 0)
    );
    let (status, _, _) = get("/assets/app.js", Some("\"stale\"")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_assets_are_404_and_the_page_is_only_at_the_root() {
    for path in [
        "/assets/nope.js",
        "/assets/index.html",
        "/assets/..%2Fapp.js",
    ] {
        let (status, h, body) = get(path, None).await;
        assert_eq!(
            (status, String::from_utf8(body).unwrap()),
            (StatusCode::NOT_FOUND, "no such console asset".to_owned()),
            "{path}"
        );
        assert_eq!(security_headers(&h), SECURE, "{path}");
    }
}

#[test]
fn etags_are_quoted_digests() {
    let tag = &embedded("app.css").unwrap().etag;
    assert_eq!(tag.len(), 18);
    assert!(tag.starts_with('"') && tag.ends_with('"'));
    assert_ne!(tag, &embedded("app.js").unwrap().etag);
}

fn text(name: &str) -> &'static str {
    std::str::from_utf8(
        embedded(name)
            .unwrap_or_else(|| panic!("{name} is not embedded"))
            .body,
    )
    .unwrap()
}

/// `'./x.js'` imports and `/assets/x` references must all name embedded files, or the page
/// breaks only in a browser.
#[test]
fn every_referenced_file_is_embedded() {
    let mut referenced = Vec::new();
    for page in ["index.html"].into_iter().chain(SCRIPTS) {
        let src = text(page);
        for marker in ["/assets/", "from './"] {
            for (at, _) in src.match_indices(marker) {
                let rest = &src[at + marker.len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                    .unwrap_or(rest.len());
                referenced.push(rest[..end].to_owned());
            }
        }
    }
    referenced.sort();
    referenced.dedup();
    let missing: Vec<&String> = referenced
        .iter()
        .filter(|n| embedded(n).is_none())
        .collect();
    assert_eq!(missing, Vec::<&String>::new());
    for script in SCRIPTS {
        assert!(
            referenced.iter().any(|r| r == script),
            "{script} is embedded but never loaded"
        );
    }
}

/// The SVG namespace is a name, not an address: charts.js needs it for `createElementNS`.
const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

/// Nothing is loaded from elsewhere, nothing inline that the policy would block.
#[test]
fn assets_load_nothing_from_other_origins() {
    for name in ["index.html", "app.css"].into_iter().chain(SCRIPTS) {
        let src = text(name).replace(SVG_NAMESPACE, "");
        for banned in [
            "http://",
            "https://",
            "//cdn",
            "innerHTML",
            "eval(",
            " style=\"",
            "<style",
            "onclick=\"",
        ] {
            assert!(!src.contains(banned), "{name} contains `{banned}`");
        }
    }
    let html = text("index.html");
    assert_eq!(
        html.matches("<script").count(),
        html.matches("<script type=\"module\" src=\"/assets/")
            .count()
    );
}
