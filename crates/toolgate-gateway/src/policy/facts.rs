//! `facts`: what a built-in tool's call does, in one canonical spelling, so a rule matches
//! the act and not the wording. `./secret/x`, `secret//x` and `a/../secret/x` are all the
//! path `secret/x`; `/bin/rm -rf x`, `\rm`, `r''m` and `env rm` all run `rm`.
//!
//! A built-in file tool resolves its path in the workspace for the policy layer
//! ([`toolgate_core::Tool::policy_paths`]): a symlink inside the workspace (`link ->
//! secret`) is followed, and the path is the canonical workspace-relative one. Where the
//! tool cannot resolve it (a missing file, a path its own check refuses) and in `toolgate
//! policy test`, which opens no workspace, the arguments are normalised lexically. Either
//! way the tree can change before the call runs: a rule over paths is a guard rail, the
//! workspace's confinement the boundary.

use serde::Serialize;
use serde_json::Value;

use super::shell_parse;

/// The canonical facts of one call. Empty for tools that are not built in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Every path argument, workspace-relative and normalised: no `./`, no `//`, `..`
    /// resolved lexically, the root as `.`. A path that climbs above the root keeps its
    /// leading `..` (the workspace refuses it).
    pub paths: Vec<String>,
    /// The tool reaches everything below its paths (`search_files`, `list_dir` with
    /// `recursive`). The shell's reach is the sandbox's to bound, not a rule's.
    pub recursive: bool,
    /// For `shell`: every simple command's words after quote removal.
    pub argv: Vec<Vec<String>>,
    /// For `shell`: every word of every simple command, flattened (`-delete`, `-rf`).
    pub words: Vec<String>,
    /// For `shell`: the basename of every program the command runs, through wrappers
    /// (`env`, `xargs`, `busybox`, `sudo`, `find -exec`, …).
    pub executables: Vec<String>,
    /// For `shell`: the command holds what a static reading cannot follow — `eval`, `$(…)`,
    /// backticks, `sh -c`, an interpreter given code, an expansion or glob as a program.
    pub shell_dynamic: bool,
}

/// The path arguments of each built-in tool, with their schema default.
const PATH_ARGS: [(&str, &str, Option<&str>); 6] = [
    ("read_file", "path", None),
    ("write_file", "path", None),
    ("edit_file", "path", None),
    ("list_dir", "path", Some(".")),
    ("search_files", "path", Some(".")),
    ("shell", "cwd", Some(".")),
];

impl Facts {
    /// The facts of a call of `tool` from `source` with `args`; `resolved`, when the tool
    /// resolved its paths in the workspace, replaces the lexical normalisation.
    pub fn of(tool: &str, source: &str, args: &Value, resolved: Option<&[String]>) -> Facts {
        let mut facts = Facts::default();
        if source != "builtin" {
            return facts;
        }
        if let Some(paths) = resolved {
            facts.paths = paths.to_vec();
        }
        for (name, key, default) in PATH_ARGS {
            if resolved.is_some() {
                break;
            }
            if name != tool {
                continue;
            }
            let path = args.get(key).and_then(Value::as_str).or(default);
            if let Some(path) = path {
                facts.paths.push(normalise(path));
            }
        }
        facts.recursive = match tool {
            "search_files" => true,
            "list_dir" => args.get("recursive").and_then(Value::as_bool) == Some(true),
            _ => false,
        };
        if tool == "shell"
            && let Some(command) = args.get("command").and_then(Value::as_str)
        {
            let shell = shell_parse::parse(command);
            facts.words = shell.argv.iter().flatten().cloned().collect();
            facts.argv = shell.argv;
            facts.executables = shell.executables;
            facts.shell_dynamic = shell.dynamic;
        }
        facts
    }
}

/// A workspace-relative path in one spelling; see [`Facts::paths`].
pub fn normalise(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}
