//! A workspace in a temp dir (with a protected `.toolgate`), a second temp dir outside it,
//! and the six built-in tools over the workspace. The shell's sandbox helper is this
//! crate's `toolgate-sandbox` binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;
use toolgate_core::{DynTool, ToolContext, ToolError};
use toolgate_tools::{BuiltinOptions, SandboxLauncher, Workspace, builtin_tools};

/// The helper binary cargo built for these tests.
pub fn test_launcher() -> SandboxLauncher {
    SandboxLauncher::program(env!("CARGO_BIN_EXE_toolgate-sandbox"))
}

pub struct Fixture {
    /// Holds the workspace root alive.
    _root: TempDir,
    outside: TempDir,
    pub ws: Arc<Workspace>,
    tools: Vec<DynTool>,
}

impl Fixture {
    pub fn new() -> Self {
        Fixture::with_options(BuiltinOptions::default())
    }

    pub fn with_options(mut opts: BuiltinOptions) -> Self {
        opts.shell.launcher.get_or_insert_with(test_launcher);
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(".toolgate")).unwrap();
        std::fs::write(root.path().join(".toolgate/audit.jsonl"), "{}\n").unwrap();
        let ws = Arc::new(Workspace::new(root.path(), vec![PathBuf::from(".toolgate")]).unwrap());
        let tools = builtin_tools(Arc::clone(&ws), &opts);
        Fixture {
            _root: root,
            outside,
            ws,
            tools,
        }
    }

    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    /// A directory outside the workspace (canonical).
    pub fn outside(&self) -> PathBuf {
        self.outside.path().canonicalize().unwrap()
    }

    pub fn tool(&self, name: &str) -> &DynTool {
        self.tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    }

    /// Writes a file (creating parents) relative to the workspace root.
    pub fn put(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        std::os::unix::fs::symlink(target, self.root().join(rel)).unwrap();
    }

    /// `check` then `call`, as the gateway does; the structured data on success.
    pub async fn run(&self, name: &str, args: Value) -> Result<Value, ToolError> {
        self.run_with(name, args, ToolContext::for_test()).await
    }

    pub async fn run_with(
        &self,
        name: &str,
        args: Value,
        ctx: ToolContext,
    ) -> Result<Value, ToolError> {
        let tool = self.tool(name);
        tool.check(&args, &ctx)?;
        tool.call(args, ctx).await.map(|out| out.data)
    }

    /// Asserts that both `check` and `call` refuse with PolicyDenied; returns the message.
    pub async fn denied(&self, name: &str, args: Value) -> String {
        let tool = self.tool(name);
        let checked = tool.check(&args, &ToolContext::for_test());
        let called = tool.call(args.clone(), ToolContext::for_test()).await;
        match (checked, called) {
            (Err(ToolError::PolicyDenied(a)), Err(ToolError::PolicyDenied(b))) => {
                assert_eq!(a, b, "check and call disagree for {name} {args}");
                a
            }
            other => panic!("{name} {args}: expected PolicyDenied twice, got {other:?}"),
        }
    }

    /// Names in a directory, sorted (to show nothing was left behind).
    pub fn names_in(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root().join(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

pub fn invalid(message: &str) -> ToolError {
    ToolError::InvalidArguments(message.to_owned())
}
