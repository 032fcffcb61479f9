//! Rate limits and bad answers: arXiv's spacing and 429 / `Retry-After` waited on the
//! injected clock (nothing sleeps), malformed XML and JSON a clean `execution_failed`, an
//! oversized answer refused, one failing source reported beside the others' papers.

use std::sync::Arc;
use std::time::Duration;

use axum::response::IntoResponse as _;
use serde_json::json;
use toolgate_core::ToolError;

use super::fake::{ARXIV_ERROR, FakeClock, Fakes, Reply, S2_KEY, ask, atom, status, tool};

fn secs(s: &[u64]) -> Vec<Duration> {
    s.iter().map(|&s| Duration::from_secs(s)).collect()
}

#[tokio::test]
async fn arxiv_requests_are_spaced_by_the_interval() {
    let fakes = Fakes::recorded().await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(r#"["arxiv"]"#), &clock);
    for _ in 0..3 {
        ask(&tool, json!({"query": "attention"})).await.unwrap();
    }
    assert_eq!(fakes.seen().len(), 3);
    assert_eq!(clock.slept(), secs(&[3, 3]));
}

#[tokio::test]
async fn a_429_waits_what_retry_after_says_then_retries() {
    let reply: Reply = Arc::new(|_, _, before| {
        (before == 0).then(|| status(429, &[("retry-after", "7")], "slow down"))
    });
    let fakes = Fakes::start(reply).await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(r#"["openalex"]"#), &clock);
    let got = ask(&tool, json!({"query": "attention"})).await.unwrap();
    assert_eq!(got["results"].as_array().unwrap().len(), 2);
    assert_eq!(fakes.seen().len(), 2);
    assert_eq!(clock.slept(), secs(&[7]));
}

#[tokio::test]
async fn rate_limiting_that_does_not_end_fails_as_retryable() {
    let always: Reply = Arc::new(|_, _, _| Some(status(429, &[], "")));
    let fakes = Fakes::start(always).await;
    let clock = Arc::new(FakeClock::default());
    let papers = tool(&fakes.config(r#"["crossref"]"#), &clock);
    let err = ask(&papers, json!({"query": "x"})).await.unwrap_err();
    assert_eq!(
        err,
        ToolError::transient("crossref is rate-limiting; retry later")
    );
    // max_retries = 2: three requests, a doubling backoff between them.
    assert_eq!(fakes.seen().len(), 3);
    assert_eq!(clock.slept(), secs(&[1, 2]));

    let long: Reply = Arc::new(|_, _, _| Some(status(503, &[("retry-after", "3600")], "")));
    let fakes = Fakes::start(long).await;
    let clock = Arc::new(FakeClock::default());
    let papers = tool(&fakes.config(r#"["crossref"]"#), &clock);
    let err = ask(&papers, json!({"query": "x"})).await.unwrap_err();
    assert_eq!(
        err,
        ToolError::transient("crossref is rate-limiting (it asked to wait 3600 s); retry later")
    );
    assert_eq!((fakes.seen().len(), clock.slept()), (1, vec![]));
}

fn failed_with(err: &ToolError, prefix: &str) -> bool {
    matches!(err, ToolError::Failed { message, retryable: false, .. } if message.starts_with(prefix))
}

#[tokio::test]
async fn malformed_answers_are_a_clean_execution_failure() {
    let broken: Reply = Arc::new(|path, _, _| {
        Some(if path.starts_with("/arxiv/") {
            atom("<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>cut")
        } else if path.starts_with("/s2/") {
            atom("<html>not even JSON</html>")
        } else {
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                "{\"results\": [",
            )
                .into_response()
        })
    });
    let fakes = Fakes::start(broken).await;
    let clock = Arc::new(FakeClock::default());
    let mut errors = Vec::new();
    for source in ["arxiv", "openalex", "semantic_scholar"] {
        let tool = tool(&fakes.config(&format!("[\"{source}\"]")), &clock);
        let err = ask(&tool, json!({"query": "x"})).await.unwrap_err();
        assert_eq!(err.code(), toolgate_protocol::ErrorCode::ExecutionFailed);
        errors.push(err);
    }
    assert!(
        failed_with(
            &errors[0],
            "arxiv answered something other than its Atom format: "
        ),
        "{errors:?}"
    );
    assert_eq!(
        errors[1],
        ToolError::failed(
            "openalex answered something other than its JSON format: EOF while parsing a list \
             at line 1 column 13"
        )
    );
    assert!(
        failed_with(
            &errors[2],
            "semantic_scholar answered something other than its JSON format: "
        ),
        "{errors:?}"
    );
}

#[tokio::test]
async fn arxivs_error_feed_and_oversized_answers_are_refused() {
    let reply: Reply = Arc::new(|path, _, _| {
        path.starts_with("/arxiv/")
            .then(|| status(400, &[], ARXIV_ERROR))
    });
    let fakes = Fakes::start(reply).await;
    let clock = Arc::new(FakeClock::default());
    let arxiv = tool(&fakes.config(r#"["arxiv"]"#), &clock);
    let err = ask(&arxiv, json!({"query": "x"})).await.unwrap_err();
    assert!(
        failed_with(&err, "arxiv answered HTTP 400: <?xml"),
        "{err:?}"
    );

    // The same error feed sent with 200 is still an error, with arXiv's own words.
    let reply: Reply = Arc::new(|_, _, _| Some(atom(ARXIV_ERROR)));
    let fakes = Fakes::start(reply).await;
    let arxiv = tool(&fakes.config(r#"["arxiv"]"#), &clock);
    let err = ask(&arxiv, json!({"query": "x"})).await.unwrap_err();
    assert_eq!(
        err,
        ToolError::failed("arxiv answered HTTP 400: incorrect id format for 1234.12345")
    );

    let ok = Fakes::recorded().await;
    let mut config = ok.config(r#"["openalex"]"#);
    config.max_bytes = 100;
    let err = ask(&tool(&config, &clock), json!({"query": "x"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::failed("openalex's answer is larger than [web.papers] max_bytes (100 bytes)")
    );
}

#[tokio::test]
async fn one_failing_source_is_reported_beside_the_others_papers() {
    let reply: Reply = Arc::new(|path, _, _| {
        path.starts_with("/s2/").then(|| {
            status(
                403,
                &[],
                &format!("{{\"message\": \"Forbidden: bad key {S2_KEY}\"}}"),
            )
        })
    });
    let fakes = Fakes::start(reply).await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(r#"["semantic_scholar", "crossref"]"#), &clock);
    let got = ask(&tool, json!({"query": "bert"})).await.unwrap();
    assert_eq!(got["results"][0]["sources"], json!(["crossref"]));
    assert_eq!(
        got["errors"],
        json!([{
            "source": "semantic_scholar",
            "message": "semantic_scholar answered HTTP 403: {\"message\": \"Forbidden: bad key [redacted]\"}"
        }])
    );
    assert!(!format!("{tool:?} {got}").contains(S2_KEY));
}
