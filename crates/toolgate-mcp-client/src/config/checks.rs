//! The checks behind [`ServerConfig::validate`] and [`ServerConfig::endpoint`]: URLs,
//! headers, `${VAR}` references and tool globs.

use std::collections::BTreeMap;

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::ServerConfig;
use crate::ConfigError;

/// Headers the Streamable HTTP transport sets itself; a config must not override them.
const RESERVED_HEADERS: [&str; 6] = [
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
];

impl ServerConfig {
    pub(super) fn check_url(&self, url: &str) -> Result<(), ConfigError> {
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

    pub(super) fn check_header(&self, name: &str, value: &str) -> Result<(), ConfigError> {
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

    pub(super) fn expand_all(
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
