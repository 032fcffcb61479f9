//! Workspace-confined file tools (R-ACT-1).
//!
//! # Layout
//! - [`read`], [`write`](mod@write), [`edit`], [`list`], [`search`]: one tool each.
//! - `beneath`: opening a resolved path relative to the workspace root's descriptor, the
//!   kernel refusing symlinks and steps out (`openat2`, or a walk by hand without it).
//! - `regular`: opening regular files without following a swapped-in symlink, the
//!   hard-link policy, binary sniffing.
//! - `atomic`: temp-file-and-rename replacement, relative to the parent directory's
//!   descriptor, that keeps the file's mode.
//! - `walk`: the sorted, symlink-free directory walk behind `list_dir` and `search_files`,
//!   descending by descriptor.
//!
//! Every tool resolves its paths through [`Workspace`](crate::Workspace) both in `check`
//! and again in `call`, then opens what it resolved through `beneath` — never by path —
//! so the tree changing between the two cannot lead outside.

mod atomic;
mod beneath;
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
