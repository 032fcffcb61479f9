//! `toolgate mcp login NAME` and `toolgate mcp logout NAME`: OAuth 2.1 sign-in for an HTTP
//! MCP server (authorization code + PKCE S256, loopback redirect, every request under
//! `[egress]`), tokens kept in the store — never in toolgate.toml, never printed.

use std::io::Write as _;

use anyhow::{Context, bail};
use toolgate_mcp_client::ServerConfig;
use toolgate_mcp_client::auth::{AuthConfig, AuthContext, LoginOptions};

use toolgate_app::Config;
use toolgate_app::stores::Stores;

fn server<'a>(settings: &'a Config, name: &str) -> anyhow::Result<&'a ServerConfig> {
    settings
        .file
        .mcp
        .servers
        .iter()
        .find(|s| s.name == name)
        .with_context(|| {
            format!("no MCP server `{name}` in the configuration (see `toolgate mcp list`)")
        })
}

pub async fn login(
    settings: &Config,
    name: &str,
    scopes: Vec<String>,
    no_browser: bool,
) -> anyhow::Result<i32> {
    let server = server(settings, name)?;
    let Some(url) = server.url.as_deref() else {
        bail!("`{name}` is a stdio server; only HTTP servers sign in");
    };
    let auth = match &server.auth {
        Some(auth @ AuthConfig::Oauth { .. }) => auth,
        Some(AuthConfig::ClientCredentials { .. }) => bail!(
            "`{name}` uses the client-credentials grant: it gets its tokens by itself, no login needed"
        ),
        None => bail!(
            "`{name}` has no `auth` table; add `auth = {{ type = \"oauth\" }}` to its [[mcp.servers]] entry (see docs/mcp-oauth.md)"
        ),
    };
    let store = Stores::open(settings).await?.credentials()?;
    let ctx = AuthContext::new(settings.file.egress.clone(), store);
    let options = LoginOptions {
        extra_scopes: scopes,
        ..LoginOptions::default()
    };
    let outcome = toolgate_mcp_client::auth::login(name, url, auth, &ctx, options, |auth_url| {
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "Open this URL to sign in to `{name}`:\n\n  {auth_url}\n"
        );
        if !no_browser {
            open_browser(auth_url);
        }
        let _ = writeln!(err, "Waiting for the browser to come back…");
    })
    .await
    .with_context(|| format!("signing in to `{name}`"))?;
    let scopes = if outcome.scopes.is_empty() {
        "(none named)".to_owned()
    } else {
        outcome.scopes.join(" ")
    };
    crate::output::line(&format!(
        "signed in to `{}` (issuer {}, client id {}, scopes {scopes}); tokens stored for {}",
        outcome.server,
        outcome.issuer.as_deref().unwrap_or("unknown"),
        outcome.client_id,
        outcome.resource
    ));
    Ok(0)
}

pub async fn logout(settings: &Config, name: &str) -> anyhow::Result<i32> {
    let store = Stores::open(settings).await?.credentials()?;
    let removed = store
        .delete(name, None)
        .await
        .with_context(|| format!("forgetting the tokens of `{name}`"))?;
    if removed == 0 {
        crate::output::line(&format!("no tokens stored for `{name}`"));
    } else {
        crate::output::line(&format!(
            "forgot the tokens of `{name}` ({removed} stored credential(s))"
        ));
    }
    Ok(0)
}

/// Best effort: `$BROWSER`, else `xdg-open` (Linux) or `open` (macOS); failures are silent
/// because the URL is printed anyway.
fn open_browser(url: &str) {
    let candidates: Vec<String> = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.is_empty())
        .into_iter()
        .chain(["xdg-open".to_owned(), "open".to_owned()])
        .collect();
    for program in candidates {
        let spawned = std::process::Command::new(&program)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if spawned.is_ok() {
            return;
        }
    }
}
