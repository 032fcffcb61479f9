//! `toolgate.toml`: every key optional, unknown keys rejected, every error naming the file,
//! the line and what was expected. Precedence: flags and environment > file > defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use toolgate_audit::Durability;
use toolgate_browser::BrowserConfig;
use toolgate_gateway::policy::{PolicyConfig, PolicyRules, RoleConfig, Roles};
use toolgate_gateway::{ApprovalsConfig, GatewayConfig, LimitsConfig};
use toolgate_mcp_client::ServerConfig as McpServerConfig;
use toolgate_server::ServerConfig;
use toolgate_server::config::EgressPolicy;
use toolgate_tools::{ResourceLimits, SandboxMode};
use toolgate_web::WebConfig;

/// What the command line (or an embedding program) says over the file: each `None` leaves
/// the file's value or the default.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The directory the file and shell tools are confined to (default: the current one).
    pub workspace: Option<PathBuf>,
    /// Where the audit log, approvals and offloaded results live.
    pub data_dir: Option<PathBuf>,
    /// The configuration file (default: `toolgate.toml` in the workspace, if it exists).
    pub config: Option<PathBuf>,
    /// The role to act in.
    pub role: Option<String>,
}

pub const CONFIG_FILE: &str = "toolgate.toml";
pub const DEFAULT_DATA_DIR: &str = ".toolgate";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityName {
    Buffered,
    #[default]
    Durable,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditSettings {
    /// `durable`: a call's record is fsynced before its result is returned (write and
    /// dangerous tools: also before they run). `buffered`: written in the background.
    pub durability: DurabilityName,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShellSettings {
    pub default_timeout_secs: u64,
    pub max_timeout_secs: u64,
    pub output_cap_bytes: usize,
    /// Environment variables passed through to commands (everything else is scrubbed).
    pub env_allowlist: Vec<String>,
    /// The OS sandbox: `required`, `if-available` or `off`.
    pub sandbox: SandboxMode,
    /// Let sandboxed commands use the network.
    pub allow_network: bool,
    /// Address space per process in MiB (0: no limit).
    pub memory_mb: u64,
    /// Processes and threads per command (0: no limit).
    pub max_processes: u64,
    /// CPU seconds per process (0: no limit).
    pub cpu_secs: u64,
    /// Largest file a command may write, in MiB (0: no limit).
    pub max_file_mb: u64,
    /// Read-only trees sandboxed commands may also use (relative: to the workspace).
    pub extra_read_paths: Vec<PathBuf>,
    /// Hosts sandboxed commands may reach through toolgate's egress proxy (every role);
    /// empty: no network. Same entry forms as `[egress] allow_hosts`.
    pub egress: Vec<toolgate_net::HostPattern>,
    /// Per role, instead of `egress` (an empty list: no network for that role).
    pub role_egress: std::collections::BTreeMap<String, Vec<toolgate_net::HostPattern>>,
}

impl Default for ShellSettings {
    fn default() -> Self {
        let limits = ResourceLimits::default();
        let mb = |bytes: Option<u64>| bytes.map_or(0, |b| b >> 20);
        ShellSettings {
            default_timeout_secs: 60,
            max_timeout_secs: 600,
            output_cap_bytes: 64 * 1024,
            env_allowlist: Vec::new(),
            sandbox: SandboxMode::default(),
            allow_network: false,
            memory_mb: mb(limits.memory_bytes),
            max_processes: limits.max_processes.unwrap_or(0),
            cpu_secs: limits.cpu_secs.unwrap_or(0),
            max_file_mb: mb(limits.max_file_bytes),
            extra_read_paths: Vec::new(),
            egress: Vec::new(),
            role_egress: std::collections::BTreeMap::new(),
        }
    }
}

impl ShellSettings {
    /// The limits, with 0 meaning none.
    pub fn limits(&self) -> ResourceLimits {
        let set = |v: u64| (v > 0).then_some(v);
        ResourceLimits {
            cpu_secs: set(self.cpu_secs),
            memory_bytes: set(self.memory_mb).map(|m| m.saturating_mul(1 << 20)),
            max_processes: set(self.max_processes),
            max_file_bytes: set(self.max_file_mb).map(|m| m.saturating_mul(1 << 20)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileSettings {
    /// Largest file read_file / edit_file / search_files will read.
    pub max_read_bytes: u64,
}

impl Default for FileSettings {
    fn default() -> Self {
        FileSettings {
            max_read_bytes: 10 << 20,
        }
    }
}

/// The `[mcp]` table: the MCP servers whose tools join the catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpSettings {
    /// One `[[mcp.servers]]` table per server (see docs/mcp.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<McpServerConfig>,
}

/// The `[store]` table: where shared state lives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSettings {
    /// `postgres://user@host:5432/db?sslmode=verify-full`: the store a cluster of replicas
    /// shares (docs/deployment.md). Absent: the embedded store in the data directory.
    /// `${VAR}` is read from the environment, so a password need not be in the file;
    /// `TOOLGATE_STORE_URL` replaces the whole value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Where shared state lives, resolved once ([`Config::store`]).
pub use toolgate_store::StoreLocation;

/// `[approvals]` as written: the gateway's settings, the approval channels, and the
/// principals that hold the operator right in those channels without an operator token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalsSettings {
    /// How long a pending approval waits for a decision.
    pub ttl_secs: u64,
    /// Wait for the decision instead of returning `approval_required` at once.
    pub wait: bool,
    /// How often a waiting call checks the store.
    pub poll_millis: u64,
    /// Principals that may decide from a chat besides those with an operator token (for
    /// principals known only through an identity provider).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<String>,
    /// `[[approvals.channels]]`: Telegram and Slack (docs/approvals.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<toolgate_channels::ChannelConfig>,
}

impl Default for ApprovalsSettings {
    fn default() -> Self {
        let gateway = ApprovalsConfig::default();
        ApprovalsSettings {
            ttl_secs: gateway.ttl_secs,
            wait: gateway.wait,
            poll_millis: gateway.poll_millis,
            operators: Vec::new(),
            channels: Vec::new(),
        }
    }
}

impl ApprovalsSettings {
    /// What the gateway reads.
    pub fn gateway(&self) -> ApprovalsConfig {
        ApprovalsConfig {
            ttl_secs: self.ttl_secs,
            wait: self.wait,
            poll_millis: self.poll_millis,
        }
    }
}

/// The file, as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileConfig {
    /// Relative paths are relative to the workspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Role used when no --role is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_role: Option<String>,
    pub audit: AuditSettings,
    pub limits: LimitsConfig,
    /// `[approvals]`: how long requests wait, and `[[approvals.channels]]` (Telegram, Slack).
    pub approvals: ApprovalsSettings,
    pub shell: ShellSettings,
    pub files: FileSettings,
    pub roles: BTreeMap<String, RoleConfig>,
    /// `[[policy.rules]]`: CEL conditions over the call that decide before the role does.
    pub policy: PolicyConfig,
    /// `[[quotas]]`: calls per interval and in flight, per principal and per tool.
    pub quotas: Vec<toolgate_gateway::quota::QuotaConfig>,
    pub server: ServerConfig,
    /// Outbound HTTP (webhook, MCP servers, url_read): allowlists, redirects, timeouts.
    pub egress: EgressPolicy,
    /// Web tools (`url_read`, `web_search`; off by default): caps and the search backend.
    pub web: WebConfig,
    /// The browser tools (off by default: they start Chromium): executable, origins, limits.
    pub browser: BrowserConfig,
    /// The model `toolgate run`, `toolgate chat` and the conversations talk to (provider,
    /// model, base_url, key variable).
    pub model: toolgate_agent::ModelConfig,
    /// `[conversations]`: the agent under `toolgate serve` (web, OpenAI-compatible endpoint).
    pub conversations: toolgate_conversations::ConversationsConfig,
    /// `[[bots]]`: chat apps whose users talk to the agent (docs/conversations.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bots: Vec<toolgate_chatbots::BotConfig>,
    /// MCP servers to federate (`[[mcp.servers]]`); HTTP ones are reached under `[egress]`.
    pub mcp: McpSettings,
    /// Tool RAG (`[rag]`): threshold, k, retriever, fusion, embedding model or endpoint.
    pub rag: toolgate_rag::RagConfig,
    /// Where shared state lives (`[store] url`; embedded when absent).
    pub store: StoreSettings,
    /// OpenTelemetry (`[telemetry]`; off by default): OTLP export, sampling, `/metrics`.
    pub telemetry: toolgate_telemetry::TelemetryConfig,
}

/// Everything resolved: paths absolute, defaults applied.
#[derive(Debug, Clone)]
pub struct Config {
    pub workspace: PathBuf,
    pub data_dir: PathBuf,
    /// The file read, if any.
    pub config_path: Option<PathBuf>,
    pub role: String,
    pub file: FileConfig,
    /// Where shared state lives, resolved once from `TOOLGATE_STORE_URL` / `[store] url`.
    store: StoreLocation,
}

impl Config {
    pub fn resolve(global: &Overrides) -> anyhow::Result<Config> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let workspace = match &global.workspace {
            Some(w) => absolute(&cwd, w),
            None => cwd.clone(),
        };
        if !workspace.is_dir() {
            bail!(
                "workspace {} is not a directory (set it with --workspace)",
                workspace.display()
            );
        }
        let config_path = match &global.config {
            Some(p) => {
                let p = absolute(&cwd, p);
                if !p.is_file() {
                    bail!("config file {} does not exist", p.display());
                }
                Some(p)
            }
            None => Some(workspace.join(CONFIG_FILE)).filter(|p| p.is_file()),
        };
        let file = match &config_path {
            Some(p) => load(p)?,
            None => FileConfig::default(),
        };
        let data_dir = match (&global.data_dir, &file.data_dir) {
            (Some(d), _) => absolute(&cwd, d),
            (None, Some(d)) => absolute(&workspace, d),
            (None, None) => workspace.join(DEFAULT_DATA_DIR),
        };
        let role = global
            .role
            .clone()
            .or_else(|| file.default_role.clone())
            .unwrap_or_else(|| "default".to_owned());
        let store = resolve_store(&file.store, &data_dir)?;
        Ok(Config {
            workspace,
            data_dir,
            config_path,
            role,
            file,
            store,
        })
    }

    pub fn gateway(&self) -> GatewayConfig {
        GatewayConfig {
            limits: self.file.limits.clone(),
            approvals: self.file.approvals.gateway(),
            roles: self.file.roles.clone(),
            policy: self.file.policy.clone(),
            quotas: self.file.quotas.clone(),
        }
    }

    pub fn durability(&self) -> Durability {
        match self.file.audit.durability {
            DurabilityName::Buffered => Durability::Buffered,
            DurabilityName::Durable => Durability::Durable,
        }
    }

    pub fn audit_path(&self) -> PathBuf {
        self.data_dir.join("logs").join("tool-audit.jsonl")
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("toolgate.db")
    }

    pub fn results_dir(&self) -> PathBuf {
        self.data_dir.join("results")
    }

    /// Where shared state lives, as resolved when the configuration was read.
    pub fn store(&self) -> &StoreLocation {
        &self.store
    }
}

/// Where shared state lives: `TOOLGATE_STORE_URL`, else `[store] url` (with `${VAR}` read
/// from the environment), else the embedded store in `data_dir`.
fn resolve_store(settings: &StoreSettings, data_dir: &Path) -> anyhow::Result<StoreLocation> {
    let env = std::env::var("TOOLGATE_STORE_URL")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let (url, from) = match (env, &settings.url) {
        (Some(url), _) => (url, "TOOLGATE_STORE_URL"),
        (None, Some(url)) => (expand_env(url)?, "[store] url"),
        (None, None) => return Ok(StoreLocation::embedded(data_dir)),
    };
    let url = url
        .trim()
        .parse()
        .with_context(|| format!("{from} is not a usable PostgreSQL URL"))?;
    Ok(StoreLocation::Postgres(Box::new(url)))
}

/// Replaces each `${VAR}` with the variable's value; an unset variable is an error naming it.
fn expand_env(text: &str) -> anyhow::Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .with_context(|| format!("`${{` without a closing `}}` in {text:?}"))?;
        let name = &after[..end];
        let value = std::env::var(name)
            .with_context(|| format!("[store] url names ${{{name}}}, which is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// Reads and checks a config file: TOML syntax, known keys and types, then semantics
/// (role globs and policy rules compile, limits are sane).
pub fn load(path: &Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    let mut cfg: FileConfig = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?;
    cfg.server.egress = cfg.egress.clone();
    cfg.browser.egress = cfg.egress.clone();
    check(&cfg).with_context(|| format!("{}: invalid configuration", path.display()))?;
    Ok(cfg)
}

fn check(cfg: &FileConfig) -> anyhow::Result<()> {
    cfg.server.check()?;
    // Builds the web tools once: a bad [web] setting or a missing key variable stops here.
    toolgate_web::web_tools(&cfg.web, &cfg.egress)?;
    cfg.browser.check()?;
    cfg.model.check()?;
    cfg.conversations.check().map_err(anyhow::Error::msg)?;
    cfg.telemetry.check()?;
    // As `serve` would: an exporting [telemetry] whose header variable is unset stops here.
    let env = |name: &str| std::env::var(name).ok();
    if cfg.telemetry.exports(env) {
        cfg.telemetry.headers(env)?;
    }
    toolgate_mcp_client::validate_servers(&cfg.mcp.servers)?;
    if let Some(url) = cfg.store.url.as_deref().filter(|u| !u.contains("${")) {
        url.trim()
            .parse::<toolgate_store::pg::PgUrl>()
            .context("[store] url")?;
    }
    let l = &cfg.limits;
    if l.result_budget_bytes == 0 || l.result_budget_bytes > l.result_hard_limit_bytes {
        bail!("limits.result_budget_bytes must be between 1 and limits.result_hard_limit_bytes");
    }
    if l.result_retention_bytes <= l.result_budget_bytes as u64 {
        bail!(
            "limits.result_retention_bytes must be larger than limits.result_budget_bytes (no offloaded result would be kept)"
        );
    }
    if l.max_concurrent == 0
        || l.call_timeout_secs == 0
        || l.max_argument_bytes == 0
        || l.reservation_lease_secs == 0
    {
        bail!(
            "limits.max_concurrent, limits.call_timeout_secs, limits.max_argument_bytes and limits.reservation_lease_secs must be positive"
        );
    }
    if cfg.approvals.ttl_secs == 0 {
        bail!("approvals.ttl_secs must be positive");
    }
    toolgate_channels::config::check_all(&cfg.approvals.channels)?;
    toolgate_chatbots::config::check_all(&cfg.bots)?;
    for bot in &cfg.bots {
        if cfg
            .approvals
            .channels
            .iter()
            .any(|c| c.token_env == bot.token_env)
        {
            bail!(
                "[[bots]] `{}` reads the token_env of an approval channel: a bot token serves one \
                 of them (Telegram hands each update to one reader)",
                bot.name
            );
        }
        if let Some(role) = &bot.guest_role
            && !cfg.roles.contains_key(role.as_str())
        {
            bail!(
                "[[bots]] `{}`: guest_role `{role}` is not a role of [roles]",
                bot.name
            );
        }
    }
    let s = &cfg.shell;
    if s.default_timeout_secs == 0 || s.default_timeout_secs > s.max_timeout_secs {
        bail!("shell.default_timeout_secs must be between 1 and shell.max_timeout_secs");
    }
    PolicyRules::compile(&cfg.policy)?;
    toolgate_gateway::quota::compile_all(&cfg.quotas)?;
    // The roles [server] grants (tokens, anonymous callers) must exist.
    let roles = Roles::compile(&cfg.roles)?;
    for role in cfg.server.granted_roles() {
        if roles.get(role).is_none() {
            let names: Vec<&str> = roles.names().collect();
            bail!(
                "[server] grants role `{role}`, which is not configured (configured roles: {})",
                names.join(", ")
            );
        }
    }
    if let Some(role) = &cfg.default_role
        && !cfg.roles.contains_key(role)
        && role != "default"
        && role != "readonly"
    {
        bail!("default_role `{role}` is not a configured role");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.toml");
        std::fs::write(&p, "[limits]\ncall_timeout = 5\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains("unknown field `call_timeout`"), "{e}");
        assert!(e.contains("line 2"), "{e}");

        std::fs::write(&p, "[roles.dev]\ntools = [\"[\"]\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains("role `dev`: invalid tool pattern `[`"), "{e}");

        std::fs::write(
            &p,
            "[[policy.rules]]\nid = \"no-rm-rf\"\nwhen = 'tool == \"shell\" &&'\ndecision = \"deny\"\n",
        )
        .unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(
            e.contains(
                "invalid configuration: [[policy.rules]] \"no-rm-rf\": line 1, column 19: \
                 Syntax error: mismatched input '<EOF>'"
            ),
            "{e}"
        );

        std::fs::write(&p, "[approvals]\nttl_secs = \"ten\"\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn egress_reaches_the_server_section_and_bad_entries_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.toml");
        std::fs::write(
            &p,
            "[egress]\nallow_hosts = [\"127.0.0.1:9000\"]\nallow_http = [\"127.0.0.1\"]\n\
             [server.webhook]\nurl = \"http://127.0.0.1:9000/hook\"\n",
        )
        .unwrap();
        let cfg = load(&p).unwrap();
        let want = EgressPolicy::default()
            .allow_host("127.0.0.1:9000")
            .unwrap()
            .allow_plain_http("127.0.0.1")
            .unwrap();
        assert_eq!((&cfg.egress, &cfg.server.egress), (&want, &want));

        std::fs::write(&p, "[server.webhook]\nurl = \"https://10.0.0.7/hook\"\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(
            e.contains("refused: 10.0.0.7 is private (RFC 1918); to allow it add \"10.0.0.7\" to [egress] allow_hosts"),
            "{e}"
        );

        std::fs::write(&p, "[egress]\nallow_hosts = [\"10.0.0.0/99\"]\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("[egress] entry `10.0.0.0/99`"), "{e}");
    }

    #[test]
    fn the_browser_table_is_off_by_default_and_shares_the_egress_policy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.toml");
        std::fs::write(&p, "[egress]\nallow_hosts = [\"localhost\"]\n").unwrap();
        let cfg = load(&p).unwrap();
        assert_eq!(
            (cfg.browser.enabled, &cfg.browser.egress),
            (false, &cfg.egress)
        );

        std::fs::write(
            &p,
            "[browser]\nenabled = true\nchromium = \"/nonexistent/chromium\"\n",
        )
        .unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains("apt-get install chromium"), "{e}");

        std::fs::write(&p, "[browser]\nallow_origins = [\"localhost:8080\"]\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(
            e.contains("[browser] allow_origins entry `localhost:8080`"),
            "{e}"
        );
    }

    #[test]
    fn the_web_table_parses_and_bad_settings_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.toml");
        std::fs::write(&p, "[web.url_read]\nenabled = true\nmax_bytes = 1000\n").unwrap();
        let cfg = load(&p).unwrap();
        assert_eq!(
            cfg.web,
            WebConfig {
                url_read: toolgate_web::UrlReadConfig {
                    enabled: true,
                    max_bytes: 1000,
                    ..Default::default()
                },
                search: None,
                papers: None,
            }
        );

        std::fs::write(&p, "[web.search]\nbackend = \"searxng\"\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(
            e.contains("[web.search] backend = \"searxng\" needs base_url"),
            "{e}"
        );

        std::fs::write(
            &p,
            "[web.search]\nbackend = \"searxng\"\nbase_url = \"http://127.0.0.1:8888\"\n",
        )
        .unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(
            e.contains("[web.search] base_url is not reachable under [egress]"),
            "{e}"
        );
    }

    #[test]
    fn mcp_servers_parse_and_bad_entries_name_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.toml");
        std::fs::write(
            &p,
            "[[mcp.servers]]\nname = \"files\"\ncommand = \"node\"\nargs = [\"fs.js\", \"/srv\"]\n\
             [[mcp.servers]]\nname = \"remote\"\nurl = \"https://mcp.example.com/mcp\"\n\
             protocol = \"2025-11-25\"\ntrusted = true\n",
        )
        .unwrap();
        let cfg = load(&p).unwrap();
        assert_eq!(
            cfg.mcp.servers,
            [
                McpServerConfig::stdio("files", "node").with_args(["fs.js", "/srv"]),
                McpServerConfig::http("remote", "https://mcp.example.com/mcp")
                    .with_protocol(toolgate_mcp_client::ProtocolChoice::Initialize)
                    .with_trusted(true),
            ]
        );

        std::fs::write(
            &p,
            "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"https://h/mcp\"\n",
        )
        .unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(
            e.contains("MCP server `a`: `command` and `url` are both set"),
            "{e}"
        );

        std::fs::write(&p, "[[mcp.servers]]\nname = \"a\"\ncomand = \"x\"\n").unwrap();
        let e = format!("{:#}", load(&p).unwrap_err());
        assert!(e.contains("unknown field `comand`"), "{e}");
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn a_full_example_parses() {
        let cfg: FileConfig =
            toml::from_str(include_str!("../../../docs/toolgate.example.toml")).unwrap();
        check(&cfg).unwrap();
        assert!(cfg.roles.contains_key("agent"));
        assert_eq!(cfg.policy.rules[0].id, "no-opaque-shell");
    }

    #[test]
    fn shell_sandbox_keys_parse_and_zero_means_no_limit() {
        let cfg: FileConfig = toml::from_str(
            "[shell]\nsandbox = \"required\"\nallow_network = true\nmemory_mb = 512\n\
             max_processes = 0\ncpu_secs = 30\nmax_file_mb = 0\n",
        )
        .unwrap();
        assert_eq!(cfg.shell.sandbox, SandboxMode::Required);
        assert!(cfg.shell.allow_network);
        assert_eq!(
            cfg.shell.limits(),
            ResourceLimits {
                cpu_secs: Some(30),
                memory_bytes: Some(512 << 20),
                max_processes: None,
                max_file_bytes: None,
            }
        );
        assert_eq!(ShellSettings::default().limits(), ResourceLimits::default());
        let e = toml::from_str::<FileConfig>("[shell]\nsandbox = \"maybe\"\n").unwrap_err();
        assert!(e.to_string().contains("unknown variant `maybe`"), "{e}");
    }
}
