//! `toolgate token create`: a new bearer token for `toolgate serve`. The token itself is
//! printed once, alone on stdout (so `TOKEN=$(toolgate token create …)` works); the
//! `[[server.tokens]]` entry to paste into toolgate.toml — which holds only the token's
//! SHA-256, never the token — goes to stderr.

use anyhow::Context;
use toolgate_gateway::policy::Roles;
use toolgate_server::auth::hash_token;

use crate::cli::TokenCommand;
use crate::output;
use toolgate_app::Config;

/// Prefix that makes a toolgate token recognisable (and maskable) in logs.
const PREFIX: &str = "tg_";

/// `tg_` + 64 hex characters: 32 bytes from the operating system's random source.
fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot read the system's random source: {e}"))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{PREFIX}{hex}"))
}

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

pub fn run(settings: &Config, cmd: TokenCommand) -> anyhow::Result<i32> {
    match cmd {
        TokenCommand::Create {
            principal,
            role,
            operator,
        } => {
            anyhow::ensure!(
                !principal.trim().is_empty(),
                "--principal must not be empty"
            );
            let roles = Roles::compile(&settings.file.roles).context("the configured roles")?;
            if roles.get(&role).is_none() {
                let names: Vec<&str> = roles.names().collect();
                eprintln!(
                    "toolgate: warning: role `{role}` is not configured yet (configured roles: {}); `toolgate serve` refuses to start until it is",
                    names.join(", ")
                );
            }
            let token = new_token()?;
            eprintln!(
                "# Add this to toolgate.toml (it holds the token's SHA-256, not the token).\n# The token is printed once, on stdout; send it as `Authorization: Bearer <token>`.\n{}",
                entry(&hash_token(&token), &principal, &role, operator)
            );
            output::line(&token);
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_well_formed() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), PREFIX.len() + 64);
        assert!(a[PREFIX.len()..].bytes().all(|c| c.is_ascii_hexdigit()));
    }

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
