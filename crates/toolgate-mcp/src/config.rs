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

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use toolgate_protocol::Risk;

use crate::ConfigError;

const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_NAME_LEN: usize = 32;
/// Headers the Streamable HTTP transport sets itself; a config must not override them.
const RESERVED_HEADERS: [&str; 6] = [
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
];

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
    /// Added to the inherited environment; `${VAR}` in a value is read from toolgate's own.
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

    pub fn with_trusted(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
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
            } => Ok(Endpoint::Stdio {
                command,
                args,
                env: self.expand_all(&env)?,
                cwd,
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
                })
            }
            (None, Some(url)) => {
                for (field, set) in [
                    ("args", !self.args.is_empty()),
                    ("env", !self.env.is_empty()),
                    ("cwd", self.cwd.is_some()),
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

    fn check_url(&self, url: &str) -> Result<(), ConfigError> {
        let invalid = |reason: String| ConfigError::InvalidUrl {
            server: self.name.clone(),
            url: url.to_owned(),
            reason,
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "scheme `{}` is not supported; use http or https",
                parsed.scheme()
            )));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid("it has no host".to_owned()));
        }
        Ok(())
    }

    fn check_header(&self, name: &str, value: &str) -> Result<(), ConfigError> {
        let invalid = |reason: &str| ConfigError::InvalidHeader {
            server: self.name.clone(),
            header: name.to_owned(),
            reason: reason.to_owned(),
        };
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(invalid("not a valid HTTP header name"));
        }
        if RESERVED_HEADERS
            .iter()
            .any(|r| r.eq_ignore_ascii_case(name))
        {
            return Err(invalid(
                "the MCP transport sets this header itself; remove it",
            ));
        }
        if reqwest::header::HeaderValue::from_str(value).is_err() {
            return Err(invalid(
                "the value has characters HTTP headers cannot carry",
            ));
        }
        Ok(())
    }

    fn expand_all(
        &self,
        map: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        map.iter()
            .map(|(k, v)| Ok((k.clone(), self.expand(v)?)))
            .collect()
    }

    /// Replaces every `${VAR}` with the variable's value; `$${` stays a literal `${`.
    fn expand(&self, value: &str) -> Result<String, ConfigError> {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(at) = rest.find("${") {
            if rest[..at].ends_with('$') {
                out.push_str(&rest[..at - 1]);
                out.push_str("${");
                rest = &rest[at + 2..];
                continue;
            }
            out.push_str(&rest[..at]);
            let Some(end) = rest[at + 2..].find('}') else {
                out.push_str(&rest[at..]);
                return Ok(out);
            };
            let var = &rest[at + 2..at + 2 + end];
            let resolved = std::env::var(var).map_err(|_| ConfigError::MissingEnvVar {
                server: self.name.clone(),
                value: value.to_owned(),
                var: var.to_owned(),
            })?;
            out.push_str(&resolved);
            rest = &rest[at + 3 + end..];
        }
        out.push_str(rest);
        Ok(out)
    }

    pub(crate) fn tool_filter(&self) -> Result<ToolFilter, ConfigError> {
        Ok(ToolFilter {
            include: self.globs(&self.include)?,
            exclude: self.globs(&self.exclude)?,
        })
    }

    fn globs(&self, patterns: &[String]) -> Result<Option<GlobSet>, ConfigError> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            let glob = Glob::new(p).map_err(|e| ConfigError::InvalidGlob {
                server: self.name.clone(),
                pattern: p.clone(),
                reason: e.kind().to_string(),
            })?;
            set.add(glob);
        }
        set.build().map(Some).map_err(|e| ConfigError::InvalidGlob {
            server: self.name.clone(),
            pattern: patterns.join(", "),
            reason: e.to_string(),
        })
    }
}

/// Validates every entry and that names are unique.
pub fn validate_servers(servers: &[ServerConfig]) -> Result<(), ConfigError> {
    let mut seen = BTreeSet::new();
    for s in servers {
        s.validate()?;
        if !seen.insert(s.name.as_str()) {
            return Err(ConfigError::DuplicateName(s.name.clone()));
        }
    }
    Ok(())
}

/// `include` / `exclude` over raw MCP tool names.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl ToolFilter {
    pub(crate) fn admits(&self, tool: &str) -> bool {
        self.include.as_ref().is_none_or(|s| s.is_match(tool))
            && !self.exclude.as_ref().is_some_and(|s| s.is_match(tool))
    }
}

