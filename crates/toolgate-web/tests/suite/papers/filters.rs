//! Each filter reaches each API as that API's documented parameter.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::fake::{FakeClock, Fakes, S2_KEY, Seen, ask, tool};

const ALL: &str = r#"["arxiv", "openalex", "semantic_scholar", "crossref"]"#;

fn query(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn by_path(mut seen: Vec<Seen>) -> Vec<Seen> {
    seen.sort_by(|a, b| a.path.cmp(&b.path));
    seen
}

#[tokio::test]
async fn filters_become_each_apis_query_parameters() {
    let fakes = Fakes::recorded().await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(ALL), &clock);
    ask(
        &tool,
        json!({"query": " attention (transformers) ", "year_from": 2017, "year_to": 2019,
               "author": "Vaswani", "venue": "cs.CL", "limit": 3}),
    )
    .await
    .unwrap();
    let agent = format!(
        "toolgate-retrieve-papers/{} (mailto:lab@example.org)",
        env!("CARGO_PKG_VERSION")
    );
    let seen = |path: &str, q: &[(&str, &str)], key: Option<&str>| Seen {
        path: path.to_owned(),
        query: query(q),
        api_key: key.map(str::to_owned),
        user_agent: Some(agent.clone()),
    };
    let fields = "title,authors,year,venue,abstract,externalIds,url,openAccessPdf";
    assert_eq!(
        by_path(fakes.seen()),
        [
            seen(
                "/arxiv/api/query",
                &[
                    (
                        "search_query",
                        "all:attention AND all:transformers AND au:Vaswani AND cat:cs.CL AND \
                         submittedDate:[201701010000 TO 201912312359]"
                    ),
                    ("start", "0"),
                    ("max_results", "3"),
                    ("sortBy", "relevance"),
                    ("sortOrder", "descending"),
                ],
                None
            ),
            seen(
                "/crossref/works",
                &[
                    ("mailto", "lab@example.org"),
                    ("query", "attention (transformers)"),
                    ("rows", "3"),
                    ("query.author", "Vaswani"),
                    ("query.container-title", "cs.CL"),
                    ("filter", "from-pub-date:2017,until-pub-date:2019"),
                ],
                None
            ),
            seen(
                "/openalex/works",
                &[
                    ("search", "attention (transformers)"),
                    ("per_page", "3"),
                    (
                        "filter",
                        "from_publication_date:2017-01-01,to_publication_date:2019-12-31,\
                         raw_author_name.search:Vaswani"
                    ),
                    ("mailto", "lab@example.org"),
                ],
                None
            ),
            seen(
                "/s2/graph/v1/paper/search",
                &[
                    ("query", "attention (transformers)"),
                    ("limit", "3"),
                    ("fields", fields),
                    ("year", "2017-2019"),
                    ("venue", "cs.CL"),
                ],
                Some(S2_KEY)
            ),
        ]
    );
}

#[tokio::test]
async fn open_access_only_and_open_year_ranges() {
    let fakes = Fakes::recorded().await;
    let clock = Arc::new(FakeClock::default());
    let tool = tool(&fakes.config(ALL), &clock);
    let got = ask(
        &tool,
        json!({"query": "bert", "year_from": 2018, "open_access_only": true}),
    )
    .await
    .unwrap();
    let asked: Vec<(String, BTreeMap<String, String>)> = by_path(fakes.seen())
        .into_iter()
        .map(|s| (s.path, s.query))
        .collect();
    let mut want_s2 = query(&[
        ("query", "bert"),
        ("limit", "10"),
        (
            "fields",
            "title,authors,year,venue,abstract,externalIds,url,openAccessPdf",
        ),
        ("year", "2018-"),
    ]);
    want_s2.insert("openAccessPdf".into(), String::new());
    // Crossref cannot tell a free text: it is not asked.
    assert_eq!(
        asked,
        [
            (
                "/arxiv/api/query".to_owned(),
                query(&[
                    (
                        "search_query",
                        "all:bert AND submittedDate:[201801010000 TO 999912312359]"
                    ),
                    ("start", "0"),
                    ("max_results", "10"),
                    ("sortBy", "relevance"),
                    ("sortOrder", "descending"),
                ])
            ),
            (
                "/openalex/works".to_owned(),
                query(&[
                    ("search", "bert"),
                    ("per_page", "10"),
                    ("filter", "from_publication_date:2018-01-01,is_oa:true"),
                    ("mailto", "lab@example.org"),
                ])
            ),
            ("/s2/graph/v1/paper/search".to_owned(), want_s2),
        ]
    );
    // What each API answered is filtered again: 2017 and closed papers are left out.
    let titles: Vec<(&str, &serde_json::Value)> = got["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["title"].as_str().unwrap(), &p["sources"]))
        .collect();
    assert_eq!(
        titles,
        [
            (
                "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
                &json!(["openalex", "semantic_scholar"])
            ),
            (
                "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
                &json!(["arxiv"])
            ),
        ]
    );
}
