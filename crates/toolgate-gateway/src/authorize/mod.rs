//! Role allowlist: a role sees and calls only the tools its allowlist names (names and
//! globs). Anything else is `forbidden`, and an unknown role is refused outright.

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_protocol::{CallError, ErrorCode};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};
use crate::policy::Roles;

pub struct AuthorizeLayer {
    roles: Arc<Roles>,
}

impl AuthorizeLayer {
    pub fn new(roles: Arc<Roles>) -> Self {
        AuthorizeLayer { roles }
    }
}

#[async_trait]
impl Layer for AuthorizeLayer {
    fn name(&self) -> &'static str {
        "authorize"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let resolved = call.role_in(&self.roles);
        let role_name = &call.request.role;
        let Some(role) = resolved else {
            let known: Vec<&str> = self.roles.names().collect();
            return Err(CallError::new(
                ErrorCode::Forbidden,
                format!(
                    "unknown role `{role_name}` (configured roles: {})",
                    known.join(", ")
                ),
            ));
        };
        let tool = &call.entry()?.spec().name;
        if !role.allows(tool) {
            return Err(CallError::new(
                ErrorCode::Forbidden,
                format!("role `{role_name}` may not call `{tool}`"),
            )
            .with_hint(format!(
                "call with a token of a role whose `tools` allowlist names `{tool}` (an operator \
                 issues one: `toolgate token create --principal NAME --role ROLE`), or add it \
                 to role `{role_name}`'s `tools` in toolgate.toml"
            )));
        }
        next.run(call).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::RoleConfig;
    use crate::testing::{call_for, echo_tool, run_layer_on};
    use serde_json::json;
    use std::collections::BTreeMap;
    use toolgate_protocol::Risk;

    fn layer() -> AuthorizeLayer {
        let cfg = BTreeMap::from([(
            "reader".to_owned(),
            RoleConfig {
                tools: vec!["read_*".into()],
                ..RoleConfig::default()
            },
        )]);
        AuthorizeLayer::new(Arc::new(Roles::compile(&cfg).unwrap()))
    }

    #[tokio::test]
    async fn allowlist_by_glob() {
        let mut ok = call_for(echo_tool("read_file", Risk::Read), json!({}));
        ok.request.role = "reader".into();
        assert!(run_layer_on(&layer(), &mut ok).await.is_ok());

        let mut no = call_for(echo_tool("shell", Risk::Dangerous), json!({}));
        no.request.role = "reader".into();
        let err = run_layer_on(&layer(), &mut no).await.unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::Forbidden, "role `reader` may not call `shell`")
        );
    }

    #[tokio::test]
    async fn unknown_role_is_forbidden() {
        let mut call = call_for(echo_tool("read_file", Risk::Read), json!({}));
        call.request.role = "root".into();
        let err = run_layer_on(&layer(), &mut call).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Forbidden);
        assert_eq!(
            err.message,
            "unknown role `root` (configured roles: default, reader, readonly)"
        );
    }
}
