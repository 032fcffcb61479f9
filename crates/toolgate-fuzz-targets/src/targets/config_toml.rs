//! The configuration file, as far as the libraries reach: `toolgate.toml` text into the
//! section types the CLI's `FileConfig` is made of (gateway limits, approvals and roles,
//! `[server]`, `[egress]`, `[web]`, `[model]`, `[[mcp.servers]]`), then the checks those
//! libraries own (`Roles::compile`, `ServerConfig::check`, building the web tools,
//! `ModelConfig::check`, `validate_servers`).
//!
//! The CLI's own loader (`crates/toolgate-cli/src/settings.rs`: `load`, the cross-section
//! checks, `[audit]`, `[shell]`, `[files]`) is in the binary crate, which has no library
//! target; its sections are accepted as any table here until the loader moves to a library.
//! `[browser]` and `[rag]` are accepted as any table too, to keep Chromium's and the
//! embedding model's dependencies out of the fuzz build.
//!
//! Properties: no panic, no hang; and what `toolgate config` prints for a configuration the
//! checks accept (`toml::to_string_pretty`) reads back as the same configuration.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toolgate_gateway::policy::{RoleConfig, Roles};
use toolgate_gateway::{ApprovalsConfig, LimitsConfig};
use toolgate_mcp_client::ServerConfig as McpServerConfig;
use toolgate_net::EgressPolicy;
use toolgate_server::ServerConfig;
use toolgate_web::WebConfig;

/// The CLI's `FileConfig`, with the library types it is made of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct FileConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    data_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_role: Option<String>,
    audit: toml::Table,
    limits: LimitsConfig,
    approvals: ApprovalsConfig,
    shell: toml::Table,
    files: toml::Table,
    roles: BTreeMap<String, RoleConfig>,
    server: ServerConfig,
    egress: EgressPolicy,
    web: WebConfig,
    browser: toml::Table,
    model: toolgate_agent::ModelConfig,
    mcp: McpSettings,
    rag: toml::Table,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct McpSettings {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    servers: Vec<McpServerConfig>,
}

/// Whether the libraries' checks accept `cfg` (all of them run, whatever the first says).
fn check(cfg: &FileConfig) -> bool {
    let roles = Roles::compile(&cfg.roles).is_ok();
    let server = cfg.server.check().is_ok();
    let model = cfg.model.check().is_ok();
    let mcp = toolgate_mcp_client::validate_servers(&cfg.mcp.servers).is_ok();
    // Building the web tools builds an HTTP client: only when a web tool is on.
    let web = !(cfg.web.url_read.enabled || cfg.web.search.is_some())
        || toolgate_web::web_tools(&cfg.web, &cfg.egress).is_ok();
    roles && server && model && mcp && web
}

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut cfg) = toml::from_str::<FileConfig>(text) else {
        return;
    };
    cfg.server.egress = cfg.egress.clone();
    // The CLI refuses a configuration its checks reject; only the others are printed.
    if !check(&cfg) {
        return;
    }
    let printed = toml::to_string_pretty(&cfg)
        .unwrap_or_else(|e| panic!("a loaded configuration does not print: {e}\n{text}"));
    let mut again: FileConfig = toml::from_str(&printed).unwrap_or_else(|e| {
        panic!("the printed configuration does not load: {e}\n--- loaded from\n{text}\n--- printed\n{printed}")
    });
    again.server.egress = again.egress.clone();
    assert_eq!(
        again, cfg,
        "printing and loading changed the configuration:\n{printed}"
    );
}
