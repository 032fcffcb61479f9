use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::fixture::{Fixture, invalid};

#[tokio::test]
async fn creates_a_file_and_its_parent_directories() {
    let fx = Fixture::new();
    let out = fx
        .run(
            "write_file",
            json!({"path": "new/deep/notes.md", "content": "# Notes\n", "idempotency_key": "k1"}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({"path": "new/deep/notes.md", "bytes_written": 8, "created": true}))
    );
    assert_eq!(fx.get("new/deep/notes.md"), "# Notes\n");
    assert_eq!(fx.names_in("new/deep"), ["notes.md"]);
}

#[tokio::test]
async fn without_create_dirs_a_missing_parent_is_invalid() {
    let fx = Fixture::new();
    let out = fx
        .run(
            "write_file",
            json!({"path": "missing/f.txt", "content": "x", "create_dirs": false}),
        )
        .await;
    assert_eq!(
        out,
        Err(invalid(
            "the parent directory of `missing/f.txt` does not exist; create it first or set \
             create_dirs to true"
        ))
    );
    assert!(!fx.root().join("missing").exists());
}

#[tokio::test]
async fn replaces_atomically_and_keeps_the_mode() {
    let fx = Fixture::new();
    fx.put("run.sh", "echo old\n");
    let path = fx.root().join("run.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    // A handle opened before still reads the old content afterwards: the file was replaced
    // by rename, never truncated and rewritten in place. (A hard link would show it too, but
    // the file tools refuse hard-linked files.)
    let old = std::fs::File::open(&path).unwrap();

    let out = fx
        .run(
            "write_file",
            json!({"path": "run.sh", "content": "echo new\n"}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({"path": "run.sh", "bytes_written": 9, "created": false}))
    );
    assert_eq!(fx.get("run.sh"), "echo new\n");
    assert_eq!(std::io::read_to_string(old).unwrap(), "echo old\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750);
    assert_eq!(fx.names_in("."), [".toolgate", "run.sh"]);
}

#[tokio::test]
async fn refuses_to_overwrite_a_directory() {
    let fx = Fixture::new();
    fx.put("dir/keep.txt", "keep");
    let out = fx
        .run("write_file", json!({"path": "dir", "content": "x"}))
        .await;
    assert_eq!(
        out,
        Err(invalid(
            "`dir` is a directory; write_file only writes files"
        ))
    );
    assert_eq!(fx.get("dir/keep.txt"), "keep");
    let out = fx
        .run("write_file", json!({"path": ".", "content": "x"}))
        .await;
    assert_eq!(
        out,
        Err(invalid("`.` is a directory; write_file only writes files"))
    );
}

#[tokio::test]
async fn a_symlink_inside_the_workspace_is_written_through() {
    let fx = Fixture::new();
    fx.put("real.txt", "before");
    fx.symlink("real.txt", "alias.txt");
    let out = fx
        .run(
            "write_file",
            json!({"path": "alias.txt", "content": "after"}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({"path": "real.txt", "bytes_written": 5, "created": false}))
    );
    assert_eq!(fx.get("real.txt"), "after");
    let link = std::fs::symlink_metadata(fx.root().join("alias.txt")).unwrap();
    assert!(link.file_type().is_symlink());
}

#[tokio::test]
async fn an_empty_path_is_invalid() {
    let fx = Fixture::new();
    let out = fx
        .run("write_file", json!({"path": "", "content": "x"}))
        .await;
    assert_eq!(
        out,
        Err(invalid("path is empty; use `.` for the workspace root"))
    );
}
