//! Running a stdio server inside an OS sandbox (R-ACT-2 for servers the gateway spawns).
//!
//! This crate has no sandbox of its own: a server's `sandbox` ([`SandboxChoice`]) says
//! what the server may touch, and the program embedding the hub supplies a
//! [`StdioSandbox`] that turns the server's command into one that runs it confined (the
//! `toolgate` binary: the shell tool's Landlock + seccomp helper).
//!
//! - No `sandbox` key (the default): confined wherever the embedding program has a sandbox
//!   and the kernel supports it, with [`SandboxSpec::inferred`] — read access to the trees
//!   of its program, of the paths among its arguments and of its `cwd`, a writable state
//!   directory of its own, no network. Otherwise it runs unconfined, with a warning.
//! - A `sandbox` table: exactly that, and never started unconfined (without a
//!   [`StdioSandbox`], or when the wrapper fails, the attempt fails with the reason).
//! - `sandbox = "off"`: the explicit opt-out, shown by `toolgate doctor` and `mcp status`.
//!
//! No stdio server inherits toolgate's environment, sandboxed or not: it gets `PATH`,
//! `HOME`, `LANG` and `LC_ALL` (when set) and its own `env` table (where `${VAR}` passes a
//! named variable on), so no secret of the gateway leaks into it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `sandbox` table of a stdio server: `sandbox = { writable = ["/srv/data"] }`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSpec {
    /// Trees the server may read and write. None: only a private temporary directory (and a
    /// state directory the embedding program may add).
    pub writable: Vec<PathBuf>,
    /// More read-only (and executable) trees besides the system directories: the server's
    /// program and its libraries when they live elsewhere (a `node_modules`, a venv).
    pub readable: Vec<PathBuf>,
    /// Let the server open TCP connections and resolve names with the host's network (off:
    /// no network at all). Prefer `egress`.
    pub network: bool,
    /// Hosts the server may reach through toolgate's egress proxy (`HTTPS_PROXY`), and
    /// nothing else: `egress = ["registry.npmjs.org"]` lets `npx -y` fetch its package.
    /// Same entry forms as `[egress] allow_hosts`; every connection is audited.
    pub egress: Vec<toolgate_net::HostPattern>,
}

impl SandboxSpec {
    /// The default grant of a server without a `sandbox` key: read (and execute) the tree
    /// of its program, of every argument naming an existing path, and its `cwd`; for a
    /// package runner (`npx`, `uvx`, `pipx`, `bunx`), its registries through the egress
    /// proxy ([`package_runner_registries`]). A file's
    /// tree is its package (the directory holding the nearest `node_modules` above it) or
    /// else its directory; a directory is taken whole. Relative paths are resolved against
    /// `cwd` (or the current directory); a bare program name through `PATH`.
    pub fn inferred(command: &str, args: &[String], cwd: Option<&Path>) -> SandboxSpec {
        let base = cwd
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let program = if command.contains('/') {
            Some(base.join(command))
        } else {
            on_path(command)
        };
        let install = program.as_deref().map(install_of).unwrap_or_default();
        // The directory the program is named in, when it is a link elsewhere (a venv's
        // `bin/python`): the path must exist in the sandbox's view to be followed.
        let named_dir = program
            .as_deref()
            .and_then(Path::parent)
            .and_then(|d| d.canonicalize().ok());
        let mut readable: Vec<PathBuf> = program
            .into_iter()
            .chain(args.iter().map(|a| base.join(a)))
            .filter_map(|p| tree_of(&p))
            .chain(install)
            .chain(named_dir)
            .chain(cwd.and_then(|c| base.join(c).canonicalize().ok()))
            .collect();
        readable.sort();
        readable.dedup();
        SandboxSpec {
            writable: Vec::new(),
            readable,
            network: false,
            egress: package_runner_registries(command),
        }
    }
}

/// A package runner's registries: what `npx -y <pkg>`, `uvx <pkg>`, `pipx run <pkg>` and
/// `bunx <pkg>` fetch from, through the egress proxy (their caches land in the server's
/// state directory, its `HOME`). Nothing for any other program.
pub fn package_runner_registries(command: &str) -> Vec<toolgate_net::HostPattern> {
    let name = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    let hosts: &[&str] = match name {
        "npx" | "bunx" => &["registry.npmjs.org"],
        "uvx" | "pipx" => &["pypi.org", "files.pythonhosted.org"],
        _ => &[],
    };
    hosts.iter().filter_map(|h| h.parse().ok()).collect()
}

/// Whether `command` names a program that exists: a path (relative ones against `cwd`, or
/// the current directory), or a name found in `PATH`.
pub(crate) fn program_exists(command: &str, cwd: Option<&Path>) -> bool {
    if command.contains('/') {
        let base = cwd
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        base.join(command).is_file()
    } else {
        on_path(command).is_some()
    }
}

/// `name` found in `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// What an interpreter needs beside its own directory, for the program as named and as
/// resolved (a venv's `bin/python` is a symlink into the interpreter's installation): when it
/// sits in a `bin` directory, the libraries of that prefix (`lib`, `lib64`, `libexec`, where
/// Python keeps its standard library and a venv its site-packages) and a venv's `pyvenv.cfg`.
/// Never the prefix itself: for `~/bin/tool` that would be the whole home directory.
fn install_of(program: &Path) -> Vec<PathBuf> {
    let named = program.to_path_buf();
    let resolved = program.canonicalize().ok();
    [Some(named), resolved]
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let bin = p.parent()?;
            (bin.file_name()? == "bin").then(|| bin.parent().map(Path::to_path_buf))?
        })
        .flat_map(|prefix| {
            ["lib", "lib64", "libexec", "pyvenv.cfg"]
                .into_iter()
                .map(move |entry| prefix.join(entry))
        })
        .filter_map(|p| p.canonicalize().ok())
        .collect()
}

