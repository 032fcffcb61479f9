//! One `[[mcp.servers]]` table: how to reach a server (stdio `command` or Streamable HTTP
//! `url`), how long to wait, which of its tools to federate, and how much to trust its
//! annotations. [`ServerConfig::validate`] checks everything that can be checked before a
//! process starts, so a typo fails at load time with a message that names the fix.
//!
//! ```toml
//! [[mcp.servers]]
//! name = "files"
//! command = "node"
//! args = ["server-filesystem/dist/index.js", "/srv/data"]
//! startup_timeout = "10s"
//! exclude = ["write_*", "move_file"]
//! risk = { read_text_file = "read" }
//!
//! [[mcp.servers]]
//! name = "search"
//! url = "https://mcp.example.com/mcp"
//! headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }
//! trusted = true
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_protocol::Risk;

use crate::ConfigError;
use crate::auth::AuthConfig;
use crate::sandbox::{SandboxChoice, SandboxSpec};

const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_NAME_LEN: usize = 32;

/// Which protocol era to speak (R-MCP-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ProtocolChoice {
    /// Try `server/discover` (2026-07-28); fall back to `initialize` (2025-11-25).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// Only 2026-07-28 (`server/discover`, stateless).
    #[serde(rename = "2026-07-28")]
    Discover,
    /// Only the `initialize` handshake (2025-11-25 and older).
    #[serde(rename = "2025-11-25")]
    Initialize,
}

/// One MCP server to federate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Short name: the `{server}` in `mcp__{server}__{tool}` and in the source `mcp:{server}`.
    pub name: String,
    /// Program to run for a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The server's environment besides `PATH`, `HOME`, `LANG` and `LC_ALL` (nothing else
    /// of toolgate's is inherited); `${VAR}` in a value is read from toolgate's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Endpoint of a Streamable HTTP server (`https://host/mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Sent with every HTTP request; `${VAR}` in a value is read from the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// Bound on connecting, the handshake and the first tool listing.
    #[serde(default = "default_startup_timeout", with = "duration")]
    pub startup_timeout: Duration,
    /// Bound on one `tools/call`.
    #[serde(default = "default_call_timeout", with = "duration")]
    pub call_timeout: Duration,
    /// Tool-name globs to federate (all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Tool-name globs to leave out (applied after `include`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Operator risk labels by raw MCP tool name; they override everything else.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub risk: BTreeMap<String, Risk>,
    /// Whether the server's annotations may lower a tool's risk below `write`.
    #[serde(default)]
    pub trusted: bool,
    #[serde(default)]
    pub protocol: ProtocolChoice,
    /// OAuth for a Streamable HTTP server (`docs/mcp-oauth.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthConfig>,
    /// How a stdio server is confined (see [`crate::sandbox`]): by default where possible,
    /// as a table says, or `"off"`.
    #[serde(default, skip_serializing_if = "SandboxChoice::is_default")]
    pub sandbox: SandboxChoice,
    /// How the server's names reach clients: `mcp__{server}__…` (the default) or, with
    /// `"never"`, unchanged (see [`naming`]).
    #[serde(default, skip_serializing_if = "NamePrefix::is_default")]
    pub prefix: NamePrefix,
    /// Where the server's requests to its client (sampling, elicitation, roots) go.
    #[serde(default, skip_serializing_if = "ClientRequests::is_default")]
    pub client_requests: ClientRequests,
}

fn enabled_by_default() -> bool {
    true
}

fn default_startup_timeout() -> Duration {
    DEFAULT_STARTUP_TIMEOUT
}

fn default_call_timeout() -> Duration {
    DEFAULT_CALL_TIMEOUT
}

