//! Result governance against a real result store.

use std::sync::Arc;

use serde_json::json;
use toolgate_core::{Tool, ToolContext};
use toolgate_protocol::{ErrorCode, Risk};
use toolgate_store::results::ResultStore;

use super::{GovernLayer, ReadResultTool};
use crate::call::Outcome;
use crate::execute::ExecuteLayer;
use crate::layer::{Layer, Next};
use crate::testing::{call_for, echo_tool};

async fn run(
    govern: &GovernLayer,
    args: serde_json::Value,
) -> (Outcome, Option<toolgate_protocol::Governance>) {
    let mut call = call_for(echo_tool("t", Risk::Read), args);
    let inner: [Arc<dyn Layer>; 1] = [Arc::new(ExecuteLayer::new(
        2,
        std::time::Duration::from_secs(5),
    ))];
    let out = govern.handle(&mut call, Next::new(&inner)).await;
    (out, call.governance)
}

#[tokio::test]
async fn small_results_pass_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(ResultStore::open(dir.path()).unwrap());
    let (out, gov) = run(&GovernLayer::new(store, 1000, 10_000), json!({"x": 1})).await;
    assert_eq!(out.unwrap().data, json!({"echo": {"x": 1}}));
    assert_eq!(gov, None);
}

#[tokio::test]
async fn oversized_results_are_offloaded_and_paged_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(ResultStore::open(dir.path()).unwrap());
    let govern = GovernLayer::new(Arc::clone(&store), 101, 1_000_000);
    // 5,000 bytes of two-byte characters: the cut must land on a character boundary.
    let (out, gov) = run(&govern, json!({"big": 5000})).await;
    let data = out.unwrap().data;
    let head = data.as_str().unwrap();
    assert_eq!(head.len(), 100);
    let gov = gov.unwrap();
    assert_eq!((gov.total_bytes, gov.returned_bytes), (5000, 100));

    let reader = ReadResultTool::new(store, 700);
    let id = gov.result_id.unwrap();
    let mut whole = String::new();
    let mut offset = 0u64;
    loop {
        let page = reader
            .call(
                json!({"id": id, "offset": offset, "limit": 10_000}),
                ToolContext::for_test(),
            )
            .await
            .unwrap()
            .data;
        whole.push_str(page["text"].as_str().unwrap());
        match page["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(whole, "é".repeat(2500));
    assert!(whole.starts_with(head));
}

#[tokio::test]
async fn over_the_hard_limit_is_result_too_large_and_errors_are_never_cut() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(ResultStore::open(dir.path()).unwrap());
    let govern = GovernLayer::new(store, 10, 1000);
    let (out, _) = run(&govern, json!({"big": 5000})).await;
    let err = out.unwrap_err();
    assert_eq!(err.code, ErrorCode::ResultTooLarge);
    assert_eq!(
        err.message,
        "the result is 5000 bytes, over the hard limit of 1000 bytes"
    );

    let long = "x".repeat(5000);
    let (out, _) = run(&govern, json!({"fail": long})).await;
    assert_eq!(out.unwrap_err().message.len(), 5000);
}

#[tokio::test]
async fn read_result_refuses_unknown_ids() {
    let dir = tempfile::tempdir().unwrap();
    let reader = ReadResultTool::new(Arc::new(ResultStore::open(dir.path()).unwrap()), 100);
    let err = reader
        .call(json!({"id": "../../etc/passwd"}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
}

#[test]
fn the_size_probe_counts_the_json_text_exactly() {
    // `{"a":"bc","n":[1,2]}` is 20 bytes.
    let data = json!({"a": "bc", "n": [1, 2]});
    assert_eq!(data.to_string().len(), 20);
    assert!(super::json_len_exceeds(&data, 19));
    assert!(!super::json_len_exceeds(&data, 20));
}

#[test]
fn the_quick_bound_never_falls_short_of_the_json_text() {
    let values = [
        json!({"a": "b", "n": [1, -22, 1.5e-300, null, true], "o": {}}),
        json!(["quote \" back \\ bell \u{7}", "é中🎉", {"k\"": []}]),
    ];
    for v in &values {
        let len = v.to_string().len();
        assert!(!super::json_len_surely_within(v, len - 1), "{v}");
        assert!(!super::json_len_exceeds(v, len), "{v}");
    }
    let small = json!({"a": "b"});
    assert!(super::json_len_surely_within(&small, 100));
}
