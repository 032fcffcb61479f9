//! Attribute names. Standard ones as the conventions spell them; toolgate's own under
//! `toolgate.`.

pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
pub const GEN_AI_TOOL_TYPE: &str = "gen_ai.tool.type";
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
pub const GEN_AI_TOKEN_TYPE: &str = "gen_ai.token.type";

pub const MCP_METHOD_NAME: &str = "mcp.method.name";
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub const MCP_SESSION_ID: &str = "mcp.session.id";
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
pub const NETWORK_TRANSPORT: &str = "network.transport";
pub const SERVER_ADDRESS: &str = "server.address";
pub const SERVER_PORT: &str = "server.port";
pub const ERROR_TYPE: &str = "error.type";

/// The value of `gen_ai.operation.name` for a tool call.
pub const EXECUTE_TOOL: &str = "execute_tool";

pub const ROLE: &str = "toolgate.role";
pub const PRINCIPAL: &str = "toolgate.principal";
pub const RISK: &str = "toolgate.risk";
pub const SOURCE: &str = "toolgate.tool.source";
/// `ok`, or the closed error code the call ended with.
pub const OUTCOME: &str = "toolgate.outcome";
pub const POLICY_DECISION: &str = "toolgate.policy.decision";
pub const POLICY_RULE: &str = "toolgate.policy.rule";
pub const APPROVAL_ID: &str = "toolgate.approval.id";
pub const APPROVAL_STATUS: &str = "toolgate.approval.status";
pub const APPROVAL_WAIT_MS: &str = "toolgate.approval.wait_ms";
pub const RESULT_OFFLOADED: &str = "toolgate.result.offloaded";
pub const RESULT_ID: &str = "toolgate.result.id";
pub const MCP_SERVER: &str = "toolgate.mcp.server";

/// What metrics call a tool the catalog does not have: a caller choosing names must not grow
/// the series (and the SDK's memory) without bound. Spans keep the name, cut by [`bounded`].
pub const UNKNOWN_TOOL: &str = "_unknown";

/// The longest caller-chosen name a span carries, in bytes.
pub const MAX_NAME: usize = 128;

/// `name` cut to [`MAX_NAME`] bytes on a character boundary.
pub fn bounded(name: &str) -> &str {
    if name.len() <= MAX_NAME {
        return name;
    }
    let mut cut = MAX_NAME;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    &name[..cut]
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_names_are_cut_on_a_character_boundary() {
        assert_eq!(super::bounded("read_file"), "read_file");
        let long = "é".repeat(100);
        let cut = super::bounded(&long);
        assert_eq!(cut.len(), 128);
        assert!(long.starts_with(cut));
    }
}