/// How to reach a validated server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
        /// Start from an empty environment (always, for a configured server) instead of
        /// toolgate's.
        clear_env: bool,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl ServerConfig {
    /// A stdio server with default settings.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        ServerConfig {
            command: Some(command.into()),
            ..ServerConfig::empty(name.into())
        }
    }

    /// A Streamable HTTP server with default settings.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        ServerConfig {
            url: Some(url.into()),
            ..ServerConfig::empty(name.into())
        }
    }

    fn empty(name: String) -> Self {
        ServerConfig {
            name,
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            include: Vec::new(),
            exclude: Vec::new(),
            risk: BTreeMap::new(),
            trusted: false,
            protocol: ProtocolChoice::Auto,
            auth: None,
            sandbox: SandboxChoice::Default,
            prefix: NamePrefix::Server,
            client_requests: ClientRequests::Approval,
        }
    }

    pub fn with_args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    pub fn with_protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.protocol = protocol;
        self
    }

    pub fn with_auth(mut self, auth: AuthConfig) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Runs this stdio server inside the OS sandbox (see [`crate::sandbox`]).
    pub fn with_sandbox(mut self, sandbox: SandboxSpec) -> Self {
        self.sandbox = SandboxChoice::Spec(sandbox);
        self
    }

    /// Runs this stdio server unconfined (`sandbox = "off"`).
    pub fn without_sandbox(mut self) -> Self {
        self.sandbox = SandboxChoice::Off;
        self
    }

    pub fn with_trusted(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
    }

    /// Keeps the server's names as they are (`prefix = "never"`).
    pub fn with_prefix(mut self, prefix: NamePrefix) -> Self {
        self.prefix = prefix;
        self
    }

    /// What clients see for this server's names.
    pub fn naming(&self) -> Naming {
        Naming::new(self.name.clone(), self.prefix)
    }

    /// The catalog source name of this server's tools: `mcp:{name}`.
    pub fn source_name(&self) -> String {
        format!("mcp:{}", self.name)
    }

    /// Checks the entry without starting anything.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_name()?;
        self.endpoint_unexpanded()?;
        for (field, value) in [
            ("startup_timeout", self.startup_timeout),
            ("call_timeout", self.call_timeout),
        ] {
            if value.is_zero() {
                return Err(ConfigError::ZeroTimeout {
                    server: self.name.clone(),
                    field,
                });
            }
        }
        self.tool_filter()?;
        if let Some(auth) = &self.auth {
            if self.url.is_none() {
                return Err(self.not_applicable("auth", "Streamable HTTP (`url`)"));
            }
            auth.validate().map_err(|e| ConfigError::InvalidAuth {
                server: self.name.clone(),
                reason: e.to_string(),
            })?;
        }
        Ok(())
    }

    fn check_name(&self) -> Result<(), ConfigError> {
        let n = &self.name;
        let ok = !n.is_empty()
            && n.len() <= MAX_NAME_LEN
            && n.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            && !n.contains("__");
        if ok {
            Ok(())
        } else {
            Err(ConfigError::InvalidName(n.clone()))
        }
    }

    /// The endpoint with `${VAR}` references in `env` and `headers` resolved.
    pub fn endpoint(&self) -> Result<Endpoint, ConfigError> {
        match self.endpoint_unexpanded()? {
            Endpoint::Stdio {
                command,
                args,
                env,
                cwd,
                clear_env,
            } => Ok(Endpoint::Stdio {
                command,
                args,
                env: self.expand_all(&env)?,
                cwd,
                clear_env,
            }),
            Endpoint::Http { url, headers } => {
                let headers = self.expand_all(&headers)?;
                for (name, value) in &headers {
                    self.check_header(name, value)?;
                }
                Ok(Endpoint::Http { url, headers })
            }
        }
    }

    fn endpoint_unexpanded(&self) -> Result<Endpoint, ConfigError> {
        let server = self.name.clone();
        match (&self.command, &self.url) {
            (None, None) => Err(ConfigError::NoTransport(server)),
            (Some(_), Some(_)) => Err(ConfigError::BothTransports(server)),
            (Some(command), None) => {
                if !self.headers.is_empty() {
                    return Err(self.not_applicable("headers", "Streamable HTTP (`url`)"));
                }
                if command.trim().is_empty() {
                    return Err(ConfigError::EmptyCommand { server });
                }
                Ok(Endpoint::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    cwd: self.cwd.clone(),
                    clear_env: true,
                })
            }
            (None, Some(url)) => {
                for (field, set) in [
                    ("args", !self.args.is_empty()),
                    ("env", !self.env.is_empty()),
                    ("cwd", self.cwd.is_some()),
                    ("sandbox", !self.sandbox.is_default()),
                ] {
                    if set {
                        return Err(self.not_applicable(field, "stdio (`command`)"));
                    }
                }
                self.check_url(url)?;
                for name in self.headers.keys() {
                    self.check_header(name, "")?;
                }
                Ok(Endpoint::Http {
                    url: url.clone(),
                    headers: self.headers.clone(),
                })
            }
        }
    }

    fn not_applicable(&self, field: &'static str, applies_to: &'static str) -> ConfigError {
        ConfigError::FieldNotApplicable {
            server: self.name.clone(),
            field,
            applies_to,
        }
    }
}

/// Validates every entry, that names are unique and that at most one server keeps its own
/// names (two `prefix = "never"` servers could offer the same tool, prompt or URI).
pub fn validate_servers(servers: &[ServerConfig]) -> Result<(), ConfigError> {
    let mut seen = BTreeSet::new();
    let mut unprefixed: Option<&str> = None;
    for s in servers {
        s.validate()?;
        if !seen.insert(s.name.as_str()) {
            return Err(ConfigError::DuplicateName(s.name.clone()));
        }
        if s.prefix == NamePrefix::Never {
            if let Some(first) = unprefixed {
                return Err(ConfigError::TwoUnprefixed {
                    first: first.to_owned(),
                    second: s.name.clone(),
                });
            }
            unprefixed = Some(&s.name);
        }
    }
    Ok(())
}

mod checks;
mod duration;
pub mod naming;
pub mod requests;
#[cfg(test)]
mod tests;

pub(crate) use checks::ToolFilter;
pub use naming::{NamePrefix, Naming};
pub use requests::ClientRequests;
