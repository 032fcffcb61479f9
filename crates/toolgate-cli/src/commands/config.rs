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
            unset_secrets(settings)?;
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

/// As `toolgate serve` would: every secret a bot or an approval channel reads must be set
/// in the environment (the other commands never read them, so only `check` asks).
fn unset_secrets(settings: &Config) -> anyhow::Result<()> {
    let env = |name: &str| std::env::var(name).ok();
    let mut missing = Vec::new();
    for bot in &settings.file.bots {
        for (key, var) in bot.unset_secrets(&env) {
            missing.push(format!("[[bots]] `{}` {key}: {var}", bot.name));
        }
    }
    for channel in &settings.file.approvals.channels {
        for (key, var) in [
            ("token_env", Some(&channel.token_env)),
            ("signing_secret_env", channel.signing_secret_env.as_ref()),
            ("webhook_secret_env", channel.webhook_secret_env.as_ref()),
        ] {
            if let Some(var) = var
                && env(var).is_none_or(|v| v.trim().is_empty())
            {
                missing.push(format!(
                    "[[approvals.channels]] `{}` {key}: {var}",
                    channel.name
                ));
            }
        }
    }
    if !missing.is_empty() {
        anyhow::bail!(
            "these secrets are not set in the environment (`toolgate serve` would refuse to \
             start): {}",
            missing.join("; ")
        );
    }
    Ok(())
}
