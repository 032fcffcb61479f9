//! `toolgate mcp add | remove | list | status | tools` (`login | logout`: [`super::mcp_login`]): the `[[mcp.servers]]` of
//! toolgate.toml, edited in place (comments and layout kept, the result checked before it
//! replaces the file), and the servers as toolgate sees them when it connects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, value};
use toolgate_mcp_client::connect::check_server_url;
use toolgate_mcp_client::{ProtocolChoice, ServerConfig, ServerState, ServerStatus, TransportKind};
use toolgate_registry::pins::format_time;
use toolgate_registry::{Availability, Entry, description_flags};

use crate::cli::{McpAddArgs, McpCommand};
use crate::output;
use toolgate_app::Config;
use toolgate_app::config::{CONFIG_FILE, load};
use toolgate_app::{McpServers, Runtime, RuntimeOptions};

pub async fn run(settings: &Config, cmd: McpCommand) -> anyhow::Result<i32> {
    match cmd {
        McpCommand::Add(args) => add(settings, args),
        McpCommand::Remove { name } => remove(settings, &name),
        McpCommand::List { json } => list(settings, json),
        McpCommand::Status { json } => status(settings, json).await,
        McpCommand::Tools { name, json } => tools(settings, name.as_deref(), json).await,
        McpCommand::Login {
            name,
            scopes,
            no_browser,
        } => super::mcp_login::login(settings, &name, scopes, no_browser).await,
        McpCommand::Logout { name } => super::mcp_login::logout(settings, &name).await,
    }
}

/// The file `add` and `remove` edit: `--config`, else `<workspace>/toolgate.toml`.
fn config_file(settings: &Config) -> PathBuf {
    settings
        .config_path
        .clone()
        .unwrap_or_else(|| settings.workspace.join(CONFIG_FILE))
}

fn pairs(flag: &str, items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for item in items {
        let Some((k, v)) = item.split_once('=') else {
            bail!("--{flag} `{item}` is not KEY=VALUE");
        };
        if k.is_empty() {
            bail!("--{flag} `{item}` has an empty name");
        }
        map.insert(k.to_owned(), v.to_owned());
    }
    Ok(map)
}

fn server_from(args: &McpAddArgs) -> anyhow::Result<ServerConfig> {
    let mut config = match (&args.url, args.command.split_first()) {
        (Some(url), None) => ServerConfig::http(&args.name, url),
        (None, Some((program, rest))) => {
            ServerConfig::stdio(&args.name, program).with_args(rest.iter().cloned())
        }
        (None, None) => bail!(
            "say how to reach `{}`: `toolgate mcp add {0} -- COMMAND ARGS…` (stdio) or \
             `toolgate mcp add {0} --url URL` (Streamable HTTP)",
            args.name
        ),
        (Some(_), Some(_)) => bail!("give either --url or a command after `--`, not both"),
    };
    config.env = pairs("env", &args.env)?;
    config.headers = pairs("header", &args.headers)?;
    config.cwd.clone_from(&args.cwd);
    config.trusted = args.trusted;
    if let Some(p) = &args.protocol {
        config.protocol = serde_json::from_value(json!(p)).map_err(|_| {
            anyhow::anyhow!("--protocol `{p}`: expected auto, 2026-07-28 or 2025-11-25")
        })?;
    }
    Ok(config)
}

/// The table written for `config`: only what was given, defaults left out.
fn server_table(config: &ServerConfig) -> Table {
    let mut t = Table::new();
    t.insert("name", value(config.name.as_str()));
    if let Some(command) = &config.command {
        t.insert("command", value(command.as_str()));
    }
    if !config.args.is_empty() {
        t.insert("args", value(config.args.iter().collect::<Array>()));
    }
    if let Some(url) = &config.url {
        t.insert("url", value(url.as_str()));
    }
    for (key, map) in [("env", &config.env), ("headers", &config.headers)] {
        if !map.is_empty() {
            let mut inline = toml_edit::InlineTable::new();
            for (k, v) in map {
                inline.insert(k, v.as_str().into());
            }
            t.insert(key, value(inline));
        }
    }
    if let Some(cwd) = &config.cwd {
        t.insert("cwd", value(cwd.to_string_lossy().as_ref()));
    }
    if config.protocol != ProtocolChoice::Auto {
        let spelled = serde_json::to_value(config.protocol).unwrap_or_default();
        t.insert("protocol", value(spelled.as_str().unwrap_or("auto")));
    }
    if config.trusted {
        t.insert("trusted", value(true));
    }
    t
}

