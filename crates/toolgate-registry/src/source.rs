//! Where tools come from. A source lists its current tools; the catalog merges all sources
//! into one snapshot on reload.

use toolgate_core::DynTool;

/// A provider of tools: the built-ins, one MCP server, a plugin.
pub trait ToolSource: Send + Sync {
    /// Stable name shown as the tools' `source` (`builtin`, `mcp:github`).
    fn name(&self) -> &str;
    /// The tools this source offers now.
    fn tools(&self) -> Vec<DynTool>;
    /// Whether the catalog pins this source's tool definitions (R-REG-5): true for sources
    /// whose definitions toolgate does not control (MCP servers), false for built-ins.
    fn pinned(&self) -> bool {
        false
    }
}

/// A fixed list of tools.
pub struct StaticSource {
    name: String,
    tools: Vec<DynTool>,
    pinned: bool,
}

impl StaticSource {
    pub fn new(name: impl Into<String>, tools: Vec<DynTool>) -> Self {
        StaticSource {
            name: name.into(),
            tools,
            pinned: false,
        }
    }

    /// Makes the source pinned, as an MCP server's is.
    pub fn with_pinning(mut self) -> Self {
        self.pinned = true;
        self
    }
}

impl ToolSource for StaticSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn tools(&self) -> Vec<DynTool> {
        self.tools.clone()
    }

    fn pinned(&self) -> bool {
        self.pinned
    }
}
