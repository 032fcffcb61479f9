use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::fixture::{Fixture, invalid};

const SOURCE: &str = "fn a() {\n    let x = 1;\n}\n\nfn b() {\n    let x = 1;\n}\n";

#[tokio::test]
async fn replaces_a_unique_match() {
    let fx = Fixture::new();
    fx.put("lib.rs", SOURCE);
    std::fs::set_permissions(
        fx.root().join("lib.rs"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let out = fx
        .run(
            "edit_file",
            json!({
                "path": "lib.rs",
                "old_string": "fn b() {\n    let x = 1;",
                "new_string": "fn b() {\n    let x = 2;",
                "idempotency_key": "edit-1"
            }),
        )
        .await;
    assert_eq!(out, Ok(json!({"path": "lib.rs", "replacements": 1})));
    assert_eq!(
        fx.get("lib.rs"),
        "fn a() {\n    let x = 1;\n}\n\nfn b() {\n    let x = 2;\n}\n"
    );
    let mode = std::fs::metadata(fx.root().join("lib.rs"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o600);
    assert_eq!(fx.names_in("."), [".toolgate", "lib.rs"]);
}

#[tokio::test]
async fn several_matches_need_more_context_or_replace_all() {
    let fx = Fixture::new();
    fx.put("lib.rs", SOURCE);
    let args = json!({"path": "lib.rs", "old_string": "let x = 1;", "new_string": "let x = 3;"});
    assert_eq!(
        fx.run("edit_file", args).await,
        Err(invalid(
            "old_string matches 2 times in lib.rs; include more context to make it unique, \
             or set replace_all"
        ))
    );
    assert_eq!(fx.get("lib.rs"), SOURCE);

    let all = json!({
        "path": "lib.rs", "old_string": "let x = 1;", "new_string": "let x = 3;",
        "replace_all": true
    });
    assert_eq!(
        fx.run("edit_file", all).await,
        Ok(json!({"path": "lib.rs", "replacements": 2}))
    );
    assert_eq!(fx.get("lib.rs"), SOURCE.replace("let x = 1;", "let x = 3;"));
}

#[tokio::test]
async fn a_missing_match_is_invalid_and_changes_nothing() {
    let fx = Fixture::new();
    fx.put("lib.rs", SOURCE);
    let out = fx
        .run(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn c()", "new_string": "fn d()"}),
        )
        .await;
    assert_eq!(out, Err(invalid("old_string not found in lib.rs")));
    assert_eq!(fx.get("lib.rs"), SOURCE);
}

#[tokio::test]
async fn identical_or_empty_strings_are_invalid() {
    let fx = Fixture::new();
    fx.put("lib.rs", SOURCE);
    let same = json!({"path": "lib.rs", "old_string": "fn a", "new_string": "fn a"});
    assert_eq!(
        fx.run("edit_file", same).await,
        Err(invalid(
            "old_string and new_string are identical; nothing would change"
        ))
    );
    let empty = json!({"path": "lib.rs", "old_string": "", "new_string": "x"});
    assert_eq!(
        fx.run("edit_file", empty).await,
        Err(invalid(
            "old_string is empty; quote the exact text to replace"
        ))
    );
}

#[tokio::test]
async fn binary_and_non_utf8_files_cannot_be_edited() {
    let fx = Fixture::new();
    fx.put("blob.bin", b"ab\0cd");
    fx.put("latin1.txt", b"caf\xe9 au lait");
    let out = fx
        .run(
            "edit_file",
            json!({"path": "blob.bin", "old_string": "ab", "new_string": "xy"}),
        )
        .await;
    assert_eq!(
        out,
        Err(invalid(
            "`blob.bin` is a binary file; edit_file only edits UTF-8 text"
        ))
    );
    let out = fx
        .run(
            "edit_file",
            json!({"path": "latin1.txt", "old_string": "au", "new_string": "with"}),
        )
        .await;
    assert_eq!(
        out,
        Err(invalid(
            "`latin1.txt` is not valid UTF-8; edit_file only edits UTF-8 text (use write_file \
             to replace it whole)"
        ))
    );
    assert_eq!(
        std::fs::read(fx.root().join("latin1.txt")).unwrap(),
        b"caf\xe9 au lait"
    );
}
