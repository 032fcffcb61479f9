//! Built-in actions of toolgate: workspace-confined file tools and a shell (R-ACT-1,
//! R-ACT-2).
//!
//! # Layout
//! - [`workspace`]: [`Workspace`], the confinement every path goes through: no absolute
//!   paths, no `..`, no symlinks out, no symlink loops, no protected paths.
//! - [`files`]: `read_file`, `write_file` (atomic), `edit_file` (unique exact match),
//!   `list_dir`, `search_files` — one file per tool.
//! - [`shell`]: `shell`, `/bin/sh -c` in its own process group with a scrubbed
//!   environment, a timeout and an output cap; the whole group is killed at the end.
//! - [`sandbox`]: the OS sandbox of `shell` — Landlock, seccomp, resource limits and a
//!   subreaper helper that leaves no process behind; [`Sandbox::probe`] says what the
//!   kernel offers.
//! - [`builtin`]: [`builtin_tools`] and [`BuiltinOptions`].
//!
//! Each tool resolves its paths in `check` (so the gateway refuses before asking a human)
//! and again in `call`. Arguments are validated by the gateway; the tools still decode them
//! defensively and answer [`ToolError::InvalidArguments`](toolgate_core::ToolError) rather
//! than panic. Write tools accept an ignored `idempotency_key` (the gateway acts on it).
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_tools::{BuiltinOptions, Workspace, builtin_tools};
//!
//! let dir = std::env::temp_dir();
//! let ws = Arc::new(Workspace::new(&dir, vec![".toolgate".into()]).unwrap());
//! let tools = builtin_tools(ws, &BuiltinOptions::default());
//! let names: Vec<_> = tools.iter().map(|t| t.spec().name.as_str()).collect();
//! assert_eq!(names, ["read_file", "write_file", "edit_file", "list_dir", "search_files", "shell"]);
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod args;
pub mod builtin;
pub mod files;
pub mod sandbox;
pub mod shell;
pub mod workspace;

pub use builtin::{BuiltinOptions, builtin_tools};
pub use files::{EditFileTool, ListDirTool, ReadFileTool, SearchFilesTool, WriteFileTool};
pub use sandbox::{ResourceLimits, Sandbox, SandboxLauncher, SandboxMode, SandboxPolicy};
pub use shell::{ShellEgress, ShellOptions, ShellTool};
pub use workspace::Workspace;
