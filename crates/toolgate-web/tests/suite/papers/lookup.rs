//! One paper by id: each source is asked in its own way (arXiv `id_list`, OpenAlex and
//! Semantic Scholar by DOI or `ARXIV:`, Crossref by DOI only) and the answers merged.

use std::sync::Arc;

use serde_json::json;
use toolgate_core::ToolError;

use super::fake::{FakeClock, Fakes, Reply, ask, status, tool};

const ALL: &str = r#"["arxiv", "openalex", "semantic_scholar", "crossref"]"#;

fn asked(fakes: &Fakes) -> Vec<String> {
    let mut paths: Vec<String> = fakes
        .seen()
        .into_iter()
        .map(|s| {
            let q: Vec<String> = s
                .query
                .iter()
                .filter(|(k, _)| *k != "fields")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("{}?{}", s.path, q.join("&"))
        })
        .collect();
    paths.sort();
    paths
}

#[tokio::test]
async fn an_arxiv_id_is_looked_up_everywhere_it_can_be() {
    let fakes = Fakes::recorded().await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(ALL), &clock);
    let got = ask(&tool, json!({"id": "arXiv:1706.03762v5"}))
        .await
        .unwrap();
    assert_eq!(
        asked(&fakes),
        [
            "/arxiv/api/query?id_list=1706.03762&max_results=1",
            "/openalex/works/doi:10.48550/arxiv.1706.03762?mailto=lab@example.org",
            "/s2/graph/v1/paper/ARXIV:1706.03762?",
        ]
    );
    assert_eq!(got["id"], "arXiv:1706.03762");
    let results = got["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{got:#}");
    assert_eq!(
        (&results[0]["title"], &results[0]["sources"]),
        (
            &json!("Attention Is All You Need"),
            &json!(["arxiv", "openalex", "semantic_scholar"])
        )
    );
}

#[tokio::test]
async fn a_doi_is_looked_up_by_the_indexes_that_know_dois() {
    let fakes = Fakes::recorded().await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(ALL), &clock);
    let got = ask(&tool, json!({"id": "https://doi.org/10.18653/V1/N19-1423"}))
        .await
        .unwrap();
    assert_eq!(
        asked(&fakes),
        [
            "/crossref/works/10.18653/v1/n19-1423?mailto=lab@example.org",
            "/openalex/works/doi:10.18653/v1/n19-1423?mailto=lab@example.org",
            "/s2/graph/v1/paper/DOI:10.18653/v1/n19-1423?",
        ]
    );
    assert_eq!(got["id"], "doi:10.18653/v1/n19-1423");
    assert_eq!(
        got["results"][0]["sources"],
        json!(["openalex", "semantic_scholar", "crossref"])
    );
}

#[tokio::test]
async fn an_unknown_paper_is_an_empty_list_and_a_bad_id_is_explained() {
    let missing: Reply = Arc::new(|_, _, _| Some(status(404, &[], "Not Found")));
    let fakes = Fakes::start(missing).await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(r#"["openalex", "crossref"]"#), &clock);
    let got = ask(&tool, json!({"id": "10.9999/nothing"})).await.unwrap();
    assert_eq!(
        (got["results"].clone(), got["errors"].clone()),
        (json!([]), json!([]))
    );

    let bad = [
        ask(&tool, json!({"id": "attention"})).await,
        ask(&tool, json!({"id": "1706.03762", "query": "x"})).await,
        ask(&tool, json!({"query": "  "})).await,
        ask(
            &tool,
            json!({"query": "x", "year_from": 2020, "year_to": 2019}),
        )
        .await,
    ];
    let invalid = |m: &str| Err(ToolError::InvalidArguments(m.to_owned()));
    assert_eq!(
        bad,
        [
            invalid(
                "`attention` is neither a DOI (10.1145/3292500.3330701) nor an arXiv id (2106.09685)"
            ),
            invalid("give either query (to search) or id (one paper), not both"),
            invalid("query is empty; say what to search for, or give id (a DOI or an arXiv id)"),
            invalid("year_from is after year_to"),
        ]
    );
}
