use serde_json::json;
use sha2::{Digest, Sha256};
use toolgate_core::ToolError;
use toolgate_tools::BuiltinOptions;

use super::fixture::{Fixture, invalid};

#[tokio::test]
async fn reads_a_whole_text_file() {
    let fx = Fixture::new();
    fx.put("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let out = fx.run("read_file", json!({"path": "./src/main.rs"})).await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "src/main.rs",
            "content": "fn main() {\n    println!(\"hi\");\n}\n",
            "start_line": 1,
            "lines_returned": 3,
            "total_lines": 3,
            "truncated": false,
            "encoding": "utf-8"
        }))
    );
}

#[tokio::test]
async fn reads_a_window_of_lines() {
    let fx = Fixture::new();
    fx.put("five.txt", "one\ntwo\nthree\nfour\nfive");
    let out = fx
        .run(
            "read_file",
            json!({"path": "five.txt", "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "five.txt",
            "content": "two\nthree\n",
            "start_line": 2,
            "lines_returned": 2,
            "total_lines": 5,
            "truncated": true,
            "encoding": "utf-8"
        }))
    );
    let last = fx
        .run("read_file", json!({"path": "five.txt", "offset": 5}))
        .await;
    assert_eq!(last.unwrap()["content"], "five");
}

#[tokio::test]
async fn an_offset_past_the_end_is_invalid() {
    let fx = Fixture::new();
    fx.put("two.txt", "a\nb\n");
    let out = fx
        .run("read_file", json!({"path": "two.txt", "offset": 3}))
        .await;
    assert_eq!(
        out,
        Err(invalid(
            "offset 3 is past the end of `two.txt`, which has 2 lines"
        ))
    );
}

#[tokio::test]
async fn an_empty_file_has_no_lines() {
    let fx = Fixture::new();
    fx.put("empty", "");
    let out = fx.run("read_file", json!({"path": "empty"})).await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "empty",
            "content": "",
            "start_line": 1,
            "lines_returned": 0,
            "total_lines": 0,
            "truncated": false,
            "encoding": "utf-8"
        }))
    );
}

#[tokio::test]
async fn a_binary_file_returns_size_and_digest_only() {
    let fx = Fixture::new();
    let bytes: Vec<u8> = (0u8..=255).cycle().take(20_000).collect();
    fx.put("blob.bin", &bytes);
    let out = fx.run("read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "blob.bin",
            "binary": true,
            "size": 20_000,
            "sha256": hex::encode(Sha256::digest(&bytes)),
        }))
    );
}

#[tokio::test]
async fn non_utf8_text_is_decoded_lossily() {
    let fx = Fixture::new();
    fx.put("latin1.txt", b"caf\xe9\nna\xefve\n");
    let out = fx.run("read_file", json!({"path": "latin1.txt"})).await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "latin1.txt",
            "content": "caf\u{FFFD}\nna\u{FFFD}ve\n",
            "start_line": 1,
            "lines_returned": 2,
            "total_lines": 2,
            "truncated": false,
            "encoding": "lossy-utf8"
        }))
    );
}

#[tokio::test]
async fn a_directory_or_a_missing_file_is_invalid() {
    let fx = Fixture::new();
    fx.put("dir/file", "x");
    assert_eq!(
        fx.run("read_file", json!({"path": "dir"})).await,
        Err(invalid(
            "`dir` is a directory; use list_dir to see its entries"
        ))
    );
    assert_eq!(
        fx.run("read_file", json!({"path": "nope.txt"})).await,
        Err(invalid(
            "`nope.txt` does not exist (paths are relative to the workspace root)"
        ))
    );
}

#[tokio::test]
async fn a_file_over_the_limit_needs_a_window() {
    let fx = Fixture::with_options(BuiltinOptions {
        max_read_bytes: 16,
        ..BuiltinOptions::default()
    });
    fx.put("big.txt", "line one\nline two\nline three\nline four\n");
    assert_eq!(
        fx.run("read_file", json!({"path": "big.txt"})).await,
        Err(ToolError::failed(
            "`big.txt` is 39 bytes, over the 16-byte limit; read a window with offset and \
             limit, or find the lines you need with search_files"
        ))
    );
    // A window is read as far as needed; the total is unknown without scanning on.
    let out = fx
        .run(
            "read_file",
            json!({"path": "big.txt", "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(
        out,
        Ok(json!({
            "path": "big.txt",
            "content": "line two\n",
            "start_line": 2,
            "lines_returned": 1,
            "total_lines": null,
            "truncated": true,
            "encoding": "utf-8"
        }))
    );
    // The window itself stops at the byte limit, on a line boundary.
    let out = fx
        .run(
            "read_file",
            json!({"path": "big.txt", "offset": 1, "limit": 3}),
        )
        .await
        .unwrap();
    assert_eq!(
        (&out["content"], &out["lines_returned"], &out["truncated"]),
        (&json!("line one\n"), &json!(1), &json!(true))
    );
}

#[tokio::test]
async fn undecodable_arguments_are_invalid_not_a_panic() {
    let fx = Fixture::new();
    let out = fx.run("read_file", json!({"path": 7})).await;
    assert!(
        matches!(out, Err(ToolError::InvalidArguments(m)) if m.starts_with("invalid arguments for read_file"))
    );
    fx.put("a", "x\n");
    let out = fx.run("read_file", json!({"path": "a", "offset": 0})).await;
    assert!(matches!(out, Err(ToolError::InvalidArguments(_))));
}

#[tokio::test]
async fn a_fifo_is_refused_without_blocking_on_open() {
    let fx = Fixture::new();
    let status = std::process::Command::new("mkfifo")
        .arg(fx.root().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        fx.run("read_file", json!({"path": "pipe"})),
    )
    .await
    .expect("opening the FIFO blocked");
    assert_eq!(
        out,
        Err(invalid(
            "`pipe` is not a regular file (a device, socket or FIFO)"
        ))
    );
}
