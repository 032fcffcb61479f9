//! The test site (an axum app on 127.0.0.1), a trap listener that counts connections, and a
//! browser configured to reach only the site.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Form;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;
use tokio::net::TcpListener;
use toolgate_browser::{BrowserConfig, DEFAULT_CHROMIUM, browser_tools_with_lookup};
use toolgate_core::{DynTool, ToolContext, ToolError};
use toolgate_net::{EgressPolicy, Lookup, StaticLookup};
use toolgate_protocol::ToolOutput;

/// Fails (never skips) when Chromium is missing, saying how to install it.
pub fn require_chromium() {
    assert!(
        Path::new(DEFAULT_CHROMIUM).is_file(),
        "these tests drive Debian's Chromium at {DEFAULT_CHROMIUM}; install it with `apt-get install chromium`"
    );
}

#[derive(Clone)]
struct Site {
    trap: SocketAddr,
}

/// The site's pages. `trap` is a listener the guard must never let the browser reach.
pub async fn serve_site(trap: SocketAddr) -> SocketAddr {
    let app = Router::new()
        .route("/", get(index))
        .route("/form", get(form))
        .route("/submit", post(submit))
        .route("/about", get(about))
        .route("/redirect", get(redirect))
        .route("/jump-to-metadata", get(jump_to_metadata))
        .route("/jump-to-trap", get(jump_to_trap))
        .route("/color", get(color))
        .with_state(Site { trap });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

async fn index() -> Html<&'static str> {
    Html(
        "<!doctype html><title>Home</title><h1>Welcome</h1>\
         <p>Start here.</p><a href=\"/about\">About us</a> <a href=\"/form\">Contact form</a>",
    )
}

async fn about() -> Html<&'static str> {
    Html("<!doctype html><title>About</title><h1>About us</h1><p>We test browsers.</p>")
}

async fn form() -> Html<&'static str> {
    Html(
        "<!doctype html><title>Contact</title><form action=\"/submit\" method=\"post\">\
         <label>Your name <input name=\"name\"></label>\
         <label>Colour <select name=\"colour\"><option>red</option><option>blue</option></select></label>\
         <button type=\"submit\">Send</button></form>",
    )
}

#[derive(Deserialize)]
struct Submitted {
    name: String,
    colour: String,
}

async fn submit(Form(f): Form<Submitted>) -> Html<String> {
    let esc = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;");
    Html(format!(
        "<!doctype html><title>Thanks</title><p id=\"result\">Thank you, {}! You chose {}.</p>",
        esc(&f.name),
        esc(&f.colour)
    ))
}

#[derive(Deserialize)]
struct To {
    to: String,
}

async fn redirect(Query(q): Query<To>) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, q.to)]).into_response()
}

async fn jump_to_metadata() -> Html<&'static str> {
    Html(
        "<!doctype html><title>Jump</title><p>Leaving…</p>\
         <script>location = 'http://169.254.169.254/latest/meta-data/';</script>",
    )
}

async fn jump_to_trap(State(site): State<Site>) -> Html<String> {
    Html(format!(
        "<!doctype html><title>Jump</title><p>Leaving…</p>\
         <script>location = 'http://{}/secret';</script>",
        site.trap
    ))
}

async fn color() -> Html<&'static str> {
    Html(
        "<!doctype html><title>Colour</title><style>html,body{margin:0;background:#ff0000}</style>\
         <div style=\"height:300px;background:#0000ff\"></div>",
    )
}

/// A listener that accepts and counts connections (and answers nothing).
pub struct Trap {
    pub addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Trap {
    pub async fn bind(ip: &str) -> Trap {
        Trap::bind_at(format!("{ip}:0").parse().unwrap()).await
    }

    pub async fn bind_at(addr: SocketAddr) -> Trap {
        let listener = TcpListener::bind(addr)
            .await
            .unwrap_or_else(|e| panic!("cannot bind the trap listener on {addr}: {e}"));
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&hits);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        Trap { addr, hits }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Egress allowing exactly `site` (loopback, plain http) and nothing else non-public.
pub fn site_policy(site: SocketAddr) -> EgressPolicy {
    EgressPolicy::default()
        .allow_host(&site.to_string())
        .unwrap()
        .allow_plain_http(&site.to_string())
        .unwrap()
}

pub fn config(egress: EgressPolicy) -> BrowserConfig {
    require_chromium();
    BrowserConfig {
        enabled: true,
        egress,
        action_timeout_secs: 20,
        ..BrowserConfig::default()
    }
}

/// The two tools and a context whose session id is unique to the test.
pub struct Browser {
    pub read: DynTool,
    pub act: DynTool,
    pub ctx: ToolContext,
}

impl Browser {
    pub fn new(cfg: &BrowserConfig, lookup: Arc<dyn Lookup>, session: &str) -> Browser {
        let tools = browser_tools_with_lookup(cfg, lookup);
        let mut ctx = ToolContext::for_test();
        ctx.session_id = session.into();
        Browser {
            read: Arc::clone(&tools[0]),
            act: Arc::clone(&tools[1]),
            ctx,
        }
    }

    pub fn for_site(site: SocketAddr, session: &str) -> Browser {
        Browser::new(
            &config(site_policy(site)),
            Arc::new(StaticLookup::new()),
            session,
        )
    }

    pub async fn read(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.read.check(&args, &self.ctx)?;
        self.read.call(args, self.ctx.clone()).await
    }

    pub async fn act(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.act.check(&args, &self.ctx)?;
        self.act.call(args, self.ctx.clone()).await
    }

    pub async fn close(&self) {
        let out = self
            .read(serde_json::json!({"action": "close"}))
            .await
            .unwrap();
        assert_eq!(out.data, serde_json::json!({"closed": true}));
    }
}

/// The page text of a snapshot-bearing result, without the nonce markers.
pub fn page_text(out: &ToolOutput) -> String {
    let page = out.data["page"]
        .as_str()
        .unwrap_or_else(|| panic!("no page in {:?}", out.data));
    let mut lines: Vec<&str> = page.lines().collect();
    assert!(
        lines
            .first()
            .unwrap()
            .starts_with("<<<untrusted page content "),
        "{page}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("<<<end of untrusted page content "),
        "{page}"
    );
    lines.remove(0);
    lines.pop();
    lines.join("\n")
}

/// The index of the element whose line contains `needle`.
pub fn element_index(out: &ToolOutput, needle: &str) -> usize {
    let text = page_text(out);
    let line = text
        .lines()
        .find(|l| l.starts_with('[') && l.contains(needle))
        .unwrap_or_else(|| panic!("no element with {needle:?} in\n{text}"));
    line[1..line.find(']').unwrap()].parse().unwrap()
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}