fn read_document(path: &Path) -> anyhow::Result<DocumentMut> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    text.parse::<DocumentMut>()
        .with_context(|| format!("{}: not valid TOML", path.display()))
}

/// The `[[mcp.servers]]` array of `doc`, created when `create`.
fn servers_of<'d>(
    doc: &'d mut DocumentMut,
    path: &Path,
    create: bool,
) -> anyhow::Result<Option<&'d mut ArrayOfTables>> {
    if !create && !doc.contains_key("mcp") {
        return Ok(None);
    }
    let mcp = doc.entry("mcp").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(mcp) = mcp.as_table_like_mut() else {
        bail!("{}: `mcp` is not a table; edit it by hand", path.display());
    };
    if !create && !mcp.contains_key("servers") {
        return Ok(None);
    }
    let servers = mcp
        .entry("servers")
        .or_insert(Item::ArrayOfTables(ArrayOfTables::new()));
    match servers.as_array_of_tables_mut() {
        Some(aot) => Ok(Some(aot)),
        None => bail!(
            "{}: `mcp.servers` is not written as [[mcp.servers]] tables; edit it by hand",
            path.display()
        ),
    }
}

/// Writes `doc` next to `path`, loads it as toolgate would (every check), then replaces
/// `path`: a change that would make the configuration unusable never lands.
fn write_checked(path: &Path, doc: &DocumentMut) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let staged = dir.join(format!(".{CONFIG_FILE}.mcp-edit"));
    std::fs::write(&staged, doc.to_string())
        .with_context(|| format!("cannot write {}", staged.display()))?;
    if let Err(e) = load(&staged) {
        let _ = std::fs::remove_file(&staged);
        return Err(e.context(format!("{} was left unchanged", path.display())));
    }
    std::fs::rename(&staged, path).with_context(|| format!("cannot replace {}", path.display()))
}

fn add(settings: &Config, args: McpAddArgs) -> anyhow::Result<i32> {
    let config = server_from(&args)?;
    config.validate()?;
    if settings
        .file
        .mcp
        .servers
        .iter()
        .any(|s| s.name == config.name)
    {
        bail!(
            "an MCP server named `{}` is already configured (remove it first with `toolgate mcp \
             remove {0}`)",
            config.name
        );
    }
    let path = config_file(settings);
    let mut doc = read_document(&path)?;
    if let Some(servers) = servers_of(&mut doc, &path, true)? {
        servers.push(server_table(&config));
    }
    write_checked(&path, &doc)?;
    let how = match (&config.command, &config.url) {
        (Some(c), _) => format!("stdio: {}", shell_words(c, &config.args)),
        (None, Some(u)) => format!("Streamable HTTP: {u}"),
        (None, None) => String::new(),
    };
    output::line(&format!(
        "added MCP server `{}` ({how}) to {}",
        config.name,
        path.display()
    ));
    output::line(&format!(
        "its tools will be named mcp__{}__<tool>; check it with `toolgate mcp status`",
        config.name
    ));
    if let Some(url) = &config.url
        && let Err(refusal) = check_server_url(&settings.file.egress, url)
    {
        output::line(&format!(
            "note: the current [egress] settings refuse this server: {refusal}"
        ));
    }
    Ok(0)
}

