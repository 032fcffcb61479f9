//! Who may see which federated prompt or resource, and every read through the gateway's
//! pipeline (see the module doc of [`super`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, JsonObject, ReadResourceResult};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolgate_gateway::policy::Decision;
use toolgate_gateway::{Arguments, CallRequest, Gateway, Target as CallTarget};
use toolgate_mcp_client::McpHub;
use toolgate_mcp_client::federation::{ListedPrompt, RouteError, Target};
use toolgate_protocol::{CallError, ErrorCode, Risk};
use toolgate_registry::{Availability, Entry};
use toolgate_server::mcp::Requester;

use super::pins::PromptPins;
use super::read_tool::{Act, FederatedRead, upstream_error};

/// The role and pin checks of listings, and the pipeline every read goes through.
pub(super) struct Access {
    gateway: Arc<Gateway>,
    hub: Arc<McpHub>,
    pins: PromptPins,
}

/// The answer for a prompt that does not exist or the role may not see.
pub(super) fn no_prompt(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no prompt named `{name}`"), None)
}

/// The answer for a resource that does not exist or the role may not see.
fn no_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(format!("no resource `{uri}`"), Some(json!({"uri": uri})))
}

/// What a read names, for the answer when it is refused as unknown.
enum Asked<'a> {
    Prompt(&'a str),
    Resource(&'a str),
}

impl Asked<'_> {
    fn not_found(&self) -> ErrorData {
        match self {
            Asked::Prompt(name) => no_prompt(name),
            Asked::Resource(uri) => no_resource(uri),
        }
    }
}

impl Access {
    pub(super) fn new(gateway: Arc<Gateway>, hub: Arc<McpHub>) -> Self {
        Access {
            pins: PromptPins::new(Arc::clone(&gateway)),
            gateway,
            hub,
        }
    }

    /// Whether the caller's role may see `key`: allowed by its globs and not denied.
    pub(super) fn sees(&self, who: &Requester, key: &str) -> bool {
        self.gateway
            .roles()
            .get(&who.caller.role)
            .is_some_and(|role| role.allows(key) && role.decide(key, Risk::Read) != Decision::Deny)
    }

    /// [`Access::sees`], and the prompt's definition is the pinned one.
    pub(super) async fn sees_prompt(&self, who: &Requester, prompt: &ListedPrompt) -> bool {
        self.sees(who, &prompt.target.key) && self.pins.check(prompt).await.is_ok()
    }

    /// The resource behind `uri` if the caller's role may see it.
    pub(super) fn resource(
        &self,
        who: &Requester,
        hub: &McpHub,
        uri: &str,
    ) -> Result<Target, ErrorData> {
        match hub.resource_target(uri) {
            Ok(target) if self.sees(who, &target.key) => Ok(target),
            Ok(_) | Err(RouteError::Unknown(_)) => Err(no_resource(uri)),
            Err(ambiguous @ RouteError::Ambiguous { .. }) => {
                Err(ErrorData::invalid_params(ambiguous.to_string(), None))
            }
        }
    }

