//! The OS sandbox of the `shell` tool (R-ACT-2): Landlock file-system and TCP rules,
//! seccomp filters, resource limits and a supervisor that leaves no process behind.
//!
//! # Layout
//! - [`policy`]: [`SandboxPolicy`], [`ResourceLimits`], [`SandboxMode`], [`SandboxLauncher`].
//! - [`probe`]: [`Sandbox::probe`] → [`SandboxSupport`], asked of the kernel.
//! - `helper`: the re-executed, single-threaded helper process; `confine`: what the
//!   command applies to itself before exec; `rules`: the Landlock ruleset; `seccomp`: the
//!   filters; `cgroup`: the per-command pids cgroup; `reaper`: supervision and the sweep.
//!
//! # How a command runs
//! The gateway is multi-threaded, and setting up Landlock or seccomp between `fork` and
//! `exec` there would allocate in a child of a multi-threaded process. So the gateway starts
//! a helper instead — its own binary again with [`HELPER_ARG`] (see
//! [`run_helper_if_invoked`]) — with the scrubbed environment, a pipe as stdin (the
//! lifeline) and the output pipes. The helper prepares everything, starts the command,
//! which confines itself and execs, and supervises it: it is a child subreaper, so even a
//! daemon that escaped the process group with `setsid` is its descendant and is killed when
//! the command ends or the gateway closes the lifeline (timeout, cancellation, or the
//! gateway's own death).
//!
//! ```no_run
//! // First thing in `main` of a binary that runs the shell tool with a sandbox:
//! toolgate_tools::sandbox::run_helper_if_invoked();
//! ```

mod cgroup;
mod confine;
mod egress_relay;
mod error;
mod helper;
mod inner;
mod mask;
pub mod policy;
pub mod probe;
mod reaper;
mod rules;
mod seccomp;
mod view;

use std::ffi::OsStr;

pub use confine::FAILURE_PREFIX as HELPER_FAILURE_PREFIX;
pub use egress_relay::EGRESS_PORT;
pub use error::SandboxError;
pub(crate) use helper::HelperRequest;
pub use helper::{HELPER_FAILURE, close_inherited_descriptors};
pub use policy::{HELPER_ARG, ResourceLimits, SandboxLauncher, SandboxMode, SandboxPolicy};
pub use probe::{ProcessLimit, Sandbox, SandboxSupport};
pub(crate) use view::checked_bwrap;
pub use view::shared_network_view;

/// The program and arguments that run `program args…` inside the sandbox as a **stdio
/// server** (an MCP server the gateway spawns): its stdin and stdout are passed through, it
/// stays in the helper's process group (kill that group to stop both), and it is swept when
/// the process that started the helper goes away. Landlock is required: on a kernel without
/// it the helper refuses to start the program (exit status [`HELPER_FAILURE`], the reason on
/// stderr) rather than running it unconfined.
pub fn stdio_command(
    launcher: &SandboxLauncher,
    policy: &SandboxPolicy,
    egress: Option<&std::path::Path>,
    program: &str,
    args: &[String],
) -> std::io::Result<(std::path::PathBuf, Vec<std::ffi::OsString>)> {
    let (exe, mut argv) = launcher.argv()?;
    let bwrap = view::checked_bwrap().map_err(std::io::Error::other)?;
    let request = HelperRequest {
        policy: policy.clone(),
        landlock: true,
        view: Some(bwrap),
        strict: true,
        stdio: true,
        cwd: None,
        egress: egress.map(std::path::Path::to_path_buf),
    };
    let request = serde_json::to_string(&request).map_err(std::io::Error::other)?;
    argv.push(request.into());
    argv.push(program.into());
    argv.extend(args.iter().map(Into::into));
    Ok((exe, argv))
}

/// If this process was started as the sandbox helper (its first argument is
/// [`HELPER_ARG`]), runs the helper and exits; otherwise returns at once.
///
/// Call it first in `main`, before any thread is started: the helper must be
/// single-threaded.
pub fn run_helper_if_invoked() {
    let mut args = std::env::args_os().skip(1);
    match args.next().as_deref() {
        Some(arg) if arg == OsStr::new(HELPER_ARG) => helper::main(args.collect()),
        Some(arg) if arg == OsStr::new(inner::INNER_ARG) => inner::main(args.collect()),
        _ => {}
    }
}
