//! The OpenAI-compatible embeddings client against a fake endpoint on loopback: what it sends,
//! how it reads answers (order, normalisation, batching), its errors, and the SSRF guard.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use toolgate_net::EgressPolicy;
use toolgate_rag::RemoteEmbedder;

use super::{Seen, allowing};

/// Answers each input with `[len, 0, index]`, listing the items in reverse order; inputs
/// containing "boom" get a 500, "short" one vector too few.
async fn embeddings(
    State(seen): State<Arc<Mutex<Seen>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Result<Json<Value>, StatusCode> {
    let inputs: Vec<String> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    seen.lock().unwrap().record(&headers, &body);
    if inputs.iter().any(|i| i.contains("boom")) {
        return Err(StatusCode::INTERNAL_SERVER_ERROR);
    }
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"index": i, "embedding": [t.len() as f32, 0.0, i as f32]}))
        .collect();
    if inputs.iter().any(|i| i.contains("short")) {
        data.pop();
    }
    data.reverse();
    Ok(Json(json!({"object": "list", "data": data})))
}

async fn fake() -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let app = axum::Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), seen)
}

#[tokio::test]
async fn sends_model_inputs_and_key_and_reads_vectors_in_input_order() {
    let (base, seen) = fake().await;
    let key = "sk-test-0123456789".to_owned();
    let e = RemoteEmbedder::new(
        &base,
        "text-embedding-3-small",
        Some(key.clone()),
        &allowing(&base),
    )
    .unwrap();
    assert!(!format!("{e:?}").contains(&key), "{e:?}");
    // 70 texts: two requests (64 per batch).
    let texts: Vec<String> = (0..70).map(|i| "x".repeat(i + 1)).collect();
    let vecs = e.embed(&texts).await.unwrap();
    assert_eq!(vecs.len(), 70);
    for (i, v) in vecs.iter().enumerate() {
        let idx = (i % 64) as f32;
        let len = (i + 1) as f32;
        let norm = (len * len + idx * idx).sqrt();
        assert!((v[0] - len / norm).abs() < 1e-6, "{i}: {v:?}");
        assert!((v[2] - idx / norm).abs() < 1e-6, "{i}: {v:?}");
    }
    let s = seen.lock().unwrap();
    assert_eq!(s.bodies.len(), 2);
    assert_eq!(s.bodies[0]["model"], "text-embedding-3-small");
    assert_eq!(s.bodies[0]["input"].as_array().unwrap().len(), 64);
    assert_eq!(s.auth, [format!("Bearer {key}"), format!("Bearer {key}")]);
    assert!(e.id().starts_with("remote:127.0.0.1:"), "{}", e.id());
}

#[tokio::test]
async fn errors_name_the_endpoint_and_never_the_key() {
    let (base, _) = fake().await;
    let key = "sk-secret-abcdef".to_owned();
    let e = RemoteEmbedder::new(&base, "m", Some(key.clone()), &allowing(&base)).unwrap();
    let err = e.embed(&["boom".to_owned()]).await.unwrap_err().to_string();
    assert!(
        err.contains("500") && err.contains("/v1/embeddings"),
        "{err}"
    );
    assert!(!err.contains(&key), "{err}");
    let err = e
        .embed(&["short".to_owned(), "b".to_owned()])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("returned 1 vectors for 2 inputs"), "{err}");
}

#[tokio::test]
async fn loopback_is_refused_without_an_egress_grant() {
    let (base, seen) = fake().await;
    let e = RemoteEmbedder::new(&base, "m", None, &EgressPolicy::default()).unwrap();
    let err = e
        .embed(&["hello".to_owned()])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("allow"), "{err}");
    assert!(
        seen.lock().unwrap().bodies.is_empty(),
        "the request reached the server"
    );
}

#[tokio::test]
async fn a_repeated_query_is_embedded_once() {
    use toolgate_protocol::ToolSpec;
    use toolgate_rag::{Embedder, Fusion, Mode, ToolSearch};
    let (base, seen) = fake().await;
    let e = RemoteEmbedder::new(&base, "m", None, &allowing(&base)).unwrap();
    let search = ToolSearch::new(Some(Embedder::Remote(e)), None, Fusion::default());
    let specs = [
        ToolSpec::new("read_file", "Read a file.", json!({"type": "object"})),
        ToolSpec::new("send_mail", "Send an email.", json!({"type": "object"})),
    ];
    search.refresh(&specs).await.unwrap();
    let admit = |_: &str| true;
    let query_requests = |q: &str| {
        seen.lock()
            .unwrap()
            .bodies
            .iter()
            .filter(|b| b["input"] == json!([q]))
            .count()
    };
    // The agent loop ranks for the same user message at every step of a turn.
    for _ in 0..5 {
        let hits = search
            .search("read a file", 2, Mode::Hybrid, &admit)
            .await
            .unwrap();
        assert_eq!(hits.len(), 2);
    }
    assert_eq!(query_requests("read a file"), 1);
    search
        .search("send mail", 2, Mode::Dense, &admit)
        .await
        .unwrap();
    search
        .search("read a file", 2, Mode::Dense, &admit)
        .await
        .unwrap();
    assert_eq!(query_requests("send mail"), 1);
    assert_eq!(query_requests("read a file"), 1);
    // BM25 never embeds.
    search
        .search("bm25 only", 2, Mode::Bm25, &admit)
        .await
        .unwrap();
    assert_eq!(query_requests("bm25 only"), 0);
}
