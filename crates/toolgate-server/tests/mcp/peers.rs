//! Where the real peers live and how to drive them: the `toolgate` binary, the Python venv
//! (`mcp`, `fastmcp`), installed by `scripts/test.sh`.
//! A missing peer fails the test with the command that installs it — never a silent skip.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn must_exist(path: PathBuf, what: &str, install: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{what} is missing at {}: {install}",
        path.display()
    );
    path
}

/// The target directory this test binary was built into (`target/debug`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/debug")
        .to_path_buf()
}

pub fn toolgate() -> PathBuf {
    must_exist(
        target_dir().join("toolgate"),
        "the toolgate binary",
        "build it with `cargo build -p toolgate-cli` (scripts/test.sh builds the workspace)",
    )
}

pub fn python() -> PathBuf {
    must_exist(
        repo_root().join(".venv/bin/python"),
        "the Python MCP peers (mcp, fastmcp)",
        "run scripts/test.sh, which installs them into .venv",
    )
}

pub fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp_client.py")
}

/// Waits for `child` to exit within `limit`; kills it otherwise.
pub fn wait_output(mut child: Child, limit: Duration) -> (bool, String, String) {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let out = read_all(child.stdout.take());
            let err = read_all(child.stderr.take());
            return (status.success(), out, err);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let err = read_all(child.stderr.take());
            panic!("peer did not finish within {limit:?}; stderr:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_all(pipe: Option<impl std::io::Read>) -> String {
    let mut s = String::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_string(&mut s);
    }
    s
}

/// A JSON report printed by a peer script.
pub fn report(child: Child) -> Value {
    let (ok, out, err) = wait_output(child, Duration::from_secs(120));
    assert!(ok, "peer failed:\n{err}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("bad report {out:?}: {e}\n{err}"))
}

/// A server process that prints its URL on the first stdout line; killed on drop.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Server {
    pub fn start(mut command: Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().expect("stdout"))
            .read_line(&mut line)
            .expect("server banner");
        let start = line.find("http://").expect("URL in the banner");
        let url = line[start..]
            .split_whitespace()
            .next()
            .expect("URL")
            .trim_end_matches('/')
            .to_owned();
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
