//! toolgate as a filter's writer: a reader that quits early (`| grep -q`, `| head`) closes
//! stdout, which must end the command quietly — no panic, no 101, nothing on stderr — and
//! log lines carry no colour codes into a pipe or a file.

use std::process::Stdio;

use serde_json::json;

use super::harness::{Env, Run};

/// Runs `toolgate ARGS` with stdout a pipe whose read end is already closed.
fn run_into_closed_pipe(env: &Env, args: &[&str]) -> Run {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = env
        .command()
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("spawn toolgate");
    Run::from_output(out)
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    // Something in the audit log and the approvals for the readers below.
    env.call("read_file", &json!({"path": "a.txt"}))
        .assert_code(0);
    let commands: [(&[&str], i32); 12] = [
        // Issue 30, 30.23: `audit export | head -c1` exited 1.
        (&["audit", "export"], 0),
        (&["tools", "list", "--json"], 0),
        (&["tools", "list"], 0),
        (&["tools", "search", "read a file"], 0),
        (&["tools", "search", "read a file", "--json"], 0),
        (&["audit", "query", "--json"], 0),
        (&["audit", "tail"], 0),
        (&["audit", "tail", "--json"], 0),
        (&["approvals", "list", "--json"], 0),
        (&["config", "show"], 0),
        (&["--help"], 0),
        (
            &[
                "call",
                "read_file",
                "--args",
                r#"{"path":"a.txt"}"#,
                "--no-prompt",
            ],
            0,
        ),
    ];
    for (args, code) in commands {
        let run = run_into_closed_pipe(&env, args);
        assert_eq!(run.code, code, "`toolgate {}`: {run:#?}", args.join(" "));
        assert_eq!(run.stderr, "", "`toolgate {}`", args.join(" "));
    }
    // A failed call keeps its own status (2) on a closed stdout too.
    let run = run_into_closed_pipe(
        &env,
        &[
            "call",
            "read_file",
            "--args",
            r#"{"path":"missing.txt"}"#,
            "--no-prompt",
        ],
    );
    assert_eq!((run.code, run.stderr.as_str()), (2, ""), "{run:#?}");
}

#[test]
fn logs_into_a_pipe_have_no_colour_codes() {
    // A server that cannot start: its warning is logged on stderr.
    let env =
        Env::with_config("[[mcp.servers]]\nname = \"bad\"\ncommand = \"/nonexistent/server\"\n");
    let run = env.run(&["tools", "list"]);
    run.assert_code(0);
    assert!(
        run.stderr.contains("WARN") && run.stderr.contains("MCP server unavailable"),
        "expected a logged warning: {run:#?}"
    );
    assert!(
        !run.stderr.contains('\x1b'),
        "colour codes in a pipe: {:?}",
        run.stderr
    );
}
