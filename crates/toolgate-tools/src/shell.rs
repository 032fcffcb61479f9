//! `shell`: run `/bin/sh -c <command>` in a workspace directory (R-ACT-2).
//!
//! Output: `{exit_code, signal?, stdout, stderr, stdout_truncated, stderr_truncated,
//! stdout_bytes, stderr_bytes, duration_ms, sandbox}` — `exit_code` is `null` and `signal`
//! present when the shell died from a signal; `*_bytes` count everything the stream
//! produced, `stdout`/`stderr` hold its first `output_cap_bytes` (lossy UTF-8); `sandbox` is
//! `landlock+seccomp`, `seccomp` (the kernel lacks Landlock) or `none`. A non-zero exit is a
//! successful call: the model reads `exit_code`.
//!
//! Sequence: resolve `cwd` → start the command with stdin null and an environment rebuilt
//! from an allowlist (no inherited secrets), inside the OS sandbox (see [`crate::sandbox`])
//! when the [`SandboxMode`] and the kernel allow → drain both pipes while waiting for it,
//! the timeout or cancellation → stop everything it started (also after a normal exit:
//! background processes never outlive the call, so a timeout cannot be dodged with `&`;
//! in the sandbox not even with `setsid`) → collect output, waiting only briefly for pipes
//! still held open.
//!
//! With the sandbox off (or no helper configured) only `cwd` is confined: the command has
//! the gateway's own file-system and network access.

