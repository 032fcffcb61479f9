//! [`AuthConfig`]: the `auth` key of a Streamable HTTP `[[mcp.servers]]` entry.
//!
//! ```toml
//! # Interactive OAuth 2.1 (authorization code + PKCE S256); `toolgate mcp login docs` once.
//! [[mcp.servers]]
//! name = "docs"
//! url = "https://mcp.example.com/mcp"
//! auth = { type = "oauth", scopes = ["docs:read"] }
//!
//! # Machine to machine: the client-credentials grant; the secret comes from the environment.
//! [[mcp.servers]]
//! name = "billing"
//! url = "https://billing.example.com/mcp"
//! auth = { type = "client_credentials", client_id = "toolgate", client_secret_env = "BILLING_SECRET" }
//! ```
//!
//! A secret never appears in the file: only the name of the environment variable that
//! holds it.

use serde::{Deserialize, Serialize};

use super::AuthError;

/// How toolgate authenticates to one HTTP MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AuthConfig {
    /// Authorization code + PKCE S256 with a loopback redirect; tokens are obtained by
    /// `toolgate mcp login NAME`, stored, and refreshed.
    Oauth {
        /// A client id registered out of band. Without it (and without a usable
        /// `client_metadata_url`), the client registers itself (RFC 7591).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_id: Option<String>,
        /// Environment variable holding the secret of a confidential pre-registered client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_secret_env: Option<String>,
        /// HTTPS URL of this client's metadata document (used as the client id when the
        /// authorization server supports client ID metadata documents).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_metadata_url: Option<String>,
        /// Scopes to ask for; empty: what the server's challenge or metadata names.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        scopes: Vec<String>,
        /// Fixed loopback port for the redirect (for clients registered with an exact
        /// redirect URI); 0 or absent: any free port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redirect_port: Option<u16>,
    },
    /// The client-credentials grant (no user): `client_id` and the secret from the
    /// environment variable `client_secret_env`.
    ClientCredentials {
        client_id: String,
        client_secret_env: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        scopes: Vec<String>,
    },
}

impl AuthConfig {
    /// Interactive OAuth with dynamic registration and the discovered scopes.
    pub fn oauth() -> Self {
        AuthConfig::Oauth {
            client_id: None,
            client_secret_env: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            redirect_port: None,
        }
    }

    /// Checks what can be checked without the network: names, URL shape.
    pub fn validate(&self) -> Result<(), AuthError> {
        match self {
            AuthConfig::Oauth {
                client_id,
                client_secret_env,
                client_metadata_url,
                ..
            } => {
                if client_secret_env.is_some() && client_id.is_none() {
                    return Err(AuthError::Config(
                        "`client_secret_env` needs `client_id` (a secret belongs to a pre-registered client)".into(),
                    ));
                }
                if let Some(url) = client_metadata_url {
                    let ok = url::Url::parse(url)
                        .is_ok_and(|u| u.scheme() == "https" && u.path() != "/");
                    if !ok {
                        return Err(AuthError::Config(format!(
                            "`client_metadata_url` `{url}` must be an https URL with a path"
                        )));
                    }
                }
                if let Some(var) = client_secret_env {
                    check_env_name(var)?;
                }
                Ok(())
            }
            AuthConfig::ClientCredentials {
                client_id,
                client_secret_env,
                ..
            } => {
                if client_id.trim().is_empty() {
                    return Err(AuthError::Config("`client_id` is empty".into()));
                }
                check_env_name(client_secret_env)
            }
        }
    }

    /// The secret named by `client_secret_env`, read now through `env`.
    pub(crate) fn client_secret(
        &self,
        env: &super::EnvLookup,
    ) -> Result<Option<String>, AuthError> {
        let var = match self {
            AuthConfig::Oauth {
                client_secret_env, ..
            } => client_secret_env.as_deref(),
            AuthConfig::ClientCredentials {
                client_secret_env, ..
            } => Some(client_secret_env.as_str()),
        };
        match var {
            None => Ok(None),
            Some(v) => env(v).map(Some).ok_or_else(|| {
                AuthError::Config(format!(
                    "environment variable `{v}` (client_secret_env) is not set"
                ))
            }),
        }
    }
}

fn check_env_name(var: &str) -> Result<(), AuthError> {
    let ok = !var.is_empty()
        && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !var.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(AuthError::Config(
            "`client_secret_env` must name an environment variable (like `MY_SECRET`), not hold the secret; the value given is not a variable name".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerConfig;

    fn server(toml_text: &str) -> Result<ServerConfig, String> {
        toml::from_str::<ServerConfig>(toml_text).map_err(|e| e.to_string())
    }

    #[test]
    fn both_kinds_parse_from_toml() {
        let s = server(
            "name = \"docs\"\nurl = \"https://mcp.example.com/mcp\"\n\
             auth = { type = \"oauth\", scopes = [\"docs:read\"], redirect_port = 8765 }\n",
        )
        .unwrap();
        assert_eq!(
            s.auth,
            Some(AuthConfig::Oauth {
                client_id: None,
                client_secret_env: None,
                client_metadata_url: None,
                scopes: vec!["docs:read".into()],
                redirect_port: Some(8765),
            })
        );
        assert_eq!(s.validate(), Ok(()));
        let s = server(
            "name = \"billing\"\nurl = \"https://b.example.com/mcp\"\n\
             auth = { type = \"client_credentials\", client_id = \"tg\", client_secret_env = \"BILLING_SECRET\" }\n",
        )
        .unwrap();
        assert_eq!(
            s.auth,
            Some(AuthConfig::ClientCredentials {
                client_id: "tg".into(),
                client_secret_env: "BILLING_SECRET".into(),
                scopes: Vec::new(),
            })
        );
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn mistakes_are_named() {
        let err = server(
            "name = \"x\"\nurl = \"https://x.example/mcp\"\nauth = { type = \"oauth\", client_secret = \"s3cr3t\" }\n",
        )
        .unwrap_err();
        assert!(err.contains("unknown field `client_secret`"), "{err}");
        let err =
            server("name = \"x\"\nurl = \"https://x.example/mcp\"\nauth = { type = \"basic\" }\n")
                .unwrap_err();
        assert!(err.contains("unknown variant `basic`"), "{err}");

        let pasted = server(
            "name = \"x\"\nurl = \"https://x.example/mcp\"\n\
             auth = { type = \"client_credentials\", client_id = \"tg\", client_secret_env = \"hunter2-secret!\" }\n",
        )
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string();
        assert!(
            pasted.contains("must name an environment variable"),
            "{pasted}"
        );
        assert!(
            !pasted.contains("hunter2"),
            "the value is not echoed: {pasted}"
        );

        let stdio = ServerConfig::stdio("s", "node").with_auth(AuthConfig::oauth());
        assert_eq!(
            stdio.validate().unwrap_err().to_string(),
            "MCP server `s`: `auth` only applies to Streamable HTTP (`url`) servers; remove it"
        );
        let orphan =
            ServerConfig::http("h", "https://h.example/mcp").with_auth(AuthConfig::Oauth {
                client_id: None,
                client_secret_env: Some("H_SECRET".into()),
                client_metadata_url: Some("http://h.example/client.json".into()),
                scopes: Vec::new(),
                redirect_port: None,
            });
        assert_eq!(
            orphan.validate().unwrap_err().to_string(),
            "MCP server `h`: `auth` is invalid: auth configuration: `client_secret_env` needs `client_id` (a secret belongs to a pre-registered client)"
        );
    }
}
