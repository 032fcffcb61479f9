//! `toolgate token create|list|revoke|rotate`: the bearer tokens of `toolgate serve`, kept in
//! the store (their SHA-256 only) so that running servers — every replica of a cluster —
//! admit a new token and refuse a revoked one within a second, without a restart.
//!
//! A token is printed once, alone on stdout (so `TOKEN=$(toolgate token create …)` works);
//! what was stored goes to stderr. `create --config-entry` stores nothing and prints the
//! `[[server.tokens]]` entry for toolgate.toml instead (a token only a restart can revoke).

use std::time::Duration;

use anyhow::{Context, bail};
use toolgate_app::Config;
use toolgate_gateway::policy::Roles;
use toolgate_server::api::approvals::time;
use toolgate_server::api::tokens::{state_name, token_json};
use toolgate_store::tokens::{NewToken, TokenRecord, TokenSecret};

use crate::cli::TokenCommand;
use crate::output;

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// The `[[server.tokens]]` entry for a token with hash `sha256`.
pub fn entry(sha256: &str, principal: &str, role: &str, operator: bool) -> String {
    format!(
        "[[server.tokens]]\nsha256 = {}\nprincipal = {}\nrole = {}\noperator = {operator}\n",
        toml_string(sha256),
        toml_string(principal),
        toml_string(role)
    )
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Warns when `role` is not configured (a server refuses the token's calls until it is).
fn check_role(settings: &Config, role: &str) -> anyhow::Result<()> {
    let roles = Roles::compile(&settings.file.roles).context("the configured roles")?;
    if roles.get(role).is_none() {
        let names: Vec<&str> = roles.names().collect();
        eprintln!(
            "toolgate: warning: role `{role}` is not configured (configured roles: {}); calls with this token are refused until it is",
            names.join(", ")
        );
    }
    Ok(())
}

/// What the first token changes for callers without one (docs/server.md, "Who may call").
const LOOPBACK_ENDS: &str = "toolgate: warning: this is the first token: `toolgate serve` on loopback no longer lets callers without a token act as operators (role readonly) — the console and local MCP hosts must now send a token (the console asks for one), or configure [server.anonymous] for tokenless local callers";

/// Whether callers without a token are operators on loopback only because no token exists:
/// no `[[server.tokens]]`, no `[server.anonymous]`, no `[server.oauth]` authorization server
/// (issued tokens are counted by the caller).
fn ends_loopback_access(settings: &Config) -> bool {
    let server = &settings.file.server;
    server.tokens.is_empty()
        && server.anonymous.is_none()
        && server.oauth.authorization_servers.is_empty()
}

fn announce(verb: &str, t: &TokenRecord, secret: &TokenSecret) {
    eprintln!(
        "# {verb} {} for `{}` (role `{}`{}{}); running servers admit it within a second.\n# The token is printed once, on stdout; send it as `Authorization: Bearer <token>`.",
        t.id,
        t.principal,
        t.role,
        if t.operator { ", operator" } else { "" },
        t.expires_at_ms
            .map(|at| format!(", expires {}", time(at)))
            .unwrap_or_default(),
    );
    output::line(secret.expose());
}

pub async fn run(settings: &Config, cmd: TokenCommand) -> anyhow::Result<i32> {
    let me = crate::user::local_user();
    match cmd {
        TokenCommand::Create {
            principal,
            role,
            operator,
            expires,
            note,
            config_entry,
        } => {
            if principal.trim().is_empty() || role.trim().is_empty() {
                bail!("--principal and --role must not be empty");
            }
            check_role(settings, &role)?;
            if config_entry {
                if expires.is_some() {
                    bail!(
                        "--expires needs a stored token: a [[server.tokens]] entry never expires"
                    );
                }
                let secret = TokenSecret::mint()?;
                eprintln!(
                    "# Add this to toolgate.toml (it holds the token's SHA-256, not the token) and restart the server.\n# The token is printed once, on stdout; send it as `Authorization: Bearer <token>`.\n{}",
                    entry(&secret.sha256(), &principal, &role, operator)
                );
                output::line(secret.expose());
                return Ok(0);
            }
            let store = toolgate_app::stores::Stores::open(settings).await?.tokens();
            let first = ends_loopback_access(settings) && store.list().await?.is_empty();
            let (record, secret) = store
                .create(NewToken {
                    principal: principal.into(),
                    role: role.into(),
                    operator,
                    note,
                    expires_in_ms: expires.map(|d| millis(d.into())),
                    created_by: format!("cli:{me}"),
                })
                .await
                .context("storing the token")?;
            announce("issued", &record, &secret);
            if first {
                eprintln!("{LOOPBACK_ENDS}");
            }
            Ok(0)
        }
        TokenCommand::List { json } => {
            let store = toolgate_app::stores::Stores::open(settings).await?.tokens();
            let now = store.now_ms();
            let tokens = store.list().await?;
            if json {
                let rows: Vec<_> = tokens.iter().map(|t| token_json(t, now)).collect();
                output::json(&rows)?;
            } else if tokens.is_empty() {
                output::line("no tokens issued (toolgate token create --principal P --role R)");
            } else {
                let rows: Vec<Vec<String>> = tokens
                    .iter()
                    .map(|t| {
                        vec![
                            t.id.clone(),
                            t.principal.to_string(),
                            t.role.to_string(),
                            if t.operator { "yes" } else { "" }.to_owned(),
                            state_name(t.state(now)).to_owned(),
                            t.expires_at_ms.map(time).unwrap_or_else(|| "never".into()),
                            t.last_used_at_ms
                                .map(time)
                                .unwrap_or_else(|| "never".into()),
                            t.note.clone().unwrap_or_default(),
                        ]
                    })
                    .collect();
                output::table(
                    &[
                        "ID",
                        "PRINCIPAL",
                        "ROLE",
                        "OPERATOR",
                        "STATE",
                        "EXPIRES",
                        "LAST USED",
                        "NOTE",
                    ],
                    &rows,
                );
            }
            Ok(0)
        }
        TokenCommand::Revoke { id } => {
            let store = toolgate_app::stores::Stores::open(settings).await?.tokens();
            if store.revoke(&id).await? {
                output::line(&format!(
                    "revoked {id}; running servers refuse it within a second"
                ));
                return Ok(0);
            }
            match store.get(&id).await? {
                Some(_) => bail!("{id} is already revoked"),
                None => bail!("no token {id} (toolgate token list shows them)"),
            }
        }
        TokenCommand::Rotate { id, grace } => {
            let store = toolgate_app::stores::Stores::open(settings).await?.tokens();
            let Some((record, secret)) = store
                .rotate(&id, millis(grace.into()), &format!("cli:{me}"))
                .await?
            else {
                match store.get(&id).await? {
                    Some(_) => {
                        bail!("{id} is revoked; issue a new token with `toolgate token create`")
                    }
                    None => bail!("no token {id} (toolgate token list shows them)"),
                }
            };
            announce(&format!("replaced {id} with"), &record, &secret);
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_parses_as_server_config() {
        let text = entry(&"ab".repeat(32), "ci \"bot\"", "default", true);
        #[derive(serde::Deserialize)]
        struct File {
            server: toolgate_server::ServerConfig,
        }
        let file: File = toml::from_str(&text).unwrap();
        assert_eq!(
            file.server.tokens,
            vec![toolgate_server::config::TokenConfig {
                sha256: "ab".repeat(32),
                principal: "ci \"bot\"".into(),
                role: "default".into(),
                operator: true,
            }]
        );
        assert_eq!(file.server.check(), Ok(()));
    }
}
