//! MCP elicitation through the approval channel, end to end: server-everything's
//! `trigger-elicitation-request` asks for a form mid-call; the request appears in
//! `toolgate approvals list` as `mcp__everything__elicitation`; approving it from another
//! process sends the form's defaults, denying it declines.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::harness::{Env, Run};

fn peer(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/node_modules")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: run scripts/test.sh",
        p.display()
    );
    p.to_string_lossy().into_owned()
}

fn env() -> Env {
    Env::with_config(&format!(
        "[approvals]\npoll_millis = 20\n\n\
         [roles.default]\nrules = [{{ tool = \"mcp__everything__*\", decision = \"allow\" }}]\n\n\
         [[mcp.servers]]\nname = \"everything\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n",
        peer(".bin/node"),
        peer("@modelcontextprotocol/server-everything/dist/index.js"),
    ))
}

/// Calls the tool in the background, waits for its elicitation to be listed, decides it
/// with `decision` (`approve` or `deny`) and returns the call's run.
fn elicit_and(env: &Env, decision: &str) -> Run {
    let mut child = env
        .command()
        .args([
            "call",
            "mcp__everything__trigger-elicitation-request",
            "--args",
            "{}",
            "--no-prompt",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolgate");
    let deadline = Instant::now() + Duration::from_secs(60);
    let id = loop {
        let listed = env.run(&["approvals", "list", "--json"]);
        if listed.code == 0
            && let Some(req) = listed.json().as_array().and_then(|a| {
                a.iter()
                    .find(|r| r["tool"] == "mcp__everything__elicitation")
                    .cloned()
            })
        {
            assert_eq!(
                req["arguments"]["message"],
                "Please provide inputs for the following fields:"
            );
            assert_eq!(req["arguments"]["form"]["integer"], 42);
            break req["id"].as_str().expect("an id").to_owned();
        }
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().expect("output");
            panic!(
                "the call ended ({status}) before its elicitation was listed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(Instant::now() < deadline, "no elicitation request appeared");
        std::thread::sleep(Duration::from_millis(50));
    };
    let decided = env.run(&["approvals", decision, &id]);
    decided.assert_code(0);
    Run::from_output(child.wait_with_output().expect("wait"))
}

#[test]
fn an_approved_elicitation_sends_the_forms_defaults() {
    let env = env();
    let run = elicit_and(&env, "approve");
    run.assert_code(0);
    assert!(
        run.stdout.contains("It was a dark and stormy night."),
        "{run:#?}"
    );
}

#[test]
fn a_denied_elicitation_is_declined() {
    let env = env();
    let run = elicit_and(&env, "deny");
    assert!(run.stdout.to_lowercase().contains("decline"), "{run:#?}");
    assert!(!run.stdout.contains("stormy night"), "{run:#?}");
}
