use serde_json::{Value, json};

use super::fixture::{Fixture, invalid};

/// a.txt, src/{lib.rs, nested/mod.rs}, .git/HEAD, a link to a.txt, a link to a directory
/// outside holding secret.txt, and the protected .toolgate.
fn tree() -> Fixture {
    let fx = Fixture::new();
    fx.put("a.txt", "hello");
    fx.put("src/lib.rs", "pub fn f() {}\n");
    fx.put("src/nested/mod.rs", "");
    fx.put(".git/HEAD", "ref: refs/heads/main\n");
    fx.symlink("a.txt", "link_in");
    std::fs::write(fx.outside().join("secret.txt"), "s3cret").unwrap();
    fx.symlink(fx.outside(), "out_dir");
    fx
}

fn entry(path: &str, kind: &str, size: Option<u64>) -> Value {
    json!({"path": path, "type": kind, "size": size})
}

#[tokio::test]
async fn lists_one_level_without_protected_paths() {
    let fx = tree();
    let out = fx.run("list_dir", json!({})).await;
    assert_eq!(
        out,
        Ok(json!({
            "path": ".",
            "entries": [
                entry(".git", "dir", None),
                entry("a.txt", "file", Some(5)),
                entry("link_in", "symlink", None),
                entry("out_dir", "symlink", None),
                entry("src", "dir", None),
            ],
            "truncated": false
        }))
    );
}

#[tokio::test]
async fn recursion_never_follows_symlinks_nor_enters_git() {
    let fx = tree();
    let out = fx
        .run("list_dir", json!({"path": ".", "recursive": true}))
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "path": ".",
            "entries": [
                entry(".git", "dir", None),
                entry("a.txt", "file", Some(5)),
                entry("link_in", "symlink", None),
                entry("out_dir", "symlink", None),
                entry("src", "dir", None),
                entry("src/lib.rs", "file", Some(14)),
                entry("src/nested", "dir", None),
                entry("src/nested/mod.rs", "file", Some(0)),
            ],
            "truncated": false
        }))
    );
}

#[tokio::test]
async fn lists_a_subdirectory_and_stops_at_max_entries() {
    let fx = tree();
    let out = fx
        .run(
            "list_dir",
            json!({"path": "src", "recursive": true, "max_entries": 2}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "src",
            "entries": [
                entry("src/lib.rs", "file", Some(14)),
                entry("src/nested", "dir", None),
            ],
            "truncated": true
        }))
    );
}

#[tokio::test]
async fn a_file_is_not_a_directory() {
    let fx = tree();
    assert_eq!(
        fx.run("list_dir", json!({"path": "a.txt"})).await,
        Err(invalid(
            "`a.txt` is not a directory; use read_file to read a file"
        ))
    );
}
