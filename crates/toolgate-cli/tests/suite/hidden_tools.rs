//! Issue 13, item 3: a tool hidden from a role stays hidden on every front end, also in the
//! "did you mean" hint of an unknown-tool error. The role `narrow` sees `read_file` and
//! `list_dir`; it asks for `shel` (one edit from the hidden `shell`) and `read_fil`.

use serde_json::{Value, json};

use super::harness::{Env, http};

const CONFIG: &str = "[roles.narrow]\ntools = [\"read_file\", \"list_dir\"]\n\n\
                      [server.anonymous]\nrole = \"narrow\"\n";

fn assert_hides_shell(error: &Value) {
    assert_eq!(error["code"], json!("unknown_tool"), "{error}");
    assert!(
        !error.to_string().contains("`shell`"),
        "the hint names a hidden tool: {error}"
    );
}

fn assert_suggests_read_file(error: &Value) {
    assert_eq!(
        error["hint"],
        json!("did you mean `read_file`? `toolgate tools list` shows all tools"),
        "{error}"
    );
}

#[test]
fn the_cli_never_suggests_a_tool_hidden_from_the_role() {
    let env = Env::with_config(CONFIG);
    let hidden = env.call_with(&["--role", "narrow"], "shel", &json!({}), &[]);
    hidden.assert_code(2);
    assert_hides_shell(&hidden.json()["error"]);
    // The default role sees `shell`: the same typo is answered with it.
    let seen = env.call_with(&[], "shel", &json!({}), &[]);
    assert!(
        seen.json()["error"].to_string().contains("`shell`"),
        "{seen:#?}"
    );
    let close = env.call_with(&["--role", "narrow"], "read_fil", &json!({}), &[]);
    assert_suggests_read_file(&close.json()["error"]);
}

#[test]
fn the_http_api_never_suggests_a_tool_hidden_from_the_role() {
    let env = Env::with_config(CONFIG);
    let (mut child, addr) = env.serve();
    let call = |tool: &str| {
        let (status, body) = http(
            &addr,
            "POST",
            "/v1/calls",
            Some(&json!({"tool": tool, "arguments": {}})),
        );
        assert_eq!(status, 200, "{body}");
        body
    };
    let hidden = call("shel");
    let close = call("read_fil");
    let _ = child.kill();
    let _ = child.wait();
    assert_hides_shell(&hidden["error"]);
    assert_suggests_read_file(&close["error"]);
}