    /// `prompts/get` of `name` through the pipeline: the upstream's result, or the refusal
    /// as MCP answers it. A prompt whose definition changed since it was pinned is
    /// quarantined (refused by lookup, like a changed tool).
    pub(super) async fn get_prompt(
        &self,
        who: &Requester,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, ErrorData> {
        let prompt = self
            .hub
            .prompts()
            .into_iter()
            .find(|p| p.prompt.name == name);
        let (key, entry) = match &prompt {
            Some(p) => {
                let availability = match self.pins.check(p).await {
                    Ok(()) => Availability::Available,
                    Err(why) => Availability::Quarantined(why),
                };
                let tool = FederatedRead::prompt(Arc::clone(&self.hub), p);
                let entry = Entry {
                    tool: Arc::new(tool),
                    availability,
                };
                (p.target.key.clone(), Some(entry))
            }
            None => (name.to_owned(), None),
        };
        let args = Value::Object(arguments.unwrap_or_default());
        let whole = self
            .run(
                who,
                key,
                CallTarget::Prompt(entry),
                args,
                Asked::Prompt(name),
            )
            .await?;
        decode(whole)
    }

    /// `resources/read` of `uri` through the pipeline.
    pub(super) async fn read_resource(
        &self,
        who: &Requester,
        uri: &str,
    ) -> Result<ReadResourceResult, ErrorData> {
        decode(self.resource_act(who, uri, Act::ReadResource).await?.1)
    }

    /// The authorisation (and audit) of a subscription to `uri`, through the pipeline: the
    /// resource's target once it is allowed.
    pub(super) async fn may_subscribe(
        &self,
        who: &Requester,
        uri: &str,
    ) -> Result<Target, ErrorData> {
        match self.resource_act(who, uri, Act::Subscribe).await? {
            (Some(target), _) => Ok(target),
            // The pipeline refuses an unknown resource; never reached.
            (None, _) => Err(no_resource(uri)),
        }
    }

    /// `act` on the resource behind `uri`, through the pipeline: its target and the
    /// upstream's result as JSON (`null` for a subscription).
    async fn resource_act(
        &self,
        who: &Requester,
        uri: &str,
        act: Act,
    ) -> Result<(Option<Target>, Value), ErrorData> {
        let (key, entry, target) = match self.hub.resource_target(uri) {
            Ok(target) => {
                let tool = FederatedRead::resource(Arc::clone(&self.hub), &target, act);
                let entry = Entry {
                    tool: Arc::new(tool),
                    availability: Availability::Available,
                };
                (target.key.clone(), Some(entry), Some(target))
            }
            Err(RouteError::Unknown(_)) => (uri.to_owned(), None, None),
            Err(ambiguous @ RouteError::Ambiguous { .. }) => {
                return Err(ErrorData::invalid_params(ambiguous.to_string(), None));
            }
        };
        let args = if act == Act::Subscribe {
            json!({"uri": uri, "subscribe": true})
        } else {
            json!({"uri": uri})
        };
        let whole = self
            .run(
                who,
                key,
                CallTarget::Resource(entry),
                args,
                Asked::Resource(uri),
            )
            .await?;
        Ok((target, whole))
    }

    /// One governed read: the gateway's pipeline decides, audits and runs it; the
    /// upstream's result whole (`null` when the act has none).
    async fn run(
        &self,
        who: &Requester,
        key: String,
        target: CallTarget,
        args: Value,
        asked: Asked<'_>,
    ) -> Result<Value, ErrorData> {
        let mut request = CallRequest::new(key.clone(), Arguments::Json(args))
            .with_role(who.caller.role.clone())
            .with_principal(who.caller.principal.clone())
            .with_session(who.session.clone());
        request.target = target;
        request.identity = who.caller.identity.clone();
        request.caller = who.client.clone();
        // A read cannot hold the request open for a human: an `ask` answers
        // `approval_required` with the approval's id, and the client asks again once
        // it is decided.
        request.wait_for_approval = Some(false);
        let envelope = self.gateway.call(request).await;
        if let Some(error) = envelope.error {
            return Err(self.refusal(who, &key, &asked, error));
        }
        Ok(envelope.mcp_result.unwrap_or(Value::Null))
    }

    /// A refused or failed read as MCP answers it: what the role may not see is answered
    /// as what does not exist; an upstream's own error passes on unchanged; every other
    /// refusal carries toolgate's error code and details in its data.
    fn refusal(
        &self,
        who: &Requester,
        key: &str,
        asked: &Asked<'_>,
        error: CallError,
    ) -> ErrorData {
        if error.code == ErrorCode::UnknownTool || !self.sees(who, key) {
            return asked.not_found();
        }
        if let Some(upstream) = upstream_error(error.details.as_ref()) {
            return upstream;
        }
        let data = Some(json!({
            "code": error.code,
            "hint": error.hint,
            "details": error.details,
        }));
        match error.code {
            ErrorCode::InvalidArguments => ErrorData::invalid_params(error.message, data),
            ErrorCode::ExecutionFailed | ErrorCode::Unavailable | ErrorCode::Timeout => {
                ErrorData::internal_error(error.message, data)
            }
            _ => ErrorData::invalid_request(error.message, data),
        }
    }
}

/// The upstream's result, as the read tool passed it on.
fn decode<T: DeserializeOwned>(whole: Value) -> Result<T, ErrorData> {
    serde_json::from_value(whole).map_err(|e| {
        ErrorData::internal_error(format!("an upstream result did not decode: {e}"), None)
    })
}
