//! Every path-taking tool refuses paths that leave the workspace or touch protected paths,
//! in `check` (before any approval) and again in `call`; refused writes change nothing.

use serde_json::{Value, json};

use super::fixture::Fixture;

mod hard_links;
mod race;

/// A workspace with links to `/etc` (only ever read through), to a temp file and directory
/// outside, to a missing file outside, a loop, and a real file and directory inside.
fn setup() -> Fixture {
    let fx = Fixture::new();
    fx.put("inside.txt", "inside\n");
    fx.put("dir/x.txt", "x\n");
    std::fs::write(fx.outside().join("target.txt"), "outside original\n").unwrap();
    fx.symlink("/etc", "etc_link");
    fx.symlink(fx.outside().join("target.txt"), "out_file");
    fx.symlink(fx.outside().join("not-yet.txt"), "dangling_out");
    fx.symlink(fx.outside(), "out_dir");
    fx.symlink("loop_b", "loop_a");
    fx.symlink("loop_a", "loop_b");
    fx
}

/// The argument object each tool takes for `path`.
fn args(tool: &str, path: &str) -> Value {
    match tool {
        "read_file" | "list_dir" => json!({"path": path}),
        "search_files" => json!({"path": path, "pattern": "x"}),
        "write_file" => json!({"path": path, "content": "pwned\n"}),
        "edit_file" => json!({"path": path, "old_string": "original", "new_string": "pwned"}),
        // Harmless even if confinement ever broke: tests must not write to /etc.
        "shell" => json!({"command": "pwd", "cwd": path}),
        other => panic!("no args for {other}"),
    }
}

const TOOLS: [&str; 6] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "search_files",
    "shell",
];

#[tokio::test]
async fn dot_dot_is_refused_outright() {
    let fx = setup();
    for tool in TOOLS {
        for path in ["../x", "a/../../x", "dir/../inside.txt"] {
            let message = fx.denied(tool, args(tool, path)).await;
            assert_eq!(
                message,
                format!(
                    "path `{path}` contains `..`; paths must stay inside the workspace and \
                     `..` components are refused outright"
                )
            );
        }
    }
}

#[tokio::test]
async fn absolute_paths_are_refused() {
    let fx = setup();
    let inside = fx.root().join("inside.txt").display().to_string();
    for tool in TOOLS {
        for path in ["/etc/passwd", inside.as_str()] {
            let message = fx.denied(tool, args(tool, path)).await;
            assert_eq!(
                message,
                format!("path `{path}` is absolute; use a path relative to the workspace root")
            );
        }
    }
}

#[tokio::test]
async fn symlinks_out_of_the_workspace_are_refused() {
    let fx = setup();
    let cases: &[(&str, &str)] = &[
        ("read_file", "etc_link/passwd"),
        ("read_file", "out_file"),
        ("write_file", "out_file"),
        ("write_file", "out_dir/new.txt"),
        ("write_file", "out_dir/sub/new.txt"),
        ("edit_file", "out_file"),
        ("list_dir", "etc_link"),
        ("list_dir", "out_dir"),
        ("search_files", "etc_link"),
        ("search_files", "out_file"),
        ("shell", "etc_link"),
        ("shell", "out_dir"),
    ];
    for (tool, path) in cases {
        let message = fx.denied(tool, args(tool, path)).await;
        assert_eq!(
            message,
            format!("path `{path}` resolves outside the workspace through a symlink"),
            "{tool} {path}"
        );
    }
    let outside: Vec<_> = std::fs::read_dir(fx.outside())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, ["target.txt"]);
    assert_eq!(
        std::fs::read_to_string(fx.outside().join("target.txt")).unwrap(),
        "outside original\n"
    );
}

#[tokio::test]
async fn a_dangling_symlink_is_never_written_through() {
    let fx = setup();
    let message = fx
        .denied("write_file", args("write_file", "dangling_out"))
        .await;
    assert_eq!(
        message,
        "path `dangling_out`: `dangling_out` is a symlink whose target does not exist; \
         writing through it could create a file outside the workspace"
    );
    assert!(!fx.outside().join("not-yet.txt").exists());
}

#[tokio::test]
async fn symlink_loops_are_refused() {
    let fx = setup();
    for tool in TOOLS {
        for path in ["loop_a", "loop_a/x"] {
            let message = fx.denied(tool, args(tool, path)).await;
            assert_eq!(message, format!("path `{path}` runs into a symlink loop"));
        }
    }
}

#[tokio::test]
async fn protected_paths_and_their_contents_are_refused() {
    let fx = setup();
    fx.symlink(".toolgate", "sneaky");
    for tool in TOOLS {
        for path in [
            ".toolgate",
            ".toolgate/audit.jsonl",
            "./.toolgate/new",
            "sneaky/audit.jsonl",
        ] {
            let message = fx.denied(tool, args(tool, path)).await;
            assert_eq!(
                message,
                format!(
                    "path `{path}` is inside the protected path `.toolgate`, which the \
                     built-in tools never read or write"
                ),
                "{tool} {path}"
            );
        }
    }
    assert_eq!(fx.get(".toolgate/audit.jsonl"), "{}\n");
    assert_eq!(fx.names_in(".toolgate"), ["audit.jsonl"]);
}

/// `[[policy.rules]]` see a path as the tool resolves it (`facts.paths`): a link inside the
/// workspace is followed to its canonical workspace-relative path; what the tool refuses
/// resolves to nothing (the gateway then normalises the spelling, and `check` refuses).
#[test]
fn policy_paths_are_the_resolved_workspace_paths() {
    let fx = setup();
    fx.put("secret/x", "original\n");
    fx.symlink("secret", "link");
    let paths = |tool: &str, path: &str| fx.tool(tool).policy_paths(&args(tool, path));
    let one = |p: &str| Some(vec![p.to_owned()]);
    let got = [
        paths("read_file", "link/x"),
        paths("read_file", "./secret//x"),
        paths("edit_file", "link/./x"),
        paths("write_file", "link/new.txt"),
        paths("list_dir", "link"),
        paths("search_files", "link/"),
        paths("list_dir", "."),
        paths("read_file", "dir/../secret/x"),
        paths("read_file", "out_file"),
        paths("read_file", ".toolgate/audit.jsonl"),
        paths("shell", "link"),
    ];
    assert_eq!(
        got,
        [
            one("secret/x"),
            one("secret/x"),
            one("secret/x"),
            one("secret/new.txt"),
            one("secret"),
            one("secret"),
            one("."),
            None,
            None,
            None,
            None,
        ]
    );
}
