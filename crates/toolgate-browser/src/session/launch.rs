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

use crate::config::{BrowserConfig, BrowserSandbox};
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
    /// The script that starts Chromium in the namespace view, when it does.
    _wrapper: Option<TempDir>,
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

/// The wrapper script's name in its private directory.
const WRAPPER: &str = "chromium-in-view";

/// A private directory holding a script that execs bubblewrap — the sandbox's namespace
/// view with the host's network (DevTools is a TCP socket on loopback, and every request
/// already goes through the guard's proxy and interception), `profile` the only writable
/// tree — and Chromium in it with the arguments it was given.
fn view_wrapper(
    chromium: &std::path::Path,
    profile: &std::path::Path,
) -> Result<TempDir, BrowserError> {
    use std::os::unix::fs::PermissionsExt;
    let (bwrap, args) = toolgate_tools::sandbox::shared_network_view(&[profile.to_path_buf()])
        .map_err(|why| {
            BrowserError::Launch(format!(
                "the browser sandbox is unavailable: {why} (`toolgate doctor` explains; set \
                 [browser] sandbox = \"off\" to run Chromium without it)"
            ))
        })?;
    let dir = tempfile::Builder::new()
        .prefix("toolgate-browser-run-")
        .tempdir()
        .map_err(|e| BrowserError::Launch(format!("cannot create a temporary directory: {e}")))?;
    let mut script = String::from("#!/bin/sh\nexec");
    for arg in std::iter::once(bwrap.into_os_string())
        .chain(args)
        .chain(std::iter::once(chromium.as_os_str().to_owned()))
    {
        script.push(' ');
        script.push_str(&shell_quote(&arg.to_string_lossy()));
    }
    script.push_str(" \"$@\"\n");
    let path = dir.path().join(WRAPPER);
    std::fs::write(&path, script)
        .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)))
        .map_err(|e| BrowserError::Launch(format!("cannot write {}: {e}", path.display())))?;
    Ok(dir)
}

/// `'…'` with every `'` as `'\''`.
fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
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
    let wrapper = match cfg.sandbox {
        BrowserSandbox::Required => Some(view_wrapper(&cfg.chromium, profile.path())?),
        BrowserSandbox::Off => None,
    };
    let executable = match &wrapper {
        Some(dir) => dir.path().join(WRAPPER),
        None => cfg.chromium.clone(),
    };
    let config = CdpConfig::builder()
        .chrome_executable(&executable)
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
            _wrapper: wrapper,
        }),
        Err(e) => {
            interceptor.abort();
            handler.abort();
            Err(BrowserError::Launch(e.to_string()))
        }
    }
}
