//! The `/rerank` second stage against a fake endpoint on loopback: what it sends (only
//! permitted candidates), how its scores reorder the fused list, and that a failing or
//! refused endpoint leaves the fused order instead of failing the search.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use toolgate_net::EgressPolicy;
use toolgate_protocol::ToolSpec;
use toolgate_rag::{Fusion, Mode, RemoteReranker, ToolSearch};

use super::{Seen, allowing};

/// Scores each document by how often it says "zebra"; a query containing "boom" gets a 500,
/// "short" leaves the last document unscored, "voyage" answers in Voyage's `data` form.
async fn rerank(
    State(seen): State<Arc<Mutex<Seen>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Result<Json<Value>, StatusCode> {
    seen.lock().unwrap().record(&headers, &body);
    let query = body["query"].as_str().unwrap();
    if query.contains("boom") {
        return Err(StatusCode::INTERNAL_SERVER_ERROR);
    }
    let docs: Vec<&str> = body["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let mut results: Vec<Value> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| json!({"index": i, "relevance_score": d.matches("zebra").count() as f32}))
        .collect();
    if query.contains("short") {
        results.pop();
    }
    results.reverse();
    let key = if query.contains("voyage") {
        "data"
    } else {
        "results"
    };
    Ok(Json(json!({ key: results })))
}

async fn fake() -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let app = axum::Router::new()
        .route("/v1/rerank", post(rerank))
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), seen)
}

fn specs() -> Vec<ToolSpec> {
    let t = |name: &str, desc: &str| ToolSpec::new(name, desc, json!({"type": "object"}));
    vec![
        // BM25's favourite for "animal photo search": every word, twice.
        t(
            "animal_photo_search",
            "Animal photo search: search animal photos.",
        ),
        t(
            "photo_search",
            "Search photos of an animal. Knows every zebra.",
        ),
        t(
            "animal_facts",
            "Facts about an animal: zebra, zebra, zebra.",
        ),
        // Hidden from the caller below, and the best zebra match of all.
        t(
            "secret_zebra_search",
            "Animal photo search zebra zebra zebra zebra.",
        ),
        t("tide_tables", "Tide tables for a harbour."),
    ]
}

async fn search_with(base: &str, egress: &EgressPolicy, depth: usize) -> ToolSearch {
    let key = Some("rk-secret-123".to_owned());
    let reranker = RemoteReranker::new(base, "rerank-small", key, egress).unwrap();
    assert!(!format!("{reranker:?}").contains("rk-secret-123"));
    let search = ToolSearch::new(None, None, Fusion::default()).with_reranker(reranker, depth);
    search.refresh(&specs()).await.unwrap();
    search
}

fn not_secret(name: &str) -> bool {
    !name.starts_with("secret")
}

#[tokio::test]
async fn reorders_the_permitted_candidates_and_never_sends_a_hidden_tool() {
    let (base, seen) = fake().await;
    let search = search_with(&base, &allowing(&base), 30).await;
    let hits = search
        .search("animal photo search", 2, Mode::Bm25, &not_secret)
        .await
        .unwrap();
    let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["animal_facts", "photo_search"], "{hits:#?}");
    // The fused ranks stay visible; the score is the reranker's.
    assert_eq!(hits[0].rerank.unwrap().rank, 1);
    assert_eq!(hits[0].score, 3.0);
    assert!(hits[0].bm25.unwrap().rank > 1, "{hits:#?}");

    // The agent loop asks again at every step of a turn: answered from memory.
    for _ in 0..4 {
        let again = search
            .search("animal photo search", 2, Mode::Bm25, &not_secret)
            .await
            .unwrap();
        assert_eq!(again, hits);
    }
    let s = seen.lock().unwrap();
    assert_eq!(s.bodies.len(), 1);
    let body = &s.bodies[0];
    assert_eq!(body["model"], "rerank-small");
    assert_eq!(body["query"], "animal photo search");
    let docs = body["documents"].as_array().unwrap();
    // Every permitted BM25 match (depth 30 > k), none of the hidden tool.
    assert_eq!(docs.len(), 3, "{body:#}");
    assert_eq!(body["top_n"], 3);
    assert!(!body.to_string().contains("secret"), "{body:#}");
    assert!(
        docs[0]
            .as_str()
            .unwrap()
            .starts_with("animal photo search: ")
    );
    assert_eq!(s.auth, ["Bearer rk-secret-123"]);
}

#[tokio::test]
async fn depth_bounds_what_is_sent_and_reordered() {
    let (base, seen) = fake().await;
    let search = search_with(&base, &allowing(&base), 2).await;
    let hits = search
        .search("animal photo search", 2, Mode::Bm25, &not_secret)
        .await
        .unwrap();
    // Only the fused top 2 were candidates: animal_facts (BM25 #3) cannot come back.
    let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["photo_search", "animal_photo_search"]);
    assert_eq!(
        seen.lock().unwrap().bodies[0]["documents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // A changed definition among the candidates is scored again.
    let mut changed = specs();
    changed[0] = ToolSpec::new(
        "animal_photo_search",
        "Animal photo search: search animal photos, zebra.",
        json!({"type": "object"}),
    );
    search.refresh(&changed).await.unwrap();
    search
        .search("animal photo search", 2, Mode::Bm25, &not_secret)
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().bodies.len(), 2);
}

#[tokio::test]
async fn a_failing_or_refused_reranker_keeps_the_fused_order() {
    let (base, _) = fake().await;
    let plain = ToolSearch::new(None, None, Fusion::default());
    plain.refresh(&specs()).await.unwrap();
    for query in ["animal photo search boom", "animal photo search short"] {
        let fused = plain
            .search(query, 3, Mode::Bm25, &not_secret)
            .await
            .unwrap();
        let search = search_with(&base, &allowing(&base), 30).await;
        let hits = search
            .search(query, 3, Mode::Bm25, &not_secret)
            .await
            .unwrap();
        assert_eq!(hits, fused, "{query}");
        assert!(hits.iter().all(|h| h.rerank.is_none()));
    }
    // Loopback is not allowed by default: the guard refuses, the search still answers.
    let search = search_with(&base, &EgressPolicy::default(), 30).await;
    let hits = search
        .search("animal photo search", 3, Mode::Bm25, &not_secret)
        .await
        .unwrap();
    assert_eq!(hits[0].name, "animal_photo_search");
}

#[tokio::test]
async fn reads_both_answer_forms_and_names_bad_answers() {
    let (base, _) = fake().await;
    let r = RemoteReranker::new(&base, "m", None, &allowing(&base)).unwrap();
    let docs = [
        "a zebra".to_owned(),
        "none".to_owned(),
        "zebra zebra".to_owned(),
    ];
    assert_eq!(r.scores("q", &docs).await.unwrap(), [1.0, 0.0, 2.0]);
    assert_eq!(r.scores("voyage q", &docs).await.unwrap(), [1.0, 0.0, 2.0]);
    let err = r.scores("short", &docs).await.unwrap_err().to_string();
    assert!(err.contains("left 1 of 3 documents unscored"), "{err}");
    let err = r.scores("boom", &docs).await.unwrap_err().to_string();
    assert!(err.contains("500") && err.contains("/v1/rerank"), "{err}");
    assert!(r.scores("q", &[]).await.unwrap().is_empty());
    let refused = RemoteReranker::new(&base, "m", None, &EgressPolicy::default()).unwrap();
    let err = refused.scores("q", &docs).await.unwrap_err().to_string();
    assert!(err.contains("127.0.0.1"), "{err}");
}
