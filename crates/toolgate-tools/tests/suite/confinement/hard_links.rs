//! A hard link planted inside the workspace to a file outside it (same file system: the
//! outside dir is a sibling temp dir) is neither read nor written, nor searched; nor is one
//! to a protected file inside.

use serde_json::json;

use crate::suite::fixture::Fixture;

const MESSAGE: &str = "`planted.txt` has 2 hard links; the file tools do not read or write a \
                       file with more than one name, since another name may lie outside the \
                       workspace";

fn setup() -> Fixture {
    let fx = Fixture::new();
    let secret = fx.outside().join("secret.txt");
    std::fs::write(&secret, "OUTSIDE SECRET\n").unwrap();
    std::fs::hard_link(&secret, fx.root().join("planted.txt")).unwrap();
    fx
}

#[tokio::test]
async fn a_hard_link_to_an_outside_file_is_refused_for_read_and_write() {
    let fx = setup();
    let cases = [
        ("read_file", json!({"path": "planted.txt"})),
        (
            "write_file",
            json!({"path": "planted.txt", "content": "pwned\n"}),
        ),
        (
            "edit_file",
            json!({"path": "planted.txt", "old_string": "OUTSIDE", "new_string": "pwned"}),
        ),
    ];
    for (tool, args) in cases {
        assert_eq!(fx.denied(tool, args).await, MESSAGE, "{tool}");
    }
    assert_eq!(
        std::fs::read_to_string(fx.outside().join("secret.txt")).unwrap(),
        "OUTSIDE SECRET\n"
    );
    assert_eq!(fx.get("planted.txt"), "OUTSIDE SECRET\n");
}

#[tokio::test]
async fn search_skips_a_hard_linked_file() {
    let fx = setup();
    fx.put("mine.txt", "SECRET of my own\n");
    let out = fx
        .run("search_files", json!({"pattern": "SECRET"}))
        .await
        .unwrap();
    assert_eq!(
        out,
        json!({
            "matches": [{"path": "mine.txt", "line": 1, "text": "SECRET of my own"}],
            "files_searched": 1,
            "truncated": false
        })
    );
}

#[tokio::test]
async fn a_hard_link_to_a_protected_file_is_refused() {
    let fx = Fixture::new();
    std::fs::hard_link(
        fx.root().join(".toolgate/audit.jsonl"),
        fx.root().join("audit-copy"),
    )
    .unwrap();
    let message = fx.denied("read_file", json!({"path": "audit-copy"})).await;
    assert_eq!(
        message,
        "`audit-copy` has 2 hard links; the file tools do not read or write a file with \
         more than one name, since another name may lie outside the workspace"
    );
    let edit = json!({"path": "audit-copy", "old_string": "{}", "new_string": "[]"});
    fx.denied("edit_file", edit).await;
    assert_eq!(fx.get(".toolgate/audit.jsonl"), "{}\n");
}
