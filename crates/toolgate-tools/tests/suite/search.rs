use serde_json::json;
use toolgate_core::ToolError;

use super::fixture::{Fixture, invalid};

/// Text files with `TODO`s, a binary file with one, a `.git` file with one, a protected
/// file with one, and symlinks to an outside file and directory with one each.
fn tree() -> Fixture {
    let fx = Fixture::new();
    fx.put("README.md", "# Demo\nTODO: write docs\n");
    fx.put("src/lib.rs", "fn a() {}\n// todo: lower\n// TODO: upper\n");
    fx.put("src/main.rs", "fn main() {}\n");
    fx.put("data.bin", b"TODO\0binary");
    fx.put(".git/config", "TODO in git\n");
    fx.put(".toolgate/notes", "TODO protected\n");
    std::fs::write(fx.outside().join("out.txt"), "TODO outside\n").unwrap();
    fx.symlink(fx.outside().join("out.txt"), "out_file.txt");
    fx.symlink(fx.outside(), "out_dir");
    fx
}

#[tokio::test]
async fn finds_lines_and_skips_binary_git_protected_and_symlinks() {
    let fx = tree();
    let out = fx.run("search_files", json!({"pattern": "TODO"})).await;
    assert_eq!(
        out,
        Ok(json!({
            "matches": [
                {"path": "README.md", "line": 2, "text": "TODO: write docs"},
                {"path": "src/lib.rs", "line": 3, "text": "// TODO: upper"},
            ],
            "files_searched": 3,
            "truncated": false
        }))
    );
}

#[tokio::test]
async fn case_insensitive_and_glob_narrow_the_search() {
    let fx = tree();
    let out = fx
        .run(
            "search_files",
            json!({"pattern": "todo", "glob": "**/*.rs", "case_insensitive": true}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "matches": [
                {"path": "src/lib.rs", "line": 2, "text": "// todo: lower"},
                {"path": "src/lib.rs", "line": 3, "text": "// TODO: upper"},
            ],
            "files_searched": 2,
            "truncated": false
        }))
    );
}

#[tokio::test]
async fn a_glob_alone_lists_files_relative_to_path() {
    let fx = tree();
    let out = fx.run("search_files", json!({"glob": "**/*.rs"})).await;
    assert_eq!(
        out,
        Ok(json!({"files": ["src/lib.rs", "src/main.rs"], "truncated": false}))
    );
    let out = fx
        .run("search_files", json!({"glob": "*.rs", "path": "src"}))
        .await;
    assert_eq!(
        out,
        Ok(json!({"files": ["src/lib.rs", "src/main.rs"], "truncated": false}))
    );
    // `*` does not cross `/`.
    let out = fx.run("search_files", json!({"glob": "*.rs"})).await;
    assert_eq!(out, Ok(json!({"files": [], "truncated": false})));
}

#[tokio::test]
async fn results_stop_at_max_results() {
    let fx = tree();
    let out = fx
        .run(
            "search_files",
            json!({"pattern": "TODO", "case_insensitive": true, "max_results": 2}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "matches": [
                {"path": "README.md", "line": 2, "text": "TODO: write docs"},
                {"path": "src/lib.rs", "line": 2, "text": "// todo: lower"},
            ],
            "files_searched": 2,
            "truncated": true
        }))
    );
}

#[tokio::test]
async fn long_lines_are_cut_to_500_characters() {
    let fx = Fixture::new();
    fx.put(
        "long.txt",
        format!("{}needle{}\n", "é".repeat(600), "x".repeat(10)),
    );
    let out = fx
        .run("search_files", json!({"pattern": "needle"}))
        .await
        .unwrap();
    assert_eq!(
        out["matches"][0]["text"],
        json!(format!("{}…", "é".repeat(500)))
    );
}

#[tokio::test]
async fn a_bad_regex_or_no_query_is_invalid() {
    let fx = tree();
    let out = fx.run("search_files", json!({"pattern": "fn (a"})).await;
    assert!(
        matches!(&out, Err(ToolError::InvalidArguments(m)) if m.starts_with("invalid regex: ") && m.contains("unclosed group")),
        "{out:?}"
    );
    assert_eq!(
        fx.run("search_files", json!({"path": "src"})).await,
        Err(invalid(
            "give pattern (to search file contents), glob (to find files by path), or both"
        ))
    );
}

#[tokio::test]
async fn searching_a_single_file_works() {
    let fx = tree();
    let out = fx
        .run(
            "search_files",
            json!({"pattern": "TODO", "path": "README.md"}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "matches": [{"path": "README.md", "line": 2, "text": "TODO: write docs"}],
            "files_searched": 1,
            "truncated": false
        }))
    );
}
