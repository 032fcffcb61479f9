//! What can go wrong before a server serves: a bad `[[mcp.servers]]` entry ([`ConfigError`],
//! found before anything starts) and a failed connection ([`ConnectError`], kept in the
//! server's status and retried). Failures of a single call are `ToolError`s (see `tool.rs`).

use std::time::Duration;

/// A `[[mcp.servers]]` entry that cannot be used. Every message names the server and says
/// what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "MCP server name `{0}` is invalid: use 1-32 characters from [A-Za-z0-9_-], starting with a letter or digit, without `__`"
    )]
    InvalidName(String),
    #[error("MCP server `{0}` is configured twice: server names must be unique")]
    DuplicateName(String),
    #[error(
        "MCP servers `{first}` and `{second}` both set `prefix = \"never\"`: their tools, prompts or resource URIs could collide; keep the prefix on one of them"
    )]
    TwoUnprefixed { first: String, second: String },
    #[error("MCP server `{0}`: set `command` (a stdio server) or `url` (a Streamable HTTP server)")]
    NoTransport(String),
    #[error(
        "MCP server `{0}`: `command` and `url` are both set; a server is either stdio (`command`) or Streamable HTTP (`url`)"
    )]
    BothTransports(String),
    #[error("MCP server `{server}`: `{field}` only applies to {applies_to} servers; remove it")]
    FieldNotApplicable {
        server: String,
        field: &'static str,
        applies_to: &'static str,
    },
    #[error("MCP server `{server}`: `command` is empty")]
    EmptyCommand { server: String },
    #[error("MCP server `{server}`: url `{url}` is invalid: {reason}")]
    InvalidUrl {
        server: String,
        url: String,
        reason: String,
    },
    #[error("MCP server `{server}`: header `{header}` is invalid: {reason}")]
    InvalidHeader {
        server: String,
        header: String,
        reason: String,
    },
    #[error("MCP server `{server}`: `auth` is invalid: {reason}")]
    InvalidAuth { server: String, reason: String },
    #[error("MCP server `{server}`: `{field}` must be longer than zero")]
    ZeroTimeout { server: String, field: &'static str },
    #[error("MCP server `{server}`: tool pattern `{pattern}` is not a valid glob: {reason}")]
    InvalidGlob {
        server: String,
        pattern: String,
        reason: String,
    },
    #[error(
        "MCP server `{server}`: `{value}` refers to environment variable `{var}`, which is not set"
    )]
    MissingEnvVar {
        server: String,
        value: String,
        var: String,
    },
}

/// Why a server could not be brought up. Kept in its status; the server is retried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("could not start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("no answer to the MCP handshake within {}", humantime::format_duration(*.0))]
    StartupTimeout(Duration),
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    #[error("could not list the server's tools: {0}")]
    ListTools(String),
    #[error("the HTTP client could not be built: {0}")]
    HttpClient(String),
    /// The `[egress]` policy refused the server's URL, a redirect or a resolved address; the
    /// message names the entry to add.
    #[error("{0}")]
    Egress(String),
    /// A server with `sandbox` cannot be confined; it is not started unconfined.
    #[error("cannot start the server in the sandbox: {0}")]
    Sandbox(String),
    /// OAuth failed or is missing (`toolgate mcp login NAME`); the message says which.
    #[error("{0}")]
    Auth(String),
}

impl ConnectError {
    /// Appends the child's last stderr lines, which usually say why it failed.
    pub(crate) fn with_stderr(self, stderr: &[String]) -> Self {
        if stderr.is_empty() {
            return self;
        }
        let tail = stderr.join(" | ");
        match self {
            ConnectError::Handshake(m) => {
                ConnectError::Handshake(format!("{m}; server stderr: {tail}"))
            }
            ConnectError::ListTools(m) => {
                ConnectError::ListTools(format!("{m}; server stderr: {tail}"))
            }
            other => other,
        }
    }
}