mod capture;
mod group;
mod launch;
mod plan;

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolgate_core::{CancellationToken, Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use self::capture::{Captured, capture};
use self::launch::Running;
use self::plan::SandboxPlan;
use crate::Workspace;
use crate::args::{decode, idempotency_key_schema};
use crate::sandbox::{
    HELPER_FAILURE, HELPER_FAILURE_PREFIX, HelperRequest, ResourceLimits, Sandbox, SandboxLauncher,
    SandboxMode, SandboxPolicy,
};

const NAME: &str = "shell";
/// How long to keep reading pipes after the group was killed (a process that left the group
/// with `setsid` may hold them open forever).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// PATH for the child when the gateway itself has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Limits and environment of the shell tool.
#[derive(Debug, Clone)]
pub struct ShellOptions {
    /// Used when the call gives no `timeout_secs` (default 60 s).
    pub default_timeout: Duration,
    /// Largest `timeout_secs` a call may ask for (default 600 s).
    pub max_timeout: Duration,
    /// Bytes kept per stream (default 64 KiB); the rest is drained and counted.
    pub output_cap_bytes: usize,
    /// Extra environment variable names passed through from the gateway's environment,
    /// on top of PATH, LANG, LC_ALL and TZ.
    pub env_allowlist: Vec<String>,
    /// Whether commands must, may or must not run in the OS sandbox.
    pub sandbox: SandboxMode,
    /// Let sandboxed commands use the network (TCP, UDP, DNS).
    pub allow_network: bool,
    /// Resource limits of sandboxed commands.
    pub limits: ResourceLimits,
    /// Read-only trees sandboxed commands may also use (relative: to the workspace root).
    pub extra_read_paths: Vec<PathBuf>,
    /// How to start the sandbox helper; `None` (the default): no helper, so no sandbox —
    /// [`SandboxMode::Required`] then refuses every command.
    pub launcher: Option<SandboxLauncher>,
    /// Network through the egress proxy, per role (inside the namespace view only):
    /// commands of a role with a proxy get `HTTP_PROXY`/`HTTPS_PROXY` pointing at it and
    /// no other way out. `None`: no network (unless `allow_network`).
    pub egress: Option<Arc<dyn ShellEgress>>,
}

/// The egress proxy a role's shell commands go through.
pub trait ShellEgress: Send + Sync + std::fmt::Debug {
    /// The proxy's Unix socket for `role`, or `None`: no network for that role.
    fn socket_for(&self, role: &str) -> Option<PathBuf>;
}

impl Default for ShellOptions {
    fn default() -> Self {
        ShellOptions {
            default_timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(600),
            output_cap_bytes: 64 * 1024,
            env_allowlist: Vec::new(),
            sandbox: SandboxMode::default(),
            allow_network: false,
            limits: ResourceLimits::default(),
            extra_read_paths: Vec::new(),
            launcher: None,
            egress: None,
        }
    }
}

/// Runs shell commands in the workspace.
#[derive(Debug)]
pub struct ShellTool {
    ws: Arc<Workspace>,
    opts: ShellOptions,
    plan: SandboxPlan,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellArgs {
    command: String,
    #[serde(default = "dot")]
    cwd: String,
    timeout_secs: Option<u64>,
    /// Acted on by the gateway (R-EXE-3); accepted and ignored here.
    #[serde(default, rename = "idempotency_key")]
    _idempotency_key: Option<String>,
}

fn dot() -> String {
    ".".to_owned()
}

impl ShellTool {
    /// Builds the tool; asks the kernel once what sandbox it offers and, when the mode is
    /// `IfAvailable` and the sandbox is incomplete, logs a warning (once per process).
    pub fn new(ws: Arc<Workspace>, opts: ShellOptions) -> Self {
        let (plan, warning) =
            SandboxPlan::decide(opts.sandbox, opts.launcher.as_ref(), &Sandbox::probe());
        if let Some(warning) = warning {
            plan::warn_once(&warning);
        }
        let max_secs = opts.max_timeout.as_secs().max(1);
        let walls = match (&plan, opts.allow_network) {
            (SandboxPlan::Helper { landlock: true, .. }, false) => {
                " It runs in a sandbox: it can read the system directories but write only the \
                 workspace and $TMPDIR, and has no network."
            }
            (SandboxPlan::Helper { landlock: true, .. }, true) => {
                " It runs in a sandbox: it can read the system directories but write only the \
                 workspace and $TMPDIR."
            }
            _ => "",
        };
        let description = format!(
            "Run a command with /bin/sh -c in a workspace directory and return its exit code, \
             stdout and stderr (each capped at {cap} bytes). Use it for builds, tests, git and \
             programs that have no dedicated tool. Do not use it to read, write, edit, list \
             or search files: the file tools are safer and cheaper. There is no stdin, so \
             interactive programs fail; the environment is minimal (PATH, locale, HOME is the \
             workspace root) and holds no credentials.{walls} The command is killed after \
             timeout_secs (default {default}, at most {max_secs}); background processes are \
             killed when it finishes. A non-zero exit code is a normal result, not an error.",
            cap = opts.output_cap_bytes,
            default = opts.default_timeout.as_secs(),
        );
        let spec = ToolSpec::new(
            NAME,
            description,
            json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Shell command line, e.g. `cargo test 2>&1 | tail -n 50`."
                    },
                    "cwd": {
                        "type": "string",
                        "minLength": 1,
                        "default": ".",
                        "description": "Working directory relative to the workspace root."
                    },
                    "timeout_secs": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": max_secs,
                        "description": "Kill the command after this many seconds."
                    },
                    "idempotency_key": idempotency_key_schema()
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Dangerous)
        .with_annotations(Annotations {
            title: Some("Run shell command".to_owned()),
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            idempotent_hint: Some(false),
            open_world_hint: Some(false),
        })
        .with_tags(["shell"]);
        ShellTool {
            ws,
            opts,
            plan,
            spec,
        }
    }

    /// Refuses every call when the sandbox is required but unavailable.
    fn sandbox_ready(&self) -> Result<(), ToolError> {
        match &self.plan {
            SandboxPlan::Refuse(why) => Err(ToolError::Unavailable(why.clone())),
            _ => Ok(()),
        }
    }

    /// Starts the command as the plan says.
    fn start(&self, command: &str, cwd: &Path, role: &str) -> Result<Running, ToolError> {
        let mut env = self.environment();
        match &self.plan {
            SandboxPlan::Direct => launch::direct(command, cwd, env),
            SandboxPlan::Helper {
                launcher,
                landlock,
                view,
            } => {
                let root = self.ws.root();
                // Entered by descriptor beneath the workspace inside the view: never
                // re-resolved by path in the gateway's view after the check.
                let rel = cwd.strip_prefix(root).map_err(|_| {
                    ToolError::InvalidArguments(format!(
                        "cwd {} is outside the workspace",
                        cwd.display()
                    ))
                })?;
                let request = HelperRequest {
                    policy: SandboxPolicy {
                        workspace: root.to_path_buf(),
                        allow_network: self.opts.allow_network,
                        limits: self.opts.limits,
                        extra_read_paths: self
                            .opts
                            .extra_read_paths
                            .iter()
                            .map(|p| root.join(p))
                            .collect(),
                        extra_write_paths: Vec::new(),
                        protected_paths: self.ws.protected().to_vec(),
                    },
                    landlock: *landlock,
                    view: match view {
                        true => {
                            Some(crate::sandbox::checked_bwrap().map_err(ToolError::Unavailable)?)
                        }
                        false => None,
                    },
                    strict: self.opts.sandbox == SandboxMode::Required,
                    stdio: false,
                    cwd: Some(rel.to_path_buf()),
                    egress: None,
                };
                let mut request = request;
                if *view
                    && let Some(socket) = self.opts.egress.as_ref().and_then(|e| e.socket_for(role))
                {
                    let proxy = format!("http://127.0.0.1:{}", crate::sandbox::EGRESS_PORT);
                    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
                        env.push((name.to_owned(), proxy.clone().into()));
                    }
                    request.egress = Some(socket);
                }
                launch::sandboxed(launcher, &request, command, root, env)
            }
            SandboxPlan::Refuse(why) => Err(ToolError::Unavailable(why.clone())),
        }
    }

    fn timeout(&self, args: &ShellArgs) -> Result<Duration, ToolError> {
        let max = self.opts.max_timeout.as_secs().max(1);
        match args.timeout_secs {
            None => Ok(self.opts.default_timeout),
            Some(secs) if (1..=max).contains(&secs) => Ok(Duration::from_secs(secs)),
            Some(secs) => Err(ToolError::InvalidArguments(format!(
                "timeout_secs must be between 1 and {max}, got {secs}"
            ))),
        }
    }

    fn working_dir(&self, args: &ShellArgs) -> Result<std::path::PathBuf, ToolError> {
        let dir = self.ws.resolve_existing(&args.cwd)?;
        if !dir.is_dir() {
            return Err(ToolError::InvalidArguments(format!(
                "cwd `{}` is not a directory",
                args.cwd
            )));
        }
        Ok(dir)
    }

    /// PATH, LANG, LC_ALL, TZ and the allowlisted names from the gateway's environment,
    /// then TERM=dumb and HOME=<workspace root>.
    fn environment(&self) -> Vec<(String, OsString)> {
        let mut env = vec![(
            "PATH".to_owned(),
            std::env::var_os("PATH").unwrap_or_else(|| FALLBACK_PATH.into()),
        )];
        let passed = ["LANG", "LC_ALL", "TZ"]
            .into_iter()
            .chain(self.opts.env_allowlist.iter().map(String::as_str));
        for name in passed {
            if let Some(value) = std::env::var_os(name) {
                env.push((name.to_owned(), value));
            }
        }
        env.push(("TERM".to_owned(), "dumb".into()));
        env.push(("HOME".to_owned(), self.ws.root().as_os_str().to_owned()));
        env
    }

    async fn run(
        &self,
        command: &str,
        cwd: &Path,
        role: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, ToolError> {
        let started = Instant::now();
        let mut running = self.start(command, cwd, role)?;
        let stop_reading = CancellationToken::new();
        let cap = self.opts.output_cap_bytes;
        let stdout = tokio::spawn(capture(
            running.child.stdout.take(),
            cap,
            stop_reading.clone(),
        ));
        let stderr = tokio::spawn(capture(
            running.child.stderr.take(),
            cap,
            stop_reading.clone(),
        ));

        let ended = tokio::select! {
            status = running.wait() => Ok(status),
            () = tokio::time::sleep(timeout) => Err(ToolError::Timeout),
            () = cancel.cancelled() => Err(ToolError::Cancelled),
        };
        let status = match ended {
            Ok(status) => {
                running.finished();
                status
            }
            Err(stopped) => {
                running.stop().await;
                stop_reading.cancel();
                return Err(stopped);
            }
        };
        let status =
            status.map_err(|e| ToolError::failed(format!("cannot wait for /bin/sh: {e}")))?;

        let grace = tokio::time::sleep(DRAIN_GRACE);
        tokio::pin!(grace);
        let stdout = finish(stdout, &stop_reading, &mut grace).await;
        let stderr = finish(stderr, &stop_reading, &mut grace).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Some(why) = self.helper_failure(status, &stderr) {
            return Err(ToolError::Unavailable(why));
        }

        let mut out = Map::new();
        out.insert("exit_code".into(), json!(status.code()));
        if let Some(signal) = status.signal() {
            out.insert("signal".into(), json!(signal));
        }
        out.insert("stdout".into(), json!(stdout.text()));
        out.insert("stderr".into(), json!(stderr.text()));
        out.insert("stdout_truncated".into(), json!(stdout.truncated()));
        out.insert("stderr_truncated".into(), json!(stderr.truncated()));
        out.insert("stdout_bytes".into(), json!(stdout.total));
        out.insert("stderr_bytes".into(), json!(stderr.total));
        out.insert("duration_ms".into(), json!(duration_ms));
        out.insert("sandbox".into(), json!(self.plan.label()));
        Ok(Value::Object(out))
    }

    /// The helper's own explanation when it could not start the command.
    fn helper_failure(
        &self,
        status: std::process::ExitStatus,
        stderr: &Captured,
    ) -> Option<String> {
        if !matches!(self.plan, SandboxPlan::Helper { .. }) || status.code() != Some(HELPER_FAILURE)
        {
            return None;
        }
        let text = stderr.text();
        let lines: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix(HELPER_FAILURE_PREFIX))
            .collect();
        (!lines.is_empty()).then(|| {
            format!(
                "the shell sandbox could not start the command: {}",
                lines.join("; ")
            )
        })
    }
}

/// Waits for a capture task until `grace` runs out, then tells it to stop and takes what
/// it has.
async fn finish(
    mut task: tokio::task::JoinHandle<Captured>,
    stop: &CancellationToken,
    grace: &mut std::pin::Pin<&mut tokio::time::Sleep>,
) -> Captured {
    tokio::select! {
        done = &mut task => return done.unwrap_or_default(),
        () = grace.as_mut() => stop.cancel(),
    }
    task.await.unwrap_or_default()
}

fn nonblank(command: &str) -> Result<(), ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::InvalidArguments("command is empty".to_owned()));
    }
    Ok(())
}

#[async_trait]
impl Tool for ShellTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: ShellArgs = decode(NAME, args)?;
        self.sandbox_ready()?;
        nonblank(&args.command)?;
        self.timeout(&args)?;
        self.working_dir(&args).map(drop)
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ShellArgs = decode(NAME, &args)?;
        self.sandbox_ready()?;
        nonblank(&args.command)?;
        let timeout = self.timeout(&args)?;
        let cwd = self.working_dir(&args)?;
        self.run(&args.command, &cwd, &ctx.role, timeout, &ctx.cancel)
            .await
            .map(ToolOutput::json)
    }
}