fn remove(settings: &Config, name: &str) -> anyhow::Result<i32> {
    let path = config_file(settings);
    let mut doc = read_document(&path)?;
    let removed = match servers_of(&mut doc, &path, false)? {
        Some(servers) => {
            let before = servers.len();
            servers.retain(|t| t.get("name").and_then(Item::as_str) != Some(name));
            before != servers.len()
        }
        None => false,
    };
    if !removed {
        let names: Vec<&str> = settings
            .file
            .mcp
            .servers
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        bail!(
            "no MCP server named `{name}` in {} (configured: {})",
            path.display(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        );
    }
    let now_empty = doc
        .get("mcp")
        .and_then(|m| m.get("servers"))
        .and_then(Item::as_array_of_tables)
        .is_some_and(ArrayOfTables::is_empty);
    if now_empty && let Some(mcp) = doc.get_mut("mcp").and_then(Item::as_table_like_mut) {
        mcp.remove("servers");
        if mcp.is_empty() {
            doc.remove("mcp");
        }
    }
    write_checked(&path, &doc)?;
    output::line(&format!(
        "removed MCP server `{name}` from {}; its pinned tool definitions stay in the data dir",
        path.display()
    ));
    Ok(0)
}

fn shell_words(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(|w| {
            if w.is_empty() || w.contains(char::is_whitespace) {
                format!("'{w}'")
            } else {
                w.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn transport_name(kind: TransportKind) -> &'static str {
    match kind {
        TransportKind::Stdio => "stdio",
        TransportKind::StreamableHttp => "http",
    }
}

fn list(settings: &Config, json: bool) -> anyhow::Result<i32> {
    let servers = &settings.file.mcp.servers;
    if json {
        // Values of env and headers often carry secrets: only their names are shown.
        let doc: Vec<Value> = servers
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "transport": if s.url.is_some() { "http" } else { "stdio" },
                    "command": s.command, "args": s.args, "cwd": s.cwd, "url": s.url,
                    "env": s.env.keys().collect::<Vec<_>>(),
                    "headers": s.headers.keys().collect::<Vec<_>>(),
                    "enabled": s.enabled, "trusted": s.trusted, "protocol": s.protocol,
                    "sandbox": sandbox_label(settings, &s.name),
                    "startup_timeout": humantime::format_duration(s.startup_timeout).to_string(),
                    "call_timeout": humantime::format_duration(s.call_timeout).to_string(),
                })
            })
            .collect();
        output::json(&doc)?;
        return Ok(0);
    }
    if servers.is_empty() {
        output::line("no MCP servers configured (add one with `toolgate mcp add`)");
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = servers
        .iter()
        .map(|s| {
            let target = match (&s.command, &s.url) {
                (Some(c), _) => shell_words(c, &s.args),
                (None, Some(u)) => u.clone(),
                (None, None) => String::new(),
            };
            vec![
                s.name.clone(),
                (if s.url.is_some() { "http" } else { "stdio" }).to_owned(),
                (if s.enabled { "yes" } else { "no" }).to_owned(),
                (if s.trusted { "yes" } else { "no" }).to_owned(),
                target,
            ]
        })
        .collect();
    output::table(
        &["NAME", "TRANSPORT", "ENABLED", "TRUSTED", "TARGET"],
        &rows,
    );
    Ok(0)
}

/// Connects to every configured server on a scratch catalog (nothing is pinned) and
/// returns their statuses after the first attempt ([`Runtime::probe_mcp`]).
pub async fn probe(settings: &Config) -> anyhow::Result<Vec<ServerStatus>> {
    if settings.file.mcp.servers.is_empty() {
        return Ok(Vec::new());
    }
    let options = RuntimeOptions::command().with_servers(McpServers::None);
    let runtime = Runtime::open(settings, options).await?;
    let status = runtime.probe_mcp().await;
    runtime.shutdown().await?;
    status
}

/// How a server is confined, for `mcp status` and `doctor` (issue 12: an unsandboxed
/// stdio server must be visible): `namespaces+landlock+seccomp` (by default or as
/// configured), `OFF (sandbox = "off")`, `REFUSED: <why>` (the sandbox is incomplete here:
/// the server is not started), or `-` for an HTTP server.
pub fn sandbox_label(settings: &Config, server: &str) -> String {
    use toolgate_mcp_client::SandboxChoice;
    let Some(config) = settings.file.mcp.servers.iter().find(|s| s.name == server) else {
        return "-".to_owned();
    };
    if config.command.is_none() {
        return "-".to_owned();
    }
    let support = toolgate_tools::Sandbox::probe();
    match (&config.sandbox, support.is_complete()) {
        (SandboxChoice::Off, _) => "OFF (sandbox = \"off\")".to_owned(),
        (_, true) => format!("namespaces+landlock+seccomp ({})", config.sandbox.label()),
        (_, false) => format!(
            "REFUSED: the sandbox is unavailable ({})",
            support.reason.unwrap_or_default()
        ),
    }
}

fn state_name(state: &ServerState) -> &'static str {
    match state {
        ServerState::Disabled => "disabled",
        ServerState::Connecting => "connecting",
        ServerState::Ready => "ready",
        ServerState::Failed { .. } => "failed",
        ServerState::Stopped => "stopped",
    }
}

