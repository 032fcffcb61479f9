//! What one caller may see: the catalog filtered to the caller's role (and to available
//! tools), in MCP shape; and the rule that a tool hidden from the role is indistinguishable
//! from one that does not exist.

use rmcp::model::Tool;
use toolgate_gateway::Gateway;
use toolgate_protocol::{CallError, Envelope, ErrorCode, ExportFormat};

/// The tools `role` may see, as MCP `Tool`s, sorted by name.
pub fn visible_tools(gateway: &Gateway, role: &str) -> Vec<Tool> {
    let exported = gateway
        .catalog()
        .export(ExportFormat::Mcp, |e| gateway.visible_to(role, e));
    let Some(items) = exported.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match serde_json::from_value::<Tool>(item.clone()) {
            Ok(tool) => Some(tool),
            Err(e) => {
                tracing::warn!(tool = %item["name"], error = %e, "tool not expressible as an MCP tool; left out of tools/list");
                None
            }
        })
        .collect()
}

/// Rewrites the failure of a call to a tool `role` cannot see into the failure for a tool
/// that does not exist, and keeps `unknown_tool` hints to names the role can see (the
/// gateway's own hint searches the whole catalog). The audit still records what really
/// happened; only the answer to the client is concealed.
pub fn conceal_hidden(gateway: &Gateway, role: &str, tool: &str, envelope: Envelope) -> Envelope {
    let Some(error) = &envelope.error else {
        return envelope;
    };
    let visible = gateway
        .catalog()
        .get(tool)
        .is_some_and(|e| gateway.visible_to(role, &e));
    let conceal = error.code == ErrorCode::UnknownTool || !visible;
    if !conceal {
        return envelope;
    }
    let names: Vec<String> = gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| e.is_available() && gateway.visible_to(role, e))
        .map(|e| e.spec().name.clone())
        .collect();
    Envelope::failure(envelope.call_id, unknown_tool(tool, &names))
}

/// `unknown_tool` for `name`, suggesting the closest of `names` (the gateway's hint rule).
pub fn unknown_tool(name: &str, names: &[String]) -> CallError {
    let err = CallError::new(ErrorCode::UnknownTool, format!("no tool named `{name}`"));
    match toolgate_gateway::lookup::closest_name(name, names.iter().map(String::as_str)) {
        Some(n) => err.with_hint(format!(
            "did you mean `{n}`? tools/list shows the tools you can call"
        )),
        None => err.with_hint("tools/list shows the tools you can call"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tool_suggests_only_given_names() {
        let names = vec!["read_file".to_owned(), "list_dir".to_owned()];
        let err = unknown_tool("read_fil", &names);
        assert_eq!(
            (err.code, err.message.as_str(), err.hint.as_deref()),
            (
                ErrorCode::UnknownTool,
                "no tool named `read_fil`",
                Some("did you mean `read_file`? tools/list shows the tools you can call")
            )
        );
        let err = unknown_tool("shell", &names);
        assert_eq!(
            err.hint.as_deref(),
            Some("tools/list shows the tools you can call")
        );
    }
}
