//! Starting one session's Chromium: a fresh temporary profile, the guard's proxy and request
//! interception in place and downloads denied BEFORE the first page exists, so no request of
//! the session ever goes out unchecked.
//!
//! The flags are ours alone (chromiumoxide's defaults are off: they disable the popup blocker
//! and ignore certificate errors). `--no-sandbox` is needed when running as root, as the CLI
//! and CI do here; the guard, not Chromium's sandbox, is what keeps the network in bounds.

use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::browser::{Browser, BrowserConfig as CdpConfig};
use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::handler::viewport::Viewport;
use futures_util::StreamExt;
use tempfile::TempDir;
use tokio::task::JoinHandle;

use crate::config::BrowserConfig;
use crate::error::BrowserError;
use crate::guard::proxy::EgressProxy;
use crate::guard::{Refusals, RequestGuard, intercept};

/// A running, guarded Chromium with its one page. Dropping it kills the process (the child
/// is `kill_on_drop`), stops the proxy and deletes the profile.
pub(crate) struct Launched {
    pub browser: Arc<Browser>,
    pub page: Page,
    handler: JoinHandle<()>,
    interceptor: JoinHandle<()>,
    _proxy: EgressProxy,
    _profile: TempDir,
}

impl Drop for Launched {
    fn drop(&mut self) {
        self.interceptor.abort();
        self.handler.abort();
    }
}

/// The command-line flags, besides the profile, headless mode and sandbox.
pub fn chromium_flags(proxy: std::net::SocketAddr) -> Vec<String> {
    [
        "disable-gpu",
        "disable-background-networking",
        "disable-component-update",
        "disable-sync",
        "no-first-run",
        "no-default-browser-check",
        "disable-default-apps",
        "disable-breakpad",
        "disable-client-side-phishing-detection",
        "disable-domain-reliability",
        "disable-dev-shm-usage",
        "metrics-recording-only",
        "password-store=basic",
        "use-mock-keychain",
        "disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,NetworkTimeServiceQuerying",
        // WebRTC may send UDP around the proxy; forbid that.
        "force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([
        format!("proxy-server=http://{proxy}"),
        // Without this Chromium connects to loopback directly, around the proxy.
        "proxy-bypass-list=<-loopback>".to_owned(),
    ])
    .collect()
}

pub(crate) async fn launch(
    cfg: &BrowserConfig,
    guard: RequestGuard,
    refusals: Refusals,
) -> Result<Launched, BrowserError> {
    cfg.check_chromium()?;
    let profile = tempfile::Builder::new()
        .prefix("toolgate-browser-")
        .tempdir()
        .map_err(|e| BrowserError::Launch(format!("cannot create a temporary profile: {e}")))?;
    let proxy = EgressProxy::start(guard.clone(), refusals.clone())
        .await
        .map_err(|e| BrowserError::Launch(format!("cannot start the egress proxy: {e}")))?;
    let viewport = Viewport {
        width: cfg.viewport_width,
        height: cfg.viewport_height,
        device_scale_factor: Some(1.0),
        emulating_mobile: false,
        is_landscape: true,
        has_touch: false,
    };
    let config = CdpConfig::builder()
        .chrome_executable(&cfg.chromium)
        .user_data_dir(profile.path())
        .disable_default_args()
        .no_sandbox()
        .respect_https_errors()
        .launch_timeout(cfg.launch_timeout())
        .request_timeout(cfg.action_timeout())
        .window_size(cfg.viewport_width, cfg.viewport_height)
        .viewport(viewport)
        .args(chromium_flags(proxy.addr()))
        .build()
        .map_err(BrowserError::Launch)?;
    let (browser, mut handler) = Browser::launch(config)
        .await
        .map_err(|e| BrowserError::Launch(e.to_string()))?;
    let handler = tokio::spawn(async move {
        while let Some(event) = handler.next().await {
            if let Err(e) = event {
                tracing::debug!("browser DevTools connection: {e}");
            }
        }
    });
    let browser = Arc::new(browser);
    let interceptor = match intercept::start(&browser, guard, refusals).await {
        Ok(task) => task,
        Err(e) => {
            handler.abort();
            return Err(e);
        }
    };
    let started = async {
        browser
            .execute(SetDownloadBehaviorParams::new(
                SetDownloadBehaviorBehavior::Deny,
            ))
            .await?;
        browser.new_page("about:blank").await
    }
    .await;
    match started {
        Ok(page) => Ok(Launched {
            browser,
            page,
            handler,
            interceptor,
            _proxy: proxy,
            _profile: profile,
        }),
        Err(e) => {
            interceptor.abort();
            handler.abort();
            Err(BrowserError::Launch(e.to_string()))
        }
    }
}
