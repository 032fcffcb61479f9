//! MCP over a byte stream: stdin/stdout for `toolgate serve --stdio`, any reader/writer pair
//! in tests. The whole connection acts as one caller in one session (the user who spawned
//! the process); it ends when the client closes its end, which cancels any call still
//! running. Nothing but protocol is written to the writer.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};
use toolgate_gateway::Gateway;

use super::handler::{Identity, Lifecycle, McpHandler, McpOptions};
use toolgate_gateway::Caller;

#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(Box<ServerInitializeError>),
    #[error("the MCP connection task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The session name of a stdio connection: unique per process run.
pub fn stdio_session() -> String {
    format!("stdio_{}", uuid::Uuid::now_v7().simple())
}

/// Serves MCP on `reader`/`writer` as `caller` until the client hangs up.
pub async fn serve_io<R, W>(
    gateway: Arc<Gateway>,
    caller: Caller,
    options: McpOptions,
    reader: R,
    writer: W,
) -> Result<(), StdioError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let identity = Identity::Fixed {
        caller,
        session: stdio_session(),
    };
    let handler = McpHandler::new(gateway, identity, options, Lifecycle::default());
    let running = handler
        .serve((reader, writer))
        .await
        .map_err(|e| StdioError::Handshake(Box::new(e)))?;
    running.waiting().await?;
    Ok(())
}

/// Serves MCP on this process's stdin/stdout.
pub async fn serve_stdio(
    gateway: Arc<Gateway>,
    caller: Caller,
    options: McpOptions,
) -> Result<(), StdioError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    serve_io(gateway, caller, options, stdin, stdout).await
}