/// `"10s"`, `"1m 30s"`, `"250ms"` (humantime) or a number of seconds.
mod duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Seconds(u64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Seconds(s) => Ok(Duration::from_secs(s)),
            Raw::Text(t) => humantime::parse_duration(&t).map_err(|e| {
                D::Error::custom(format!(
                    "`{t}` is not a duration ({e}); write it like \"10s\", \"2m\" or \"500ms\""
                ))
            }),
        }
    }

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> Result<ServerConfig, String> {
        toml::from_str::<ServerConfig>(toml_text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_stdio_table_parses_with_defaults_filled() {
        let c = parse(
            r#"
            name = "files"
            command = "node"
            args = ["index.js", "/tmp"]
            env = { A = "1" }
            startup_timeout = "2s"
            exclude = ["write_*"]
            risk = { read_file = "read", delete = "dangerous" }
            "#,
        )
        .unwrap();
        let mut expected = ServerConfig::stdio("files", "node")
            .with_args(["index.js", "/tmp"])
            .with_env("A", "1")
            .with_startup_timeout(Duration::from_secs(2));
        expected.exclude = vec!["write_*".into()];
        expected.risk = BTreeMap::from([
            ("read_file".into(), Risk::Read),
            ("delete".into(), Risk::Dangerous),
        ]);
        assert_eq!(c, expected);
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.call_timeout, Duration::from_secs(60));
    }

    #[test]
    fn durations_accept_seconds_and_reject_nonsense_with_a_hint() {
        let c = parse("name = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\ncall_timeout = 5\nprotocol = \"2025-11-25\"").unwrap();
        assert_eq!(c.call_timeout, Duration::from_secs(5));
        assert_eq!(c.protocol, ProtocolChoice::Initialize);
        let err = parse("name = \"a\"\ncommand = \"x\"\nstartup_timeout = \"soon\"").unwrap_err();
        assert!(err.contains("write it like \"10s\""), "{err}");
        let err = parse("name = \"a\"\ncommand = \"x\"\ncomand = \"y\"").unwrap_err();
        assert!(err.contains("unknown field `comand`"), "{err}");
    }

    #[test]
    fn validation_names_the_problem() {
        let cases = [
            (
                ServerConfig::stdio("bad.name", "x"),
                ConfigError::InvalidName("bad.name".into()),
            ),
            (
                ServerConfig::stdio("a__b", "x"),
                ConfigError::InvalidName("a__b".into()),
            ),
            (
                ServerConfig {
                    command: None,
                    ..ServerConfig::stdio("s", "x")
                },
                ConfigError::NoTransport("s".into()),
            ),
            (
                ServerConfig {
                    url: Some("http://h/mcp".into()),
                    ..ServerConfig::stdio("s", "x")
                },
                ConfigError::BothTransports("s".into()),
            ),
            (
                ServerConfig::http("s", "http://h/mcp").with_cwd("/"),
                ConfigError::FieldNotApplicable {
                    server: "s".into(),
                    field: "cwd",
                    applies_to: "stdio (`command`)",
                },
            ),
            (
                ServerConfig::stdio("s", "x").with_header("A", "b"),
                ConfigError::FieldNotApplicable {
                    server: "s".into(),
                    field: "headers",
                    applies_to: "Streamable HTTP (`url`)",
                },
            ),
            (
                ServerConfig::http("s", "ftp://h/mcp"),
                ConfigError::InvalidUrl {
                    server: "s".into(),
                    url: "ftp://h/mcp".into(),
                    reason: "scheme `ftp` is not supported; use http or https".into(),
                },
            ),
            (
                ServerConfig::http("s", "http://h/mcp").with_header("Mcp-Session-Id", "x"),
                ConfigError::InvalidHeader {
                    server: "s".into(),
                    header: "Mcp-Session-Id".into(),
                    reason: "the MCP transport sets this header itself; remove it".into(),
                },
            ),
            (
                ServerConfig::stdio("s", "x").with_call_timeout(Duration::ZERO),
                ConfigError::ZeroTimeout {
                    server: "s".into(),
                    field: "call_timeout",
                },
            ),
            (
                ServerConfig {
                    include: vec!["a[".into()],
                    ..ServerConfig::stdio("s", "x")
                },
                ConfigError::InvalidGlob {
                    server: "s".into(),
                    pattern: "a[".into(),
                    reason: "unclosed character class; missing ']'".into(),
                },
            ),
        ];
        for (config, expected) in cases {
            assert_eq!(config.validate(), Err(expected));
        }
        let twice = [ServerConfig::stdio("a", "x"), ServerConfig::stdio("a", "y")];
        assert_eq!(
            validate_servers(&twice),
            Err(ConfigError::DuplicateName("a".into()))
        );
    }

    #[test]
    fn env_references_are_expanded_at_connect_time() {
        let c = ServerConfig::stdio("s", "x")
            .with_env("HOME_COPY", "${HOME}/x")
            .with_env("LITERAL", "$${HOME}");
        let home = std::env::var("HOME").unwrap();
        let Endpoint::Stdio { env, .. } = c.endpoint().unwrap() else {
            panic!("stdio expected")
        };
        assert_eq!(
            env,
            BTreeMap::from([
                ("HOME_COPY".into(), format!("{home}/x")),
                ("LITERAL".into(), "${HOME}".into()),
            ])
        );
        let missing = ServerConfig::http("s", "http://h/mcp")
            .with_header("Authorization", "Bearer ${TOOLGATE_MCP_TEST_UNSET_VAR}");
        assert_eq!(
            missing.endpoint(),
            Err(ConfigError::MissingEnvVar {
                server: "s".into(),
                value: "Bearer ${TOOLGATE_MCP_TEST_UNSET_VAR}".into(),
                var: "TOOLGATE_MCP_TEST_UNSET_VAR".into(),
            })
        );
    }

    #[test]
    fn include_then_exclude() {
        let c = ServerConfig {
            include: vec!["read_*".into(), "list_*".into()],
            exclude: vec!["read_secret*".into()],
            ..ServerConfig::stdio("s", "x")
        };
        let f = c.tool_filter().unwrap();
        let admitted: Vec<&str> = ["read_file", "read_secrets", "list_dir", "write_file"]
            .into_iter()
            .filter(|t| f.admits(t))
            .collect();
        assert_eq!(admitted, ["read_file", "list_dir"]);
    }
}