/// The tree a program or argument path needs readable (see [`SandboxSpec::inferred`]).
fn tree_of(path: &Path) -> Option<PathBuf> {
    let path = path.canonicalize().ok()?;
    if path.is_dir() {
        return Some(path);
    }
    let dir = path.parent()?;
    let package = dir
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .and_then(Path::parent);
    Some(package.unwrap_or(dir).to_path_buf())
}

/// A stdio server's `sandbox` key: absent (confined by default where possible), a table
/// (confined as it says, or not started), or `"off"`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SandboxChoice {
    /// No `sandbox` key: [`SandboxSpec::inferred`] where a sandbox is available.
    #[default]
    Default,
    /// `sandbox = { … }`: required.
    Spec(SandboxSpec),
    /// `sandbox = "off"`: runs with toolgate's own file-system and network access.
    Off,
}

impl SandboxChoice {
    pub fn is_default(&self) -> bool {
        *self == SandboxChoice::Default
    }

    /// How `mcp status` and `doctor` describe it: `default`, `configured` or `off`.
    pub fn label(&self) -> &'static str {
        match self {
            SandboxChoice::Default => "default",
            SandboxChoice::Spec(_) => "configured",
            SandboxChoice::Off => "off",
        }
    }
}

impl Serialize for SandboxChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SandboxChoice::Default => s.serialize_none(),
            SandboxChoice::Spec(spec) => spec.serialize(s),
            SandboxChoice::Off => s.serialize_str("off"),
        }
    }
}

impl<'de> Deserialize<'de> for SandboxChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = SandboxChoice;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"off\" or a table such as { writable = [\"data\"] }")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SandboxChoice, E> {
                match v {
                    "off" => Ok(SandboxChoice::Off),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<SandboxChoice, A::Error> {
                SandboxSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(SandboxChoice::Spec)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The command line that runs one stdio server confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxedCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Set in the server's environment on top of its own (the egress proxy's address).
    pub env: Vec<(String, String)>,
}

/// Why a server cannot be started confined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// This machine cannot confine a process (no user namespaces, no bubblewrap, …): why.
    #[error("{0}")]
    Unavailable(String),
    /// A `sandbox.writable` or `readable` entry cannot be granted as written.
    #[error("{0}")]
    Grant(String),
    /// The server's egress proxy could not be started.
    #[error("cannot start the egress proxy of {server}: {why}")]
    Proxy { server: String, why: String },
    /// The sandbox helper (toolgate's own binary) could not be found.
    #[error("cannot locate the sandbox helper: {0}")]
    Helper(String),
}

/// Supplied by the embedding program; see the module docs.
pub trait StdioSandbox: Send + Sync + std::fmt::Debug {
    /// Whether this machine can confine a server at all (`Err`: why not). A server without
    /// a `sandbox` key then runs unconfined, with a warning; one with a table fails.
    fn available(&self) -> Result<(), SandboxError> {
        Ok(())
    }

    /// The command that runs `command args…` (in `cwd`, if given) for server `server`,
    /// confined as `spec` says; `Err` says why it cannot be.
    fn wrap(
        &self,
        server: &str,
        spec: &SandboxSpec,
        command: &str,
        args: &[String],
        cwd: Option<&Path>,
    ) -> Result<SandboxedCommand, SandboxError>;
}

/// The variables a stdio server gets from toolgate's environment (besides its `env`).
pub(crate) const PASSED_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL"];

#[cfg(test)]
mod tests {

    #[test]
    fn package_runners_get_their_registries_and_nothing_else() {
        let hosts = |command: &str| {
            package_runner_registries(command)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(hosts("npx"), ["registry.npmjs.org"]);
        assert_eq!(hosts("/usr/bin/npx"), ["registry.npmjs.org"]);
        assert_eq!(hosts("uvx"), ["pypi.org", "files.pythonhosted.org"]);
        assert!(hosts("node").is_empty());
        assert!(hosts("python3").is_empty());
        assert_eq!(
            SandboxSpec::inferred("npx", &["-y".to_owned()], None).egress,
            package_runner_registries("npx")
        );
    }
    use super::*;

    /// A Python installed under its own prefix (pyenv) and a venv pointing at it, as a stdio
    /// server is often started: both libraries are granted, neither prefix whole.
    #[test]
    fn an_interpreter_in_a_venv_gets_its_libraries_not_its_prefix() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let prefix = root.join("pyenv/3.11");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        std::fs::create_dir_all(prefix.join("lib/python3.11")).unwrap();
        std::fs::write(prefix.join("bin/python3"), "").unwrap();
        std::fs::create_dir_all(prefix.join("secrets")).unwrap();
        let venv = root.join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(venv.join("lib/python3.11/site-packages")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = x\n").unwrap();
        std::os::unix::fs::symlink(prefix.join("bin/python3"), venv.join("bin/python")).unwrap();

        let spec =
            SandboxSpec::inferred(venv.join("bin/python").to_str().unwrap(), &[], Some(&root));
        for granted in [
            prefix.join("bin"),
            prefix.join("lib"),
            venv.join("lib"),
            venv.join("pyvenv.cfg"),
        ] {
            assert!(
                spec.readable.contains(&granted),
                "{granted:?} in {:?}",
                spec.readable
            );
        }
        assert!(!spec.readable.contains(&prefix), "{:?}", spec.readable);
        assert!(!spec.readable.contains(&venv), "{:?}", spec.readable);
    }
}
