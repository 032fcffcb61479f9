//! Starting a command and stopping everything it started, directly or through the sandbox
//! helper.
//!
//! Direct: `/bin/sh` leads a new process group, killed as a whole (see `group`); a daemon
//! that left the group with `setsid` escapes. Helper: the helper leads its own group and is
//! stopped only by closing its lifeline (its stdin), so it can sweep every descendant —
//! escaped daemons included — before it exits; it is never SIGKILLed unless it fails to
//! exit by itself.

use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, ChildStdin, Command};
use toolgate_core::ToolError;

use super::group::ProcessGroup;
use crate::sandbox::{HelperRequest, SandboxLauncher};

/// How long a helper whose lifeline was closed may take to sweep and exit before it is
/// killed outright.
const HELPER_EXIT_GRACE: Duration = Duration::from_secs(10);

/// A started command and the means to stop it.
#[derive(Debug)]
pub(super) struct Running {
    pub child: Child,
    stopper: Stopper,
}

#[derive(Debug)]
enum Stopper {
    Group(ProcessGroup),
    /// `None` once closed.
    Lifeline(Option<ChildStdin>),
}

/// `/bin/sh -c command` in `cwd` with exactly `env`, stdin null, output piped, and no
/// descriptor but stdio.
pub(super) fn direct(
    command: &str,
    cwd: &Path,
    env: Vec<(String, OsString)>,
) -> Result<Running, ToolError> {
    let mut command_line = Command::new("/bin/sh");
    // SAFETY: between fork and exec the closure makes only async-signal-safe system calls
    // (close_range, or fcntl per descriptor) and allocates nothing.
    #[allow(unsafe_code)]
    unsafe {
        command_line.pre_exec(|| {
            crate::sandbox::close_inherited_descriptors();
            Ok(())
        });
    }
    let child = command_line
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ToolError::failed(format!("cannot start /bin/sh: {e}")))?;
    let group = ProcessGroup::led_by(child.id());
    Ok(Running {
        child,
        stopper: Stopper::Group(group),
    })
}

/// The same command through the sandbox helper, started in `root` (the helper enters the
/// command's own directory itself, inside the view).
pub(super) fn sandboxed(
    launcher: &SandboxLauncher,
    request: &HelperRequest,
    command: &str,
    root: &Path,
    env: Vec<(String, OsString)>,
) -> Result<Running, ToolError> {
    let (program, lead) = launcher
        .argv()
        .map_err(|e| ToolError::Unavailable(format!("cannot locate the sandbox helper: {e}")))?;
    let request = serde_json::to_string(request)
        .map_err(|e| ToolError::failed(format!("cannot encode the sandbox request: {e}")))?;
    let mut child = Command::new(&program)
        .args(lead)
        .arg(request)
        .args(["/bin/sh", "-c", command])
        .current_dir(root)
        .env_clear()
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            ToolError::Unavailable(format!(
                "cannot start the sandbox helper {}: {e}",
                program.display()
            ))
        })?;
    let lifeline = child.stdin.take();
    Ok(Running {
        child,
        stopper: Stopper::Lifeline(lifeline),
    })
}

impl Running {
    pub(super) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// After the command (or the helper) exited: nothing it started may live on.
    pub(super) fn finished(&mut self) {
        match &mut self.stopper {
            // After a normal exit the group id stays reserved while any member lives; if
            // none does, the kill finds nothing.
            Stopper::Group(group) => {
                group.kill();
                group.disarm();
            }
            // The helper swept before exiting.
            Stopper::Lifeline(lifeline) => drop(lifeline.take()),
        }
    }

    /// On timeout or cancellation: stops everything and reaps the leader.
    pub(super) async fn stop(&mut self) {
        match &mut self.stopper {
            // The shell is not reaped yet, so its pid (the group id) cannot be reused.
            Stopper::Group(group) => {
                group.kill();
                let _ = self.child.wait().await;
                group.disarm();
            }
            Stopper::Lifeline(lifeline) => {
                drop(lifeline.take());
                let exited = tokio::time::timeout(HELPER_EXIT_GRACE, self.child.wait()).await;
                if exited.is_err() {
                    let _ = self.child.start_kill();
                    let _ = self.child.wait().await;
                }
            }
        }
    }
}
