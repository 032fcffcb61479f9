//! The federated servers' prompts, resources, completion and logging on toolgate's own MCP
//! endpoint ([`FederatedExtras`]), under the caller's role and the audit like tools:
//! - a role sees a prompt when its `tools` globs match the prompt's name
//!   (`mcp__{server}__{prompt}`, or the server's own name with `prefix = "never"`), and a
//!   resource when they match its key `mcp__{server}__{uri}` (the raw URI with
//!   `prefix = "never"`) — so `mcp__github__*` grants all of `github`, `read_*` none of
//!   any server; a per-name `deny` rule hides it too;
//! - `prompts/get`, `resources/read` and `resources/subscribe` are governed acts: each runs
//!   through the gateway's pipeline like a tool call (module `read_tool`: telemetry, audit,
//!   role allowlist, `[[quotas]]`, the arguments' schema, `[[policy.rules]]` with `target`
//!   = `prompt` | `resource`, approval, the concurrency limit and timeout). The audit
//!   records who, which name, the outcome and sizes — never the content. A read cannot be
//!   held open for a human: a decision of `ask` answers `approval_required` (the id in the
//!   error's data) and the client asks again once it is approved;
//! - prompts are pinned like tools (module `pins`): a prompt whose definition changed is hidden
//!   and quarantined (refused by the pipeline's lookup) until an operator approves the change.
//!
//! What is hidden from a role is answered exactly as what does not exist.

// Logging and resources/subscribe are deprecated by 2026-07-28 but still 2025-11-25.
#![allow(deprecated)]

mod access;
mod listen;
mod pins;
mod read_tool;
mod subscriptions;

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    LoggingLevel, ReadResourceRequestParams, ReadResourceResult, ResultType, ServerCapabilities,
};
use rmcp::service::SubscriptionSink;
use tokio_util::sync::CancellationToken;
use toolgate_gateway::Gateway;
use toolgate_mcp_client::McpHub;
use toolgate_server::mcp::{McpExtras, Requester};

use access::Access;
use subscriptions::Subscribers;

/// [`McpExtras`] over the MCP hub: see the module doc.
pub struct FederatedExtras {
    hub: Arc<McpHub>,
    access: Access,
    subscribers: Arc<Subscribers>,
}

impl FederatedExtras {
    /// Starts forwarding the hub's resource updates to the sessions subscribed to them.
    pub fn new(hub: Arc<McpHub>, gateway: Arc<Gateway>) -> Arc<Self> {
        let subscribers = Subscribers::start(&hub);
        Arc::new(FederatedExtras {
            access: Access::new(gateway, Arc::clone(&hub)),
            hub,
            subscribers,
        })
    }
}

/// A completion result as 2026-07-28 clients require it (a 2025-11-25 server sends no
/// `resultType`).
fn complete(mut result: CompleteResult) -> CompleteResult {
    result.result_type.get_or_insert(ResultType::COMPLETE);
    result
}

fn private<T>(mut result: T, scope: impl FnOnce(&mut T) -> &mut Option<CacheScope>) -> T {
    // What a role sees depends on the role: no shared cache may serve it to another.
    *scope(&mut result) = Some(CacheScope::Private);
    result
}

#[async_trait]
impl McpExtras for FederatedExtras {
    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities::builder()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_completions()
            .enable_logging()
            .build()
    }

    async fn list_prompts(&self, who: &Requester) -> Result<ListPromptsResult, ErrorData> {
        let mut prompts = Vec::new();
        for p in self.hub.prompts() {
            if self.access.sees_prompt(who, &p).await {
                prompts.push(p.prompt);
            }
        }
        Ok(private(ListPromptsResult::with_all_items(prompts), |r| {
            &mut r.cache_scope
        }))
    }

    async fn get_prompt(
        &self,
        who: &Requester,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, ErrorData> {
        let result = self
            .access
            .get_prompt(who, &request.name, request.arguments)
            .await;
        result.map(|mut r| {
            // A 2025-11-25 server sends none; 2026-07-28 clients require it.
            r.result_type.get_or_insert(ResultType::COMPLETE);
            r
        })
    }

    async fn list_resources(&self, who: &Requester) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .hub
            .resources()
            .into_iter()
            .filter(|r| self.access.sees(who, &r.target.key))
            .map(|r| r.resource)
            .collect();
        Ok(private(
            ListResourcesResult::with_all_items(resources),
            |r| &mut r.cache_scope,
        ))
    }

    async fn list_resource_templates(
        &self,
        who: &Requester,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self
            .hub
            .resource_templates()
            .into_iter()
            .filter(|t| self.access.sees(who, &t.target.key))
            .map(|t| t.template)
            .collect();
        Ok(private(
            ListResourceTemplatesResult::with_all_items(templates),
            |r| &mut r.cache_scope,
        ))
    }

    async fn read_resource(
        &self,
        who: &Requester,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, ErrorData> {
        let result = self.access.read_resource(who, &request.uri).await;
        result.map(|mut r| {
            r.result_type.get_or_insert(ResultType::COMPLETE);
            r
        })
    }

    async fn subscribe(&self, who: &Requester, uri: String) -> Result<(), ErrorData> {
        let target = self.access.may_subscribe(who, &uri).await?;
        if self.subscribers.add(who, &target, &uri)
            && let Err(e) = self.hub.subscribe(&target).await
        {
            self.subscribers.remove(who, &target);
            return Err(e);
        }
        Ok(())
    }

    async fn unsubscribe(&self, who: &Requester, uri: String) -> Result<(), ErrorData> {
        let target = self.access.resource(who, &self.hub, &uri)?;
        if self.subscribers.remove(who, &target) {
            self.hub.unsubscribe(&target).await?;
        }
        Ok(())
    }

    async fn complete(
        &self,
        who: &Requester,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let Some((target, reference)) = self
            .hub
            .completion_target(&request.r#ref)
            .filter(|(t, _)| self.access.sees(who, &t.key))
        else {
            // Nothing known to complete: no suggestions, as the spec answers.
            return Ok(complete(CompleteResult::new(CompletionInfo::default())));
        };
        self.hub
            .complete(&target, request, reference)
            .await
            .map(complete)
    }

    fn accepted_notices(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        listen::accepted(requested)
    }

    async fn listen(
        &self,
        who: &Requester,
        accepted: &SubscriptionFilter,
        sink: &SubscriptionSink,
        stop: &CancellationToken,
    ) {
        listen::serve(&self.hub, &self.access, who, accepted, sink, stop).await;
    }

    async fn watch_session(&self, peer: rmcp::Peer<rmcp::RoleServer>, stop: CancellationToken) {
        listen::watch_session(&self.hub, &peer, &stop).await;
    }

    async fn set_level(&self, _who: &Requester, level: LoggingLevel) -> Result<(), ErrorData> {
        self.hub.set_level(level).await;
        Ok(())
    }
}
