//! The hub's prompts, resources, templates, completion and logging: what every connected
//! server offers besides tools, under the names its clients see ([`Naming`]), and the
//! requests that reach the server behind a name. Policy and audit are the caller's (the MCP
//! endpoint checks the role and writes the audit record before it asks here); this module
//! only resolves names and carries requests.
//!
//! # Resolving a URI
//! 1. `mcp://{server}/{uri}` is `server`'s `uri`, listed or not (servers may serve URIs
//!    they do not list).
//! 2. A raw URI (a `resource_link` passed through unchanged, say) belongs to the one server
//!    that lists it or has a template matching it; the server that keeps its names
//!    (`prefix = "never"`) wins, as its URIs are the ones clients see.
//! 3. Otherwise, the server that keeps its names, if there is one, answers it.
//!
//! Two prefixed servers listing the same raw URI make it ambiguous: it is refused, naming
//! both namespaced forms.

// Logging and resources/subscribe are deprecated by 2026-07-28 but still 2025-11-25.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, JsonObject, LoggingLevel, Prompt, ReadResourceRequestParams,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate,
    SetLevelRequestParams,
};
use rmcp::service::{Peer, RoleClient};

use crate::config::{NamePrefix, Naming};
use crate::connect::error_chain;
use crate::hub::McpHub;
use crate::inbound::MAX_INPUT_ROUNDS;
use crate::offers::{Offers, template_matches};
use crate::subscribe;
use crate::supervisor::McpServer;
use toolgate_core::CallerLink;

/// Which server holds a name, its own name for it, and what a role's globs match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub server: String,
    /// The server's own prompt name or URI.
    pub raw: String,
    /// Matched against a role's globs: the prompt name clients see, or
    /// [`Naming::resource_key`] of a URI.
    pub key: String,
}

/// A prompt as clients see it.
#[derive(Debug, Clone)]
pub struct ListedPrompt {
    pub target: Target,
    pub prompt: Prompt,
}

/// A resource as clients see it.
#[derive(Debug, Clone)]
pub struct ListedResource {
    pub target: Target,
    pub resource: Resource,
}

/// A resource template as clients see it.
#[derive(Debug, Clone)]
pub struct ListedTemplate {
    pub target: Target,
    pub template: ResourceTemplate,
}

/// Why a URI cannot be routed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("no MCP server offers `{0}`")]
    Unknown(String),
    #[error("`{uri}` is offered by several MCP servers; name one: {}", .choices.join(", "))]
    Ambiguous { uri: String, choices: Vec<String> },
}

/// One connected server as the federation sees it.
struct Live<'a> {
    server: &'a McpServer,
    naming: Naming,
    offers: Offers,
}

impl Live<'_> {
    fn target(&self, raw: &str, key: String) -> Target {
        Target {
            server: self.naming.server.clone(),
            raw: raw.to_owned(),
            key,
        }
    }

    fn resource_target(&self, raw: &str) -> Target {
        self.target(raw, self.naming.resource_key(raw))
    }

    /// Whether this server lists `raw` or has a template that matches it.
    fn claims(&self, raw: &str) -> bool {
        self.offers.resources.iter().any(|r| r.uri == raw)
            || self
                .offers
                .templates
                .iter()
                .any(|t| template_matches(&t.uri_template, raw))
    }
}