async fn status(settings: &Config, json: bool) -> anyhow::Result<i32> {
    let statuses = probe(settings).await?;
    let all_ready = statuses
        .iter()
        .all(|s| matches!(s.state, ServerState::Ready | ServerState::Disabled));
    if json {
        output::json(&statuses)?;
    } else if statuses.is_empty() {
        output::line("no MCP servers configured (add one with `toolgate mcp add`)");
    } else {
        let rows: Vec<Vec<String>> = statuses
            .iter()
            .map(|s| {
                let error = match (&s.state, &s.polling) {
                    (ServerState::Failed { error, .. }, _) => error.clone(),
                    (_, Some(why)) => format!("list changes polled every 60 s: {why}"),
                    _ => String::new(),
                };
                vec![
                    s.name.clone(),
                    transport_name(s.transport).to_owned(),
                    state_name(&s.state).to_owned(),
                    s.protocol_version.clone().unwrap_or_else(|| "-".to_owned()),
                    s.tools.to_string(),
                    sandbox_label(settings, &s.name),
                    error,
                ]
            })
            .collect();
        output::table(
            &[
                "NAME",
                "TRANSPORT",
                "STATE",
                "PROTOCOL",
                "TOOLS",
                "SANDBOX",
                "ERROR",
            ],
            &rows,
        );
    }
    Ok(if all_ready { 0 } else { 2 })
}

fn availability(e: &Entry) -> String {
    match &e.availability {
        Availability::Available => "available".to_owned(),
        Availability::Unavailable(r) => format!("unavailable: {r}"),
        Availability::Quarantined(r) => format!("quarantined: {r}"),
    }
}

async fn tools(settings: &Config, name: Option<&str>, json: bool) -> anyhow::Result<i32> {
    if let Some(n) = name
        && !settings.file.mcp.servers.iter().any(|s| s.name == n)
    {
        bail!("no MCP server named `{n}` is configured (see `toolgate mcp list`)");
    }
    // The gateway's own catalog: built-in tools (for the cross-reference check) and the pin
    // book, so the pin state shown is the one `serve` and `call` act on.
    let which = name.map_or(McpServers::All, McpServers::Named);
    let runtime = Runtime::open(settings, RuntimeOptions::command().with_servers(which)).await?;
    let statuses = runtime.hub().map(|h| h.status()).unwrap_or_default();
    // Read before shutting down, which marks every tool unavailable.
    let all = runtime.gateway().catalog().all();
    let pins = runtime.stores().pins();
    runtime.shutdown().await?;
    // Tools of servers not started now are known by their pins.
    let mut known: Vec<String> = pins.list().await?.into_iter().map(|r| r.name).collect();
    known.extend(all.iter().map(|e| e.spec().name.clone()));
    known.sort();
    known.dedup();
    let wanted = |e: &Entry| match name {
        Some(n) => e.spec().source == format!("mcp:{n}"),
        None => e.spec().source.starts_with("mcp:"),
    };
    let mut rows = Vec::new();
    let mut docs = Vec::new();
    let mut warnings = Vec::new();
    for e in all.iter().filter(|e| wanted(e)) {
        let spec = e.spec();
        let others: Vec<&str> = known
            .iter()
            .map(String::as_str)
            .filter(|n| *n != spec.name)
            .collect();
        let flags = description_flags(spec, &others);
        let record = pins.get(&spec.name).await?;
        let pin = match &record {
            Some(r) if r.seen.is_some() => {
                let parts: Vec<String> =
                    r.changed_parts().iter().map(ToString::to_string).collect();
                format!("changed ({})", parts.join(", "))
            }
            Some(r) => format!("pinned {}", format_time(r.pinned_at_ms)),
            None => "not pinned".to_owned(),
        };
        let state = availability(e);
        rows.push(vec![
            spec.name.clone(),
            spec.risk.to_string(),
            output::short(&state, 40),
            pin.clone(),
            flags.len().to_string(),
        ]);
        for f in &flags {
            warnings.push(format!("{}: {f}", spec.name));
        }
        docs.push(json!({
            "name": spec.name, "source": spec.source, "risk": spec.risk,
            "availability": e.availability, "pin": pin,
            "pinned_hash": record.as_ref().map(|r| &r.pinned_hash),
            "description": spec.description, "description_flags": flags,
        }));
    }
    if json {
        output::json(&docs)?;
        return Ok(0);
    }
    for s in statuses.iter().filter(|s| name.is_none_or(|n| n == s.name)) {
        if let ServerState::Failed { error, .. } = &s.state {
            output::line(&format!("server `{}` is unavailable: {error}", s.name));
        }
    }
    if rows.is_empty() {
        output::line("no MCP tools");
        return Ok(0);
    }
    output::table(&["NAME", "RISK", "STATE", "PIN", "FLAGS"], &rows);
    if !warnings.is_empty() {
        output::line("");
        output::line(
            "suspicious text in tool definitions (possible tool poisoning; review before use):",
        );
        for w in &warnings {
            output::line(&format!("  - {w}"));
        }
    }
    Ok(0)
}
