//! The actions, each on one session's browser. Every action that can change the page ends
//! with a fresh snapshot, so the model sees the result without another call; every result
//! carries the requests the guard refused since the previous result (`blocked`).
//!
//! Elements are named by the index a snapshot gave them or by a CSS selector. An index is
//! re-resolved in the live page and must still name the same element (tag, role, type,
//! name, href) as in the last snapshot; otherwise the action is refused rather than
//! clicking whatever now has that index.

use std::future::Future;
use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, EventFrameStartedLoading, EventFrameStoppedLoading,
    GetNavigationHistoryParams, NavigateToHistoryEntryParams,
};
use chromiumoxide::layout::Point;
use chromiumoxide::page::ScreenshotParams;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_protocol::{ContentBlock, ToolOutput};
use url::Url;

use crate::config::BrowserConfig;
use crate::error::BrowserError;
use crate::guard::{Refusal, RequestGuard, display_url};
use crate::session::BrowserSession;
use crate::snapshot::{ElementInfo, PageSnapshot, UNTRUSTED_NOTICE, render};

/// How long to wait for an action to start a navigation before taking it as in-page.
const NAVIGATION_GRACE: Duration = Duration::from_millis(300);

/// Schemes the main frame may show; anything else is replaced by about:blank.
const SHOWN_SCHEMES: [&str; 4] = ["http", "https", "about", "chrome-error"];

/// An element, by snapshot index or CSS selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementRef {
    Index(usize),
    Selector(String),
}

impl ElementRef {
    fn args(&self) -> Value {
        match self {
            ElementRef::Index(i) => json!({ "index": i }),
            ElementRef::Selector(s) => json!({ "selector": s }),
        }
    }
}

/// Settings an action needs besides the session.
pub(crate) struct ActionEnv<'a> {
    pub cfg: &'a BrowserConfig,
    pub guard: &'a RequestGuard,
}

pub(crate) async fn navigate(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
    raw: &str,
) -> Result<ToolOutput, BrowserError> {
    let url = Url::parse(raw)
        .map_err(|e| BrowserError::BadUrl(format!("`{raw}` is not an absolute URL: {e}")))?;
    if url.as_str() != "about:blank" {
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(BrowserError::BadUrl(format!(
                "the browser opens http(s) URLs and about:blank only, not `{}:`",
                url.scheme()
            )));
        }
        env.guard.check(&url).await.map_err(|r| {
            if r.is_policy() {
                BrowserError::Blocked {
                    url: display_url(&url),
                    reason: r.to_string(),
                }
            } else {
                BrowserError::LoadFailed(r.to_string())
            }
        })?;
    }
    let mark = s.refusals.mark();
    let loaded = s.page().goto(url.as_str()).await.map(|_| ());
    blocked_navigation(s, mark).await?;
    loaded.map_err(|e| BrowserError::LoadFailed(e.to_string()))?;
    snapshot(s, env).await
}

pub(crate) async fn back(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
) -> Result<ToolOutput, BrowserError> {
    let history = s
        .page()
        .execute(GetNavigationHistoryParams::default())
        .await?
        .result;
    let previous = usize::try_from(history.current_index)
        .ok()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| history.entries.get(i))
        .ok_or_else(|| BrowserError::InvalidArguments("there is no previous page".to_owned()))?;
    let mark = s.refusals.mark();
    let page = s.page().clone();
    let id = previous.id;
    settle(&page, env.cfg, async {
        page.execute(NavigateToHistoryEntryParams::new(id))
            .await
            .map(|_| ())
    })
    .await??;
    blocked_navigation(s, mark).await?;
    snapshot(s, env).await
}

pub(crate) async fn snapshot(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
) -> Result<ToolOutput, BrowserError> {
    let snap: PageSnapshot = s
        .run_js(json!({
            "op": "snapshot",
            "max_text": env.cfg.max_text_chars,
            "max_elements": env.cfg.max_elements,
        }))
        .await?;
    leave_forbidden_scheme(s, &snap.url).await?;
    s.elements = snap.elements.clone();
    let page = render(&snap, env.cfg.max_text_chars, &s.nonce);
    Ok(ToolOutput::json(json!({
        "url": snap.url,
        "page": page,
        "blocked": take_blocked(s),
        "notice": UNTRUSTED_NOTICE,
    })))
}

