//! The console's files, compiled into the binary. Each is served with its content type and a
//! strong `ETag` (a digest of its bytes), so browsers revalidate cheaply and never run a stale
//! script after the binary is upgraded.

use std::sync::LazyLock;

use sha2::{Digest, Sha256};

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// The name under `/assets/` (the page itself is `index.html`, served at `/`).
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
    /// `"<first 16 hex digits of SHA-256>"`, quotes included, as the header carries it.
    pub etag: String,
}

const FILES: [(&str, &str, &[u8]); 18] = [
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../../console/index.html"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../console/app.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/app.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/api.js"),
    ),
    (
        "feed.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/feed.js"),
    ),
    (
        "ui.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/ui.js"),
    ),
    (
        "keys.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/keys.js"),
    ),
    (
        "chat.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/chat.js"),
    ),
    (
        "tools.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/tools.js"),
    ),
    (
        "approvals.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/approvals.js"),
    ),
    (
        "audit.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/audit.js"),
    ),
    (
        "health.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/health.js"),
    ),
    (
        "tokens.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/tokens.js"),
    ),
    (
        "dashboard.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/dashboard.js"),
    ),
    (
        "metrics.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/metrics.js"),
    ),
    (
        "stats.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/stats.js"),
    ),
    (
        "charts.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../console/charts.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../../console/favicon.svg"),
    ),
];

static ASSETS: LazyLock<Vec<Asset>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|&(name, content_type, body)| {
            let digest = hex::encode(Sha256::digest(body));
            Asset {
                name,
                content_type,
                body,
                etag: format!("\"{}\"", &digest[..16]),
            }
        })
        .collect()
});

/// The embedded file called `name`, if there is one.
pub fn embedded(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}
