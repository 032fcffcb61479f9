//! [`BrowserConfig`]: the `[browser]` table — which Chromium, which origins, the limits and
//! timeouts — plus the `[egress]` policy the guard enforces (copied in by the caller, never
//! read from the `[browser]` table).
//!
//! Off by default: a browser is a large process and a large attack surface, so the CLI
//! registers the browser tools only when `enabled = true`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_net::EgressPolicy;

use crate::error::ConfigError;
use crate::origin::AllowedOrigin;

/// Debian's Chromium, installed by the project's setup (never downloaded by a crate).
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// The browser tools' settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrowserConfig {
    /// Register `browser_read` and `browser_act` (the CLI reads this; the library ignores it).
    pub enabled: bool,
    /// The Chromium executable.
    pub chromium: PathBuf,
    /// When non-empty, the only origins the browser may request anything from (every
    /// request, subresources included). The egress policy applies on top.
    pub allow_origins: Vec<AllowedOrigin>,
    /// Deadline for Chromium to start and answer on DevTools.
    pub launch_timeout_secs: u64,
    /// Deadline for one action (a navigation and its load, a click and what it triggers).
    pub action_timeout_secs: u64,
    /// A session's browser is closed after this long without an action.
    pub idle_timeout_secs: u64,
    /// Page text returned by a snapshot is cut to this many characters.
    pub max_text_chars: usize,
    /// At most this many interactive elements are listed by a snapshot.
    pub max_elements: usize,
    /// At most this many browsers run at once (one per toolgate session).
    pub max_sessions: usize,
    /// Viewport size in CSS pixels (screenshots have this size).
    pub viewport_width: u32,
    pub viewport_height: u32,
    /// `required` (the default): Chromium runs in the sandbox's namespace view (the system
    /// trees read-only, its profile the only writable tree, its own PID, IPC and UTS
    /// namespaces) and is not started where the view cannot be built; `off`: as it is.
    pub sandbox: BrowserSandbox,
    /// The `[egress]` table: which non-public hosts and plain-http hosts are allowed.
    #[serde(skip)]
    pub egress: EgressPolicy,
}

/// Whether Chromium runs in the namespace view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrowserSandbox {
    #[default]
    Required,
    Off,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            enabled: false,
            chromium: PathBuf::from(DEFAULT_CHROMIUM),
            allow_origins: Vec::new(),
            launch_timeout_secs: 20,
            action_timeout_secs: 30,
            idle_timeout_secs: 300,
            max_text_chars: 8_000,
            max_elements: 200,
            max_sessions: 4,
            viewport_width: 1280,
            viewport_height: 800,
            sandbox: BrowserSandbox::Required,
            egress: EgressPolicy::default(),
        }
    }
}

impl BrowserConfig {
    /// Semantic checks beyond the TOML types: limits that make sense and, when enabled, a
    /// Chromium executable where it is expected.
    pub fn check(&self) -> Result<(), ConfigError> {
        let at_least = |field: &'static str, v: u64, min: u64| {
            if v < min {
                Err(ConfigError::TooSmall { field, min })
            } else {
                Ok(())
            }
        };
        at_least("launch_timeout_secs", self.launch_timeout_secs, 1)?;
        at_least("action_timeout_secs", self.action_timeout_secs, 1)?;
        at_least("idle_timeout_secs", self.idle_timeout_secs, 1)?;
        at_least("max_text_chars", self.max_text_chars as u64, 100)?;
        at_least("max_sessions", self.max_sessions as u64, 1)?;
        at_least("viewport_width", u64::from(self.viewport_width), 100)?;
        at_least("viewport_height", u64::from(self.viewport_height), 100)?;
        if self.enabled {
            self.check_chromium()?;
        }
        Ok(())
    }

    /// Whether the Chromium executable exists.
    pub fn check_chromium(&self) -> Result<(), ConfigError> {
        if self.chromium.is_file() {
            Ok(())
        } else {
            Err(ConfigError::ChromiumMissing {
                path: self.chromium.clone(),
            })
        }
    }

    pub fn launch_timeout(&self) -> Duration {
        Duration::from_secs(self.launch_timeout_secs)
    }

    pub fn action_timeout(&self) -> Duration {
        Duration::from_secs(self.action_timeout_secs)
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_with_defaults_and_rejects_unknown_keys() {
        let cfg: BrowserConfig = toml::from_str(
            "enabled = true\nallow_origins = [\"http://127.0.0.1:8080\"]\nmax_text_chars = 500\n",
        )
        .unwrap();
        let want = BrowserConfig {
            enabled: true,
            allow_origins: vec!["http://127.0.0.1:8080".parse().unwrap()],
            max_text_chars: 500,
            ..BrowserConfig::default()
        };
        assert_eq!(cfg, want);
        let err = toml::from_str::<BrowserConfig>("chrome = \"/x\"\n").unwrap_err();
        assert!(err.to_string().contains("unknown field `chrome`"), "{err}");
        let err = toml::from_str::<BrowserConfig>("allow_origins = [\"ftp://x\"]\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("[browser] allow_origins entry `ftp://x`"),
            "{err}"
        );
    }

    #[test]
    fn checks_name_the_setting() {
        let missing = BrowserConfig {
            enabled: true,
            chromium: PathBuf::from("/nonexistent/chromium"),
            ..BrowserConfig::default()
        };
        let tiny = BrowserConfig {
            action_timeout_secs: 0,
            ..BrowserConfig::default()
        };
        assert_eq!(
            [
                missing.check(),
                tiny.check(),
                BrowserConfig::default().check()
            ],
            [
                Err(ConfigError::ChromiumMissing {
                    path: PathBuf::from("/nonexistent/chromium")
                }),
                Err(ConfigError::TooSmall {
                    field: "action_timeout_secs",
                    min: 1
                }),
                Ok(()),
            ]
        );
    }
}