pub(crate) async fn screenshot(
    s: &mut BrowserSession,
    full_page: bool,
) -> Result<ToolOutput, BrowserError> {
    let params = ScreenshotParams::builder()
        .format(CaptureScreenshotFormat::Png)
        .full_page(full_page)
        .build();
    let png = s.page().screenshot(params).await?;
    let (width, height) = png_size(&png)
        .ok_or_else(|| BrowserError::Protocol("the screenshot is not a PNG".to_owned()))?;
    let url = s.page().url().await?.unwrap_or_default();
    let mut out = ToolOutput::json(json!({
        "url": url,
        "width": width,
        "height": height,
        "bytes": png.len(),
        "blocked": take_blocked(s),
    }));
    out.content.push(ContentBlock::Image {
        data: base64::engine::general_purpose::STANDARD.encode(&png),
        mime_type: "image/png".to_owned(),
    });
    Ok(out)
}

pub(crate) async fn scroll(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
    down: bool,
    pixels: Option<u32>,
) -> Result<ToolOutput, BrowserError> {
    let step = pixels.map_or_else(|| i64::from(env.cfg.viewport_height) * 4 / 5, i64::from);
    let dy = if down { step } else { -step };
    let pos: Value = s.run_js(json!({ "op": "scroll", "dy": dy })).await?;
    Ok(ToolOutput::json(json!({
        "scroll_y": pos["y"],
        "page_height": pos["height"],
        "viewport_height": pos["viewport"],
        "blocked": take_blocked(s),
    })))
}

#[derive(Deserialize)]
struct Located {
    element: ElementInfo,
    x: f64,
    y: f64,
    covered: Option<String>,
}

#[derive(Deserialize)]
struct Focused {
    element: ElementInfo,
    focused: bool,
}

pub(crate) async fn click(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
    target: &ElementRef,
) -> Result<ToolOutput, BrowserError> {
    let mut args = target.args();
    args["op"] = json!("locate");
    let at: Located = s.run_js(args).await?;
    same_as_snapshot(s, target, &at.element)?;
    if let Some(cover) = at.covered {
        return Err(BrowserError::NoElement(format!(
            "{} is covered by a <{cover}> at its centre; close or scroll away what covers it",
            at.element.line()
        )));
    }
    let mark = s.refusals.mark();
    let page = s.page().clone();
    let point = Point { x: at.x, y: at.y };
    settle(&page, env.cfg, async {
        page.click(point).await.map(|_| ())
    })
    .await??;
    blocked_navigation(s, mark).await?;
    snapshot(s, env).await
}

pub(crate) async fn type_text(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
    target: &ElementRef,
    text: &str,
    clear: bool,
    submit: bool,
) -> Result<ToolOutput, BrowserError> {
    let mut args = target.args();
    args["op"] = json!("focus");
    args["clear"] = json!(clear);
    let f: Focused = s.run_js(args).await?;
    same_as_snapshot(s, target, &f.element)?;
    if !f.focused {
        return Err(BrowserError::NoElement(format!(
            "{} does not take keyboard focus (disabled, or not a field)",
            f.element.line()
        )));
    }
    s.page().execute(InsertTextParams::new(text)).await?;
    if submit {
        let mark = s.refusals.mark();
        let page = s.page().clone();
        settle(&page, env.cfg, press_key(&page, "Enter")).await??;
        blocked_navigation(s, mark).await?;
    }
    snapshot(s, env).await
}

pub(crate) async fn press(
    s: &mut BrowserSession,
    env: &ActionEnv<'_>,
    key: &str,
) -> Result<ToolOutput, BrowserError> {
    if chromiumoxide::keys::get_key_definition(key).is_none() {
        return Err(BrowserError::InvalidArguments(format!(
            "unknown key `{key}`; use a key name such as Enter, Tab, Escape, Backspace, ArrowDown, PageDown or a single character"
        )));
    }
    let mark = s.refusals.mark();
    let page = s.page().clone();
    settle(&page, env.cfg, press_key(&page, key)).await??;
    blocked_navigation(s, mark).await?;
    snapshot(s, env).await
}

