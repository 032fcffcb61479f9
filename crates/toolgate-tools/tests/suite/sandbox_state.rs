//! What steers toolgate stays out of a sandboxed command's reach whether or not it exists
//! (issue 12, items 3 and 7): an absent `toolgate.toml` or data dir cannot be created from
//! inside, and no file descriptor the gateway inherited reaches the command.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tempfile::TempDir;
use toolgate_core::{DynTool, ToolContext, ToolError};
use toolgate_tools::{BuiltinOptions, SandboxMode, ShellOptions, Workspace, builtin_tools};

use super::fixture::test_launcher;
use super::sandbox::require_full_sandbox;

/// A workspace whose protected config file and data dir do not exist, and its tools.
struct Bare {
    root: TempDir,
    tools: Vec<DynTool>,
}

impl Bare {
    fn new(sandbox: SandboxMode) -> Self {
        let root = tempfile::tempdir().unwrap();
        let protected = vec![PathBuf::from("toolgate.toml"), PathBuf::from(".toolgate")];
        let ws = Arc::new(Workspace::new(root.path(), protected).unwrap());
        let opts = BuiltinOptions {
            shell: ShellOptions {
                sandbox,
                launcher: Some(test_launcher()),
                ..ShellOptions::default()
            },
            ..BuiltinOptions::default()
        };
        Bare {
            tools: builtin_tools(ws, &opts),
            root,
        }
    }

    async fn run(
        &self,
        name: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        let tool = self.tools.iter().find(|t| t.spec().name == name).unwrap();
        let ctx = ToolContext::for_test();
        tool.check(&args, &ctx)?;
        tool.call(args, ToolContext::for_test())
            .await
            .map(|o| o.data)
    }

    async fn sh(&self, command: &str) -> serde_json::Value {
        self.run("shell", json!({ "command": command }))
            .await
            .unwrap()
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Every way a command could plant a config file or a data dir that the next `toolgate`
/// started in this workspace would load.
const PLANTS: &[&str] = &[
    "printf '[shell]\\nsandbox = \"off\"\\n' > toolgate.toml",
    "printf x >> toolgate.toml",
    "rm -f toolgate.toml && printf x > toolgate.toml",
    "printf x > t && mv -f t toolgate.toml",
    "printf x > t && ln -f t toolgate.toml",
    "ln -sf /etc/hostname toolgate.toml",
    "mkdir -p .toolgate/logs",
    "rmdir .toolgate; mkdir .toolgate && touch .toolgate/toolgate.db",
    "mkdir d && mv -T d .toolgate",
    "touch .toolgate/toolgate.db",
];

#[tokio::test]
async fn an_absent_config_or_data_dir_cannot_be_planted_and_no_placeholder_stays() {
    require_full_sandbox();
    let ws = Bare::new(SandboxMode::Required);
    for plant in PLANTS {
        let out = ws.sh(plant).await;
        assert_eq!(
            out["sandbox"],
            json!("namespaces+landlock+seccomp"),
            "{out}"
        );
        let names = ws.names();
        assert!(
            !names
                .iter()
                .any(|n| n == "toolgate.toml" || n == ".toolgate"),
            "`{plant}` planted something: {names:?} {out}"
        );
        let _ = std::fs::remove_file(ws.root.path().join("t"));
        let _ = std::fs::remove_dir(ws.root.path().join("d"));
    }
    // Inside, both are there, empty (or unreadable) and read-only.
    let out = ws.sh("cat toolgate.toml; ls -A .toolgate; ls -A").await;
    assert_eq!(out["stdout"], json!(".toolgate\ntoolgate.toml\n"), "{out}");
    assert_eq!(ws.names(), Vec::<String>::new());
}

#[tokio::test]
async fn concurrent_commands_keep_the_cover_while_any_runs() {
    require_full_sandbox();
    let ws = Bare::new(SandboxMode::Required);
    // The first command makes the placeholders and ends while a second one, started after
    // it, still runs: the maker must not remove what still covers the path for the other.
    let short = ws.sh("sleep 1");
    let long = async {
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        ws.sh("sleep 2; printf x > toolgate.toml; mkdir .toolgate/x; true")
            .await
    };
    let (long, short) = tokio::join!(long, short);
    assert_eq!(short["exit_code"], json!(0));
    assert_eq!(long["exit_code"], json!(0), "{long}");
    let config = ws.root.path().join("toolgate.toml");
    assert!(
        std::fs::metadata(&config).map_or(true, |m| m.len() == 0),
        "{long}"
    );
    assert!(!ws.root.path().join(".toolgate/x").exists(), "{long}");
}

#[tokio::test]
async fn the_file_tools_refuse_an_absent_config_and_data_dir() {
    let ws = Bare::new(SandboxMode::Off);
    for (tool, args) in [
        (
            "write_file",
            json!({"path": "toolgate.toml", "content": "[shell]\n"}),
        ),
        (
            "write_file",
            json!({"path": "./toolgate.toml", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "sub/../toolgate.toml", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": ".toolgate/toolgate.db", "content": "x"}),
        ),
        ("write_file", json!({"path": ".toolgate", "content": "x"})),
    ] {
        let out = ws.run(tool, args.clone()).await;
        assert!(
            matches!(out, Err(ToolError::PolicyDenied(_))),
            "{tool} {args}: {out:?}"
        );
    }
    assert_eq!(ws.names(), Vec::<String>::new());
}

/// A file the gateway holds open without close-on-exec (as a caller's `7</etc/shadow`
/// leaves it) on a descriptor the command then tries to read.
fn inherited_secret() -> (TempDir, OwnedFd) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret");
    std::fs::write(&path, "the-inherited-secret\n").unwrap();
    let file = std::fs::File::open(&path).unwrap();
    // dup() gives a descriptor without FD_CLOEXEC, as a shell redirection would.
    #[allow(unsafe_code)]
    // SAFETY: dup of a valid descriptor; the new one is owned below.
    let fd = unsafe { libc::dup(file.as_raw_fd()) };
    assert!(fd > 2);
    #[allow(unsafe_code)]
    // SAFETY: `fd` was just returned by dup and is owned by nobody else.
    (dir, unsafe { OwnedFd::from_raw_fd(fd) })
}

#[tokio::test]
async fn inherited_descriptors_do_not_reach_the_command() {
    let (_dir, fd) = inherited_secret();
    let n = fd.as_raw_fd();
    // bash: dash takes only single-digit descriptors.
    let probe = format!("bash -c 'cat <&{n}'; ls /proc/self/fd");
    for mode in [SandboxMode::Required, SandboxMode::Off] {
        if mode == SandboxMode::Required {
            require_full_sandbox();
        }
        let ws = Bare::new(mode);
        let out = ws.sh(&probe).await;
        assert!(
            !out["stdout"]
                .as_str()
                .unwrap()
                .contains("the-inherited-secret"),
            "{mode:?}: {out}"
        );
        let fds: Vec<&str> = out["stdout"].as_str().unwrap().lines().collect();
        assert!(
            !fds.contains(&n.to_string().as_str()),
            "{mode:?}: descriptor {n} is open in the command: {out}"
        );
    }
}
