//! How a federated server's names reach toolgate's clients (`docs/mcp.md`, "Names"):
//! tools and prompts as `mcp__{server}__{name}`, resource URIs as `mcp://{server}/{uri}`
//! — or, with `prefix = "never"`, exactly as the server names them (transparent proxying;
//! at most one such server, so two can never offer the same name).

use serde::{Deserialize, Serialize};
use toolgate_registry::external_tool_name;

/// The scheme of a namespaced resource URI: `mcp://{server}/{the server's own URI}`.
pub const RESOURCE_SCHEME: &str = "mcp://";

/// `prefix` of a server entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamePrefix {
    /// `mcp__{server}__{name}` and `mcp://{server}/{uri}`.
    #[default]
    Server,
    /// The server's own names and URIs.
    Never,
}

impl NamePrefix {
    pub fn is_default(&self) -> bool {
        *self == NamePrefix::Server
    }
}

/// One server's naming: what its clients see for each of its names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naming {
    pub server: String,
    pub prefix: NamePrefix,
}

impl Naming {
    pub fn new(server: impl Into<String>, prefix: NamePrefix) -> Self {
        Naming {
            server: server.into(),
            prefix,
        }
    }

    /// The catalog name of tool `raw`.
    pub fn tool(&self, raw: &str) -> String {
        match self.prefix {
            NamePrefix::Server => external_tool_name(&self.server, raw),
            NamePrefix::Never => raw.to_owned(),
        }
    }

    /// The name clients see for prompt `raw` (the same rule as tools).
    pub fn prompt(&self, raw: &str) -> String {
        self.tool(raw)
    }

    /// The server's prompt behind `name`, if `name` is one of this server's names.
    pub fn raw_prompt<'a>(&self, name: &'a str) -> Option<&'a str> {
        match self.prefix {
            NamePrefix::Never => Some(name),
            NamePrefix::Server => name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(self.server.as_str()))
                .and_then(|rest| rest.strip_prefix("__")),
        }
    }

    /// The URI clients see for the server's URI (or URI template) `raw`.
    pub fn uri(&self, raw: &str) -> String {
        match self.prefix {
            NamePrefix::Server => format!("{RESOURCE_SCHEME}{}/{raw}", self.server),
            NamePrefix::Never => raw.to_owned(),
        }
    }

    /// The server's URI behind `uri`, if `uri` names one of this server's resources by the
    /// namespaced form. A raw URI of a `never` server is matched by the caller against its
    /// lists, not here.
    pub fn raw_uri<'a>(&self, uri: &'a str) -> Option<&'a str> {
        match self.prefix {
            NamePrefix::Never => Some(uri),
            NamePrefix::Server => uri
                .strip_prefix(RESOURCE_SCHEME)
                .and_then(|rest| rest.strip_prefix(self.server.as_str()))
                .and_then(|rest| rest.strip_prefix('/')),
        }
    }

    /// What a role's globs are matched against for resource `raw`: the namespaced tool-style
    /// key `mcp__{server}__{uri}` (so `mcp__github__*` allows every name of `github`), or the
    /// raw URI of a `never` server.
    pub fn resource_key(&self, raw: &str) -> String {
        match self.prefix {
            NamePrefix::Server => format!("mcp__{}__{raw}", self.server),
            NamePrefix::Never => raw.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_and_uris_round_trip_and_never_keeps_them() {
        let n = Naming::new("everything", NamePrefix::Server);
        assert_eq!(n.prompt("simple"), "mcp__everything__simple");
        assert_eq!(n.raw_prompt("mcp__everything__simple"), Some("simple"));
        assert_eq!(n.raw_prompt("mcp__everythingelse__simple"), None);
        assert_eq!(n.raw_prompt("mcp__every__simple"), None);
        let uri = n.uri("demo://resource/static/1");
        assert_eq!(uri, "mcp://everything/demo://resource/static/1");
        assert_eq!(n.raw_uri(&uri), Some("demo://resource/static/1"));
        assert_eq!(n.raw_uri("mcp://everythingx/demo://r"), None);
        assert_eq!(
            n.resource_key("demo://r"),
            "mcp__everything__demo://r".to_owned()
        );

        let never = Naming::new("fixture", NamePrefix::Never);
        assert_eq!(never.tool("test_simple_text"), "test_simple_text");
        assert_eq!(never.uri("test://static-text"), "test://static-text");
        assert_eq!(
            never.raw_uri("test://static-text"),
            Some("test://static-text")
        );
        assert_eq!(never.resource_key("test://x"), "test://x");
    }
}
