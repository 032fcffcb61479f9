//! The errors of this crate: [`ConfigError`] for settings that cannot be used, and
//! [`BrowserError`] for an action that failed, mapped onto [`ToolError`] in one place
//! ([`BrowserError::into_tool_error`]) so the model sees a closed vocabulary.

use std::path::PathBuf;

use toolgate_core::ToolError;

/// A `[browser]` setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "[browser] allow_origins entry `{entry}` is not an origin (scheme://host[:port]): {reason}"
    )]
    InvalidOrigin { entry: String, reason: String },
    #[error(
        "Chromium was not found at {path}: install it with `apt-get install chromium`, or set [browser] chromium to its path"
    )]
    ChromiumMissing { path: PathBuf },
    #[error("[browser] {field} must be at least {min}")]
    TooSmall { field: &'static str, min: u64 },
}

/// Why a browser action failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BrowserError {
    /// Chromium is missing or could not be configured.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Chromium did not start or its DevTools connection failed.
    #[error("cannot start Chromium: {0}")]
    Launch(String),
    /// The guard refused a navigation; the message says why and what setting would allow it.
    #[error("navigation to {url} was blocked: {reason}")]
    Blocked { url: String, reason: String },
    /// The URL given to `navigate` cannot be used.
    #[error("{0}")]
    BadUrl(String),
    /// The element named by index or selector is not on the page (any more).
    #[error("{0}")]
    NoElement(String),
    /// Arguments that the schema cannot express (`click` with neither index nor selector).
    #[error("{0}")]
    InvalidArguments(String),
    /// The page failed to load (DNS, connection refused, TLS, …), not a policy decision.
    #[error("the page did not load: {0}")]
    LoadFailed(String),
    /// A DevTools command failed.
    #[error("the browser reported an error: {0}")]
    Protocol(String),
    /// Too many browser sessions are open.
    #[error(
        "{open} browser sessions are open, the [browser] max_sessions limit; close one with action `close`"
    )]
    TooManySessions { open: usize },
    #[error("the browser action did not finish within {secs} s ([browser] action_timeout_secs)")]
    Timeout { secs: u64 },
    #[error("cancelled")]
    Cancelled,
}

impl BrowserError {
    /// The caller-facing error.
    pub fn into_tool_error(self) -> ToolError {
        match self {
            BrowserError::Blocked { .. } | BrowserError::BadUrl(_) => {
                ToolError::PolicyDenied(self.to_string())
            }
            BrowserError::InvalidArguments(m) => ToolError::InvalidArguments(m),
            BrowserError::NoElement(_) | BrowserError::LoadFailed(_) => {
                ToolError::failed(self.to_string())
            }
            BrowserError::Config(_) | BrowserError::Launch(_) => {
                ToolError::Unavailable(self.to_string())
            }
            BrowserError::Protocol(_) | BrowserError::TooManySessions { .. } => {
                ToolError::transient(self.to_string())
            }
            BrowserError::Timeout { .. } => ToolError::Timeout,
            BrowserError::Cancelled => ToolError::Cancelled,
        }
    }
}

impl From<chromiumoxide::error::CdpError> for BrowserError {
    fn from(e: chromiumoxide::error::CdpError) -> Self {
        BrowserError::Protocol(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_onto_the_tool_vocabulary() {
        let blocked = BrowserError::Blocked {
            url: "http://169.254.169.254".into(),
            reason: "refused".into(),
        };
        assert_eq!(
            [
                blocked.into_tool_error(),
                BrowserError::NoElement("no element [4]".into()).into_tool_error(),
                BrowserError::Timeout { secs: 3 }.into_tool_error(),
                BrowserError::Config(ConfigError::ChromiumMissing { path: "/x/chromium".into() })
                    .into_tool_error(),
            ],
            [
                ToolError::PolicyDenied(
                    "navigation to http://169.254.169.254 was blocked: refused".into()
                ),
                ToolError::failed("no element [4]"),
                ToolError::Timeout,
                ToolError::Unavailable(
                    "Chromium was not found at /x/chromium: install it with `apt-get install chromium`, or set [browser] chromium to its path".into()
                ),
            ]
        );
    }
}
