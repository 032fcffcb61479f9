//! Workspace-confined file tools (R-ACT-1).
//!
//! # Layout
//! - [`read`], [`write`](mod@write), [`edit`], [`list`], [`search`]: one tool each.
//! - `regular`: opening regular files without following a swapped-in symlink, binary sniffing.
//! - `atomic`: temp-file-and-rename replacement that keeps the file's mode.
//! - `walk`: the sorted, symlink-free directory walk behind `list_dir` and `search_files`.
//!
//! Every tool resolves its paths through [`Workspace`](crate::Workspace) both in `check`
//! and again in `call`.

mod atomic;
pub mod edit;
pub mod list;
pub mod read;
mod regular;
pub mod search;
mod walk;
pub mod write;

pub use edit::EditFileTool;
pub use list::ListDirTool;
pub use read::ReadFileTool;
pub use search::SearchFilesTool;
pub use write::WriteFileTool;