impl McpHub {
    /// The connected servers with what they offer, in configuration order.
    fn live(&self) -> Vec<Live<'_>> {
        self.servers()
            .iter()
            .filter(|s| s.link().connection().is_ok())
            .map(|s| Live {
                server: s,
                naming: s.naming(),
                offers: s.link().offers(),
            })
            .collect()
    }

    /// Whether any server is configured (the MCP endpoint then offers prompts, resources,
    /// completion and logging).
    pub fn federates(&self) -> bool {
        !self.servers().is_empty()
    }

    /// Every connected server's prompts, under the names clients see.
    pub fn prompts(&self) -> Vec<ListedPrompt> {
        let mut all = Vec::new();
        for live in self.live() {
            for prompt in &live.offers.prompts {
                let name = live.naming.prompt(&prompt.name);
                let mut shown = prompt.clone();
                shown.name.clone_from(&name);
                all.push(ListedPrompt {
                    target: live.target(&prompt.name, name),
                    prompt: shown,
                });
            }
        }
        all
    }

    /// Every connected server's resources, under the URIs clients see.
    pub fn resources(&self) -> Vec<ListedResource> {
        let mut all = Vec::new();
        for live in self.live() {
            for resource in &live.offers.resources {
                let mut shown = resource.clone();
                shown.uri = live.naming.uri(&resource.uri);
                all.push(ListedResource {
                    target: live.resource_target(&resource.uri),
                    resource: shown,
                });
            }
        }
        all
    }

    /// Every connected server's resource templates, under the URIs clients see.
    pub fn resource_templates(&self) -> Vec<ListedTemplate> {
        let mut all = Vec::new();
        for live in self.live() {
            for template in &live.offers.templates {
                let mut shown = template.clone();
                shown.uri_template = live.naming.uri(&template.uri_template);
                all.push(ListedTemplate {
                    target: live.resource_target(&template.uri_template),
                    template: shown,
                });
            }
        }
        all
    }

    /// The server prompt behind `name`, if a connected server lists it.
    pub fn prompt_target(&self, name: &str) -> Option<Target> {
        self.live().into_iter().find_map(|live| {
            let raw = live.naming.raw_prompt(name)?;
            live.offers
                .prompts
                .iter()
                .any(|p| p.name == raw)
                .then(|| live.target(raw, name.to_owned()))
        })
    }

    /// The server resource behind `uri` (see the module doc).
    pub fn resource_target(&self, uri: &str) -> Result<Target, RouteError> {
        let live = self.live();
        let prefixed = live
            .iter()
            .filter(|l| l.naming.prefix == NamePrefix::Server);
        for l in prefixed.clone() {
            if let Some(raw) = l.naming.raw_uri(uri) {
                return Ok(l.resource_target(raw));
            }
        }
        let keeper = live.iter().find(|l| l.naming.prefix == NamePrefix::Never);
        if let Some(keeper) = keeper.filter(|k| k.claims(uri)) {
            return Ok(keeper.resource_target(uri));
        }
        let claimants: Vec<&Live<'_>> = prefixed.filter(|l| l.claims(uri)).collect();
        match (claimants.as_slice(), keeper) {
            ([one], _) => Ok(one.resource_target(uri)),
            ([], Some(keeper)) => Ok(keeper.resource_target(uri)),
            ([], None) => Err(RouteError::Unknown(uri.to_owned())),
            (many, _) => Err(RouteError::Ambiguous {
                uri: uri.to_owned(),
                choices: many.iter().map(|l| l.naming.uri(uri)).collect(),
            }),
        }
    }

    /// The server that completes for `reference`, with the reference in its own names.
    pub fn completion_target(&self, reference: &Reference) -> Option<(Target, Reference)> {
        match reference {
            Reference::Prompt(p) => {
                let target = self.prompt_target(&p.name)?;
                let mut own = p.clone();
                own.name.clone_from(&target.raw);
                Some((target, Reference::Prompt(own)))
            }
            Reference::Resource(r) => {
                let target = self.resource_target(&r.uri).ok()?;
                let mut own = r.clone();
                own.uri.clone_from(&target.raw);
                Some((target, Reference::Resource(own)))
            }
            _ => None,
        }
    }

    /// `prompts/get` on the target's server for the client behind `caller`: a 2026-07-28
    /// server's `input_required` rounds (SEP-2322) are answered for that client as a tool
    /// call's are (`client_requests`), keys and `requestState` carried back unchanged, all
    /// within the server's one call timeout and at most 10 rounds (rmcp's default cap).
    pub async fn get_prompt(
        &self,
        target: &Target,
        arguments: Option<JsonObject>,
        caller: &CallerLink,
    ) -> Result<GetPromptResult, ErrorData> {
        let (server, peer) = self.peer(&target.server)?;
        let mut params = GetPromptRequestParams::new(target.raw.clone());
        params.arguments = arguments;
        let rounds = async {
            for round in 1..=MAX_INPUT_ROUNDS {
                let asked = match peer.get_prompt_once(params.clone()).await? {
                    GetPromptResponse::Complete(result) => return Ok(result),
                    GetPromptResponse::InputRequired(asked) => asked,
                    _ => return Err(rmcp::ServiceError::UnexpectedResponse),
                };
                let retry = server
                    .handler()
                    .next_round(caller, asked, round)
                    .await
                    .map_err(rmcp::ServiceError::McpError)?;
                params.input_responses = retry.input_responses;
                params.request_state = retry.request_state;
            }
            Err(rmcp::ServiceError::InputRequiredRoundsExceeded {
                max_rounds: MAX_INPUT_ROUNDS as usize,
            })
        };
        bounded(server, rounds).await
    }

    /// `resources/read` on the target's server; the contents' URIs are those clients see.
    pub async fn read_resource(&self, target: &Target) -> Result<ReadResourceResult, ErrorData> {
        let (server, peer) = self.peer(&target.server)?;
        let params = ReadResourceRequestParams::new(target.raw.clone());
        let mut result = bounded(server, peer.read_resource(params)).await?;
        let naming = server.naming();
        for contents in &mut result.contents {
            match contents {
                ResourceContents::TextResourceContents { uri, .. }
                | ResourceContents::BlobResourceContents { uri, .. } => *uri = naming.uri(uri),
                _ => {}
            }
        }
        Ok(result)
    }

    /// Holds a subscription to the target for one client; the first holder subscribes on
    /// the server (kept across reconnects until the last holder lets go).
    pub async fn subscribe(&self, target: &Target) -> Result<(), ErrorData> {
        let (server, peer) = self.peer(&target.server)?;
        if !server.link().offers().subscribes() {
            return Err(ErrorData::invalid_request(
                format!(
                    "MCP server `{}` does not offer resource subscriptions",
                    target.server
                ),
                None,
            ));
        }
        if server.link().hold(&target.raw) {
            let subscribed = subscribe::subscribe(server.link(), &peer, &target.raw);
            if let Err(e) = bounded(server, subscribed).await {
                server.link().release(&target.raw);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Lets go of one client's subscription; the last one unsubscribes on the server.
    pub async fn unsubscribe(&self, target: &Target) -> Result<(), ErrorData> {
        let Some(server) = self.server(&target.server) else {
            return Ok(());
        };
        if server.link().release(&target.raw)
            && let Ok(connected) = server.link().connection()
        {
            let unsubscribed = subscribe::unsubscribe(server.link(), &connected.peer, &target.raw);
            bounded(server, unsubscribed).await?;
        }
        Ok(())
    }

    /// `completion/complete` on the server behind `reference` (already in its own names).
    pub async fn complete(
        &self,
        target: &Target,
        mut params: CompleteRequestParams,
        reference: Reference,
    ) -> Result<CompleteResult, ErrorData> {
        let (server, peer) = self.peer(&target.server)?;
        if server.link().offers().capabilities.completions.is_none() {
            // The spec's answer for a server without completions: nothing to suggest.
            return Ok(CompleteResult::default());
        }
        params.r#ref = reference;
        bounded(server, peer.complete(params)).await
    }

    /// `logging/setLevel` on every connected server that offers logging.
    pub async fn set_level(&self, level: LoggingLevel) {
        for live in self.live() {
            if live.offers.capabilities.logging.is_none() {
                continue;
            }
            let Ok(connected) = live.server.link().connection() else {
                continue;
            };
            let params = SetLevelRequestParams::new(level);
            if let Err(e) = bounded(live.server, connected.peer.set_level(params)).await {
                tracing::warn!(server = %live.naming.server, error = %e.message, "could not set the log level");
            }
        }
    }

    fn server(&self, name: &str) -> Option<&McpServer> {
        self.servers()
            .iter()
            .map(Arc::as_ref)
            .find(|s| s.naming().server == name)
    }

    fn peer(&self, name: &str) -> Result<(&McpServer, Peer<RoleClient>), ErrorData> {
        let server = self.server(name).ok_or_else(|| {
            ErrorData::invalid_params(format!("no MCP server `{name}` is configured"), None)
        })?;
        let connected = server
            .link()
            .connection()
            .map_err(|why| ErrorData::internal_error(why, None))?;
        Ok((server, connected.peer))
    }
}

/// Runs one request to `server` within its call timeout; the server's own JSON-RPC error
/// passes through unchanged, anything else says which server failed and how.
async fn bounded<T>(
    server: &McpServer,
    request: impl Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<T, ErrorData> {
    let name = &server.naming().server;
    match tokio::time::timeout(server.link().call_timeout, request).await {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(rmcp::ServiceError::McpError(e))) => Err(e),
        Ok(Err(e)) => Err(ErrorData::internal_error(
            format!("MCP server `{name}` failed: {}", error_chain(&e)),
            None,
        )),
        Err(_) => Err(ErrorData::internal_error(
            format!(
                "MCP server `{name}` did not answer within {}",
                humantime::format_duration(server.link().call_timeout)
            ),
            None,
        )),
    }
}