/// One key down and up, as a keyboard would send it (text for printable keys).
async fn press_key(page: &Page, key: &str) -> Result<(), BrowserError> {
    let def = chromiumoxide::keys::get_key_definition(key)
        .ok_or_else(|| BrowserError::InvalidArguments(format!("unknown key `{key}`")))?;
    let text = def
        .text
        .or((def.key.chars().count() == 1).then_some(def.key));
    let event = |kind: DispatchKeyEventType| {
        let is_down = kind == DispatchKeyEventType::KeyDown;
        let mut b = DispatchKeyEventParams::builder()
            .r#type(kind)
            .key(def.key)
            .code(def.code)
            .windows_virtual_key_code(def.key_code)
            .native_virtual_key_code(def.key_code);
        if let Some(t) = text
            && is_down
        {
            b = b.text(t);
        }
        b.build()
            .map_err(|e| BrowserError::Protocol(format!("bad key event: {e}")))
    };
    let down = if text.is_some() {
        DispatchKeyEventType::KeyDown
    } else {
        DispatchKeyEventType::RawKeyDown
    };
    page.execute(event(down)?).await?;
    page.execute(event(DispatchKeyEventType::KeyUp)?).await?;
    Ok(())
}

/// Runs `action`; if it starts loading the main frame within the grace period, waits for
/// that load to stop (bounded by the action timeout).
async fn settle<T>(
    page: &Page,
    cfg: &BrowserConfig,
    action: impl Future<Output = Result<T, impl Into<BrowserError>>>,
) -> Result<Result<T, BrowserError>, BrowserError> {
    let main = page.mainframe().await?;
    let mut started = page.event_listener::<EventFrameStartedLoading>().await?;
    let mut stopped = page.event_listener::<EventFrameStoppedLoading>().await?;
    let out = action.await.map_err(Into::into);
    let is_main = |id: &chromiumoxide::cdp::browser_protocol::page::FrameId| {
        main.as_ref().is_none_or(|m| m == id)
    };
    let began = tokio::time::timeout(NAVIGATION_GRACE, async {
        while let Some(e) = started.next().await {
            if is_main(&e.frame_id) {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    if began {
        let done = tokio::time::timeout(cfg.action_timeout(), async {
            while let Some(e) = stopped.next().await {
                if is_main(&e.frame_id) {
                    return;
                }
            }
        })
        .await;
        if done.is_err() {
            return Err(BrowserError::Timeout {
                secs: cfg.action_timeout_secs,
            });
        }
    }
    Ok(out)
}

/// The main-frame navigation the guard refused since `mark`, as the action's error.
async fn blocked_navigation(s: &mut BrowserSession, mark: usize) -> Result<(), BrowserError> {
    let main = s.page().mainframe().await?.map(|f| f.inner().clone());
    let refused = s.refusals.since(mark).into_iter().find(|r: &Refusal| {
        r.navigation && (r.frame.is_none() || main.is_none() || r.frame == main)
    });
    match refused {
        Some(r) => {
            s.reported = s.refusals.mark();
            Err(BrowserError::Blocked {
                url: r.url,
                reason: r.reason,
            })
        }
        None => Ok(()),
    }
}

/// Refusals not yet reported to the model.
fn take_blocked(s: &mut BrowserSession) -> Vec<Refusal> {
    let (blocked, next) = s.refusals.take_since(s.reported);
    s.reported = next;
    blocked
}

/// The main frame must show an http(s) page, about:blank or an error page; a page that got
/// to `file:`, `data:`, `chrome:` or the like is left for about:blank.
async fn leave_forbidden_scheme(s: &mut BrowserSession, shown: &str) -> Result<(), BrowserError> {
    let scheme = shown
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if SHOWN_SCHEMES.contains(&scheme.as_str()) {
        return Ok(());
    }
    s.page().goto("about:blank").await?;
    Err(BrowserError::Blocked {
        url: format!("{scheme}:…"),
        reason: format!(
            "the browser shows http(s) pages only, not `{scheme}:` ones; the tab was reset to about:blank"
        ),
    })
}

/// An index must name the element the last snapshot listed under it.
fn same_as_snapshot(
    s: &BrowserSession,
    target: &ElementRef,
    now: &ElementInfo,
) -> Result<(), BrowserError> {
    let ElementRef::Index(i) = target else {
        return Ok(());
    };
    match s.elements.get(*i) {
        None => Err(BrowserError::NoElement(format!(
            "the last snapshot lists no element [{i}]; take a snapshot first"
        ))),
        Some(then) if !then.same_identity(now) => Err(BrowserError::NoElement(format!(
            "the page changed since the last snapshot: [{i}] was {} and is now {}; take a new snapshot",
            then.line(),
            now.line()
        ))),
        Some(_) => Ok(()),
    }
}

/// Width and height from a PNG's IHDR chunk.
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if png.len() < 24 || !png.starts_with(SIGNATURE) || &png[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| b.try_into().ok().map(u32::from_be_bytes);
    Some((be(&png[16..20])?, be(&png[20..24])?))
}
