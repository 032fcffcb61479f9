//! The set of built-in tools and the options they share.

use std::sync::Arc;

use toolgate_core::DynTool;

use crate::files::{EditFileTool, ListDirTool, ReadFileTool, SearchFilesTool, WriteFileTool};
use crate::shell::{ShellOptions, ShellTool};
use crate::workspace::Workspace;

/// Options of the built-in tools.
#[derive(Debug, Clone)]
pub struct BuiltinOptions {
    pub shell: ShellOptions,
    /// Largest file `read_file` reads whole, `edit_file` edits and `search_files` scans;
    /// also the byte limit of one `read_file` window (default 10 MiB).
    pub max_read_bytes: u64,
}

impl Default for BuiltinOptions {
    fn default() -> Self {
        BuiltinOptions {
            shell: ShellOptions::default(),
            max_read_bytes: 10 * 1024 * 1024,
        }
    }
}

/// All six tools: read_file, write_file, edit_file, list_dir, search_files, shell.
pub fn builtin_tools(ws: Arc<Workspace>, opts: &BuiltinOptions) -> Vec<DynTool> {
    let max = opts.max_read_bytes;
    vec![
        Arc::new(ReadFileTool::new(Arc::clone(&ws), max)),
        Arc::new(WriteFileTool::new(Arc::clone(&ws))),
        Arc::new(EditFileTool::new(Arc::clone(&ws), max)),
        Arc::new(ListDirTool::new(Arc::clone(&ws))),
        Arc::new(SearchFilesTool::new(Arc::clone(&ws), max)),
        Arc::new(ShellTool::new(ws, opts.shell.clone())),
    ]
}
