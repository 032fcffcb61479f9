//! `toolgate config check | show`.

use crate::cli::ConfigCommand;
use crate::output;
use toolgate_app::Config;

pub fn run(settings: &Config, cmd: ConfigCommand) -> anyhow::Result<i32> {
    match cmd {
        ConfigCommand::Check => {
            // Config::resolve already parsed and checked the file; report what is in effect.
            let file = settings.config_path.as_ref().map_or_else(
                || "none (embedded defaults)".to_owned(),
                |p| p.display().to_string(),
            );
            let roles = toolgate_gateway::policy::Roles::compile(&settings.file.roles)?;
            let names: Vec<&str> = roles.names().collect();
            if roles.get(&settings.role).is_none() {
                anyhow::bail!(
                    "unknown role `{}` (configured roles: {})",
                    settings.role,
                    names.join(", ")
                );
            }
            output::line(&format!("config:    {file}"));
            output::line(&format!("workspace: {}", settings.workspace.display()));
            output::line(&format!("data dir:  {}", settings.data_dir.display()));
            output::line(&format!(
                "audit:     {} ({:?})",
                settings.audit_path().display(),
                settings.file.audit.durability
            ));
            output::line(&format!(
                "roles:     {} (acting as `{}`)",
                names.join(", "),
                settings.role
            ));
            let servers = &settings.file.mcp.servers;
            if !servers.is_empty() {
                let listed: Vec<String> = servers
                    .iter()
                    .map(|s| {
                        let kind = if s.url.is_some() { "http" } else { "stdio" };
                        let off = if s.enabled { "" } else { ", disabled" };
                        format!("{} ({kind}{off})", s.name)
                    })
                    .collect();
                output::line(&format!("mcp:       {}", listed.join(", ")));
            }
            output::line("ok");
        }
        ConfigCommand::Show => {
            output::line(&toml::to_string_pretty(&settings.file)?);
        }
    }
    Ok(0)
}
