//! What a server offers besides tools — prompts, resources, resource templates and the
//! capabilities behind completion, logging and subscriptions — listed with its tools and
//! again whenever it says a list changed. Kept per connection in the server's
//! [`ServerLink`](crate::link::ServerLink); the hub's federation reads it from there.

use rmcp::model::{Prompt, Resource, ResourceTemplate, ServerCapabilities};
use rmcp::service::{Peer, RoleClient};

use crate::connect::error_chain;

/// One server's prompts, resources and templates under its own names, as last listed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offers {
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
}

impl Offers {
    /// Lists every page of what the server's capabilities say it offers. A list that fails
    /// is left empty (and logged): a server whose prompts cannot be listed still serves
    /// its tools.
    pub(crate) async fn list(server: &str, peer: &Peer<RoleClient>) -> Offers {
        let Some(info) = peer.peer_info() else {
            return Offers::default();
        };
        let capabilities = info.capabilities.clone();
        let mut offers = Offers {
            capabilities,
            ..Offers::default()
        };
        if offers.capabilities.prompts.is_some() {
            offers.prompts = listed(server, "prompts", peer.list_all_prompts().await);
        }
        if offers.capabilities.resources.is_some() {
            offers.resources = listed(server, "resources", peer.list_all_resources().await);
            offers.templates = listed(
                server,
                "resource templates",
                peer.list_all_resource_templates().await,
            );
        }
        offers
    }

    /// Whether the server lets clients subscribe to resource updates.
    pub(crate) fn subscribes(&self) -> bool {
        self.capabilities
            .resources
            .as_ref()
            .and_then(|r| r.subscribe)
            == Some(true)
    }
}

fn listed<T>(server: &str, what: &str, result: Result<Vec<T>, rmcp::ServiceError>) -> Vec<T> {
    result.unwrap_or_else(|e| {
        tracing::warn!(server, error = %error_chain(&e), "listing {what} failed; none offered");
        Vec::new()
    })
}

/// Whether `uri` is one of the URIs `template` (RFC 6570, levels 1–2) describes: literal
/// text must match exactly, `{var}` matches one or more characters other than `/`, `?`
/// and `#`, `{+var}` / `{#var}` match anything non-empty.
pub(crate) fn template_matches(template: &str, uri: &str) -> bool {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        parts.push(Part::Literal(&rest[..open]));
        let expr = &rest[open + 1..open + close];
        parts.push(Part::Var {
            reserved: expr.starts_with('+') || expr.starts_with('#'),
        });
        rest = &rest[open + close + 1..];
    }
    parts.push(Part::Literal(rest));
    matches(&parts, uri)
}

#[derive(Debug, Clone, Copy)]
enum Part<'a> {
    Literal(&'a str),
    Var { reserved: bool },
}

fn matches(parts: &[Part<'_>], text: &str) -> bool {
    match parts.split_first() {
        None => text.is_empty(),
        Some((Part::Literal(lit), rest)) => text
            .strip_prefix(lit)
            .is_some_and(|after| matches(rest, after)),
        Some((Part::Var { reserved }, rest)) => {
            let stop = text
                .char_indices()
                .find(|(_, c)| !*reserved && matches!(c, '/' | '?' | '#'))
                .map_or(text.len(), |(i, _)| i);
            (1..=stop)
                .filter(|end| text.is_char_boundary(*end))
                .any(|end| matches(rest, &text[end..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::template_matches;

    #[test]
    fn templates_match_their_uris_only() {
        let t = "test://template/{id}/data";
        assert!(template_matches(t, "test://template/42/data"));
        assert!(!template_matches(t, "test://template//data"));
        assert!(!template_matches(t, "test://template/4/2/data"));
        assert!(!template_matches(t, "test://template/42/datax"));
        assert!(template_matches("file:///{+path}", "file:///a/b/c.txt"));
        assert!(!template_matches("file:///{+path}", "file:///"));
        assert!(template_matches("demo://r/{a}-{b}", "demo://r/x-y"));
        assert!(template_matches("plain://x", "plain://x"));
        assert!(!template_matches("plain://x", "plain://y"));
        assert!(!template_matches("broken://{x", "broken://{x/"));
    }
}
