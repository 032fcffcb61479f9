//! `toolgate call NAME --args JSON`: one call through the gateway; the envelope on stdout;
//! exit 0 when ok, otherwise the error code's exit status (approval_required: 3, others: 2).

use std::io::{IsTerminal, Read};
use std::sync::Arc;

use anyhow::Context;
use toolgate_app::{McpServers, Runtime, RuntimeOptions};
use toolgate_gateway::approve::Approver;
use toolgate_gateway::{Arguments, CallRequest};
use toolgate_protocol::ErrorCode;

use crate::cli::CallArgs;
use crate::output;
use crate::prompt::TerminalApprover;
use crate::user::local_user;
use toolgate_app::Config;

/// The arguments text: inline, `-` (stdin) or `@FILE`. A stream is read only up to
/// `limit` bytes plus one, so `@/dev/zero` or an endless pipe ends at once with a clear
/// error instead of filling memory; the gateway would refuse anything longer anyway.
pub(crate) fn read_arguments(spec: &str, limit: usize) -> anyhow::Result<String> {
    if spec == "-" {
        read_capped(std::io::stdin().lock(), limit, "stdin")
    } else if let Some(path) = spec.strip_prefix('@') {
        let file =
            std::fs::File::open(path).with_context(|| format!("reading arguments from {path}"))?;
        read_capped(file, limit, path)
    } else {
        Ok(spec.to_owned())
    }
}

fn read_capped(source: impl Read, limit: usize, from: &str) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    source
        .take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading arguments from {from}"))?;
    if bytes.len() > limit {
        anyhow::bail!(
            "the arguments in {from} are longer than limits.max_argument_bytes ({limit} bytes)"
        );
    }
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("stream did not contain valid UTF-8"))
        .with_context(|| format!("reading arguments from {from}"))
}

/// The exit status of a failed call: 3 when it needs approval (a script waits for an
/// operator and retries), 2 otherwise; 0 is success and 1 a fatal error (see `main`).
fn exit_code(code: ErrorCode) -> i32 {
    match code {
        ErrorCode::ApprovalRequired => 3,
        _ => 2,
    }
}

pub async fn run(settings: &Config, args: CallArgs) -> anyhow::Result<i32> {
    let text = read_arguments(&args.args, settings.file.limits.max_argument_bytes)?;
    let interactive = !args.no_prompt && args.args != "-" && std::io::stdin().is_terminal();
    let approver: Option<Arc<dyn Approver>> =
        interactive.then(|| Arc::new(TerminalApprover { who: local_user() }) as Arc<dyn Approver>);
    // Only the MCP server the tool belongs to is started; a built-in tool starts none.
    // `search_tools` searches the whole catalog: every server, and it exists only when the
    // catalog exceeds [rag] threshold.
    let searching = args.name == toolgate_rag::SEARCH_TOOLS;
    let which = if searching {
        McpServers::All
    } else {
        McpServers::ForTool(&args.name)
    };
    let options = RuntimeOptions::command()
        .with_approver(approver)
        .with_servers(which)
        .with_rag(searching);
    let runtime = Runtime::open(settings, options).await?;
    let mut request = CallRequest::new(args.name, Arguments::Text(text))
        .with_role(settings.role.clone())
        .with_session(args.session)
        .with_principal(
            args.principal
                .unwrap_or_else(|| format!("cli:{}", local_user())),
        );
    request.idempotency_key = args.idempotency_key;
    let cancel = request.cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    let envelope = runtime.gateway().call(request).await;
    runtime.shutdown().await?;
    output::json(&shown(&envelope))?;
    Ok(envelope.error.map_or(0, |e| exit_code(e.code)))
}

/// The envelope as the CLI prints it: a federated tool's content blocks exactly as its server
/// sent them — annotations, `resource_link`, `_meta` — in place of toolgate's typed copy
/// (which knows no annotations and carries a link as a `resource`). Plain text blocks and
/// nothing else add nothing to `data`, which already holds that text: they are left out as
/// before. A result cut by result governance has no upstream result left, and shows the typed
/// head.
fn shown(envelope: &toolgate_protocol::Envelope) -> serde_json::Value {
    let mut v = serde_json::to_value(envelope).unwrap_or(serde_json::Value::Null);
    let upstream = envelope
        .mcp_result
        .as_ref()
        .and_then(|r| r.get("content"))
        .and_then(serde_json::Value::as_array)
        .filter(|blocks| !blocks.is_empty());
    if let Some(blocks) = upstream
        && (!envelope.content.is_empty() || !blocks.iter().all(plain_text))
    {
        v["content"] = serde_json::Value::Array(blocks.clone());
    }
    v
}

/// `{"type": "text", "text": …}` and nothing more.
fn plain_text(block: &serde_json::Value) -> bool {
    block.as_object().is_some_and(|o| {
        o.get("type").and_then(serde_json::Value::as_str) == Some("text")
            && o.keys().all(|k| k == "type" || k == "text")
    })
}
