//! Tool RAG in the agent loop, driven by the fake model server: over the threshold the model
//! sees the top K for the user's message plus `search_tools`, and what its searches find is
//! loaded into the next turns; a tool the role may not see never appears in any request,
//! even as the best match; at or below the threshold it sees every tool and no meta-tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::SpecTool;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};
use toolgate_agent::{
    Agent, AgentOptions, Message, ModelConfig, Provider, Silent, ToolResult, connect_with_key,
};
use toolgate_app::rag::RetrievalSelector;
use toolgate_audit::Durability;
use toolgate_core::Tool;
use toolgate_gateway::policy::{RoleConfig, Roles};
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::ToolSpec;
use toolgate_rag::{CatalogSearch, Fusion, Mode, SEARCH_TOOLS, SearchToolsTool, ToolSearch};
use toolgate_registry::Catalog;

fn tool(name: &str, description: &str) -> Arc<dyn Tool> {
    Arc::new(SpecTool(ToolSpec::new(
        name,
        description,
        json!({"type": "object"}),
    )))
}

const THRESHOLD: usize = 30;
const K: usize = 3;
/// The best match for the weather question, outside role `analyst`'s allowlist.
const DENIED: &str = "secret_weather_forecast";

/// `fillers` unrelated tools plus weather, currency and the denied tool.
fn tools(fillers: usize) -> Vec<Arc<dyn Tool>> {
    let mut all = vec![
        tool(
            DENIED,
            "Weather forecast: the weather in any city, the forecast weather.",
        ),
        tool("get_weather", "Current weather in a city."),
        tool("get_forecast", "Weather forecast for the next days."),
        tool(
            "convert_currency",
            "Convert an amount between currencies at today's exchange rate.",
        ),
        tool("get_exchange_rates", "Exchange rates of a currency."),
    ];
    let topics = [
        "garden", "invoice", "printer", "violin", "glacier", "tennis", "pottery",
    ];
    for i in 0..fillers {
        let topic = topics[i % topics.len()];
        all.push(tool(
            &format!("filler_{i:02}"),
            &format!("Manage the {topic} records, number {i}."),
        ));
    }
    all
}

struct Setup {
    _dir: tempfile::TempDir,
    gateway: Arc<Gateway>,
    search: Arc<CatalogSearch>,
}

fn setup(fillers: usize) -> Setup {
    setup_with(fillers, GatewayConfig::default())
}

fn setup_with(fillers: usize, mut cfg: GatewayConfig) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    cfg.roles = BTreeMap::from([(
        "analyst".to_owned(),
        RoleConfig {
            tools: vec![
                "get_*".into(),
                "convert_*".into(),
                "filler_*".into(),
                SEARCH_TOOLS.into(),
            ],
            ..RoleConfig::default()
        },
    )]);
    let catalog = Arc::new(Catalog::new());
    catalog.register_many(tools(fillers)).unwrap();
    let roles = Arc::new(Roles::compile(&cfg.roles).unwrap());
    let search = Arc::new(CatalogSearch::new(
        Arc::new(ToolSearch::new(None, None, Fusion::default())),
        Arc::clone(&catalog),
        roles,
        Mode::Hybrid,
    ));
    catalog
        .register_many(vec![
            Arc::new(SearchToolsTool::new(Arc::clone(&search), K)) as Arc<dyn Tool>
        ])
        .unwrap();
    let deps = GatewayDeps::open_dir(p, catalog, Durability::Durable).unwrap();
    Setup {
        gateway: Arc::new(Gateway::new(deps, &cfg).unwrap()),
        search,
        _dir: dir,
    }
}

fn agent(s: &Setup, provider: Provider, server: &FakeServer) -> Agent {
    let config = ModelConfig {
        provider,
        model: "fake-model".into(),
        base_url: Some(server.base_url()),
        max_tokens: 256,
        ..ModelConfig::default()
    };
    let client =
        connect_with_key(&config, &server.egress(), Some("sk-test-0123456789".into())).unwrap();
    let options = AgentOptions {
        role: "analyst".into(),
        stream: false,
        max_steps: 5,
        ..AgentOptions::default()
    };
    Agent::new(client, Arc::clone(&s.gateway), options).with_selector(Arc::new(
        RetrievalSelector::new(Arc::clone(&s.search), THRESHOLD, K),
    ))
}

fn code(r: &ToolResult) -> String {
    let v: Value = serde_json::from_str(&r.content).unwrap();
    if v["ok"] == json!(true) {
        "ok".into()
    } else {
        v["error"]["code"].as_str().unwrap().to_owned()
    }
}

const PROVIDERS: [Provider; 3] = [
    Provider::OpenAiChat,
    Provider::OpenAiResponses,
    Provider::Anthropic,
];

#[tokio::test]
async fn over_the_threshold_the_model_sees_top_k_then_what_it_searched_for() {
    for provider in PROVIDERS {
        let s = setup(40);
        let server = FakeServer::start(vec![
            Reply::Turn(FakeTurn::calls(&[(
                "call_s",
                SEARCH_TOOLS,
                r#"{"query": "convert currency exchange rate", "k": 2}"#,
            )])),
            // The found tool, the denied one (by name, never offered) and a filler that was
            // never offered: the gateway decides each.
            Reply::Turn(FakeTurn::calls(&[
                ("call_c", "convert_currency", "{}"),
                ("call_d", DENIED, "{}"),
                ("call_f", "filler_07", "{}"),
            ])),
            Reply::Turn(FakeTurn::text("done")),
        ])
        .await
        .unwrap();
        let agent = agent(&s, provider, &server);
        let mut history = vec![Message::user("What is the weather forecast in Paris?")];
        let out = agent
            .run(&mut history, &CancellationToken::new(), &Silent)
            .await
            .unwrap();
        assert_eq!(out.text, "done");
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{provider:?}");
        let [first, second, third] = [0, 1, 2].map(|i| requests[i].tool_names());

        // Step 1: the (at most K) tools matching the question plus search_tools, nothing
        // else: BM25 finds two permitted weather tools; the denied one would rank first.
        assert_eq!(
            first,
            ["get_forecast", "get_weather", SEARCH_TOOLS],
            "{provider:?}"
        );
        // Step 2: the found tools are loaded, the top K stays.
        assert!(
            second.contains(&"convert_currency".to_owned()),
            "{second:?}"
        );
        assert!(
            second.contains(&"get_exchange_rates".to_owned()),
            "{second:?}"
        );
        assert_eq!(
            second,
            [
                "get_forecast",
                "get_weather",
                "convert_currency",
                "get_exchange_rates",
                SEARCH_TOOLS
            ],
            "{provider:?}"
        );

        // Step 3: still loaded; the filler the model called is loaded too, the denied one not.
        assert!(third.contains(&"convert_currency".to_owned()), "{third:?}");
        assert!(third.contains(&"filler_07".to_owned()), "{third:?}");

        // The denied tool is the best lexical match, yet never appears in any request.
        for (i, r) in requests.iter().enumerate() {
            assert!(
                !r.body.to_string().contains(&format!("\"{DENIED}\"")) || i == 2,
                "{provider:?}: request {i} names {DENIED}"
            );
            assert!(!r.tool_names().contains(&DENIED.to_owned()));
        }
        // The search result the model read does not name it either.
        let Message::ToolResults { results } = &history[2] else {
            panic!("no search result")
        };
        assert!(
            !results[0].content.contains(DENIED),
            "{}",
            results[0].content
        );
        assert_eq!(code(&results[0]), "ok");
        // Calls are the gateway's to decide: a tool not offered but allowed runs, the denied
        // one is refused.
        let Message::ToolResults { results } = &history[4] else {
            panic!("no results")
        };
        let codes: Vec<String> = results.iter().map(code).collect();
        assert_eq!(codes, ["ok", "forbidden", "ok"], "{provider:?}");
    }
}

#[tokio::test]
async fn at_or_below_the_threshold_every_tool_and_no_search_tools() {
    // 4 allowed tools + 26 fillers = 30 visible task tools: not over the threshold.
    let s = setup(26);
    assert_eq!(s.search.visible_count("analyst"), THRESHOLD);
    let server = FakeServer::start(vec![Reply::Turn(FakeTurn::text("hello"))])
        .await
        .unwrap();
    let agent = agent(&s, Provider::OpenAiChat, &server);
    let mut history = vec![Message::user("What is the weather forecast in Paris?")];
    agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    let offered = server.requests()[0].tool_names();
    assert_eq!(offered.len(), THRESHOLD, "{offered:?}");
    assert!(!offered.contains(&SEARCH_TOOLS.to_owned()));
    assert!(!offered.contains(&DENIED.to_owned()));
}

#[tokio::test]
async fn loaded_tools_are_capped_and_the_oldest_drop_out() {
    let s = setup(40);
    let server = FakeServer::start(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            SEARCH_TOOLS,
            r#"{"query": "garden records", "k": 3}"#,
        )])),
        Reply::Turn(FakeTurn::calls(&[(
            "call_2",
            SEARCH_TOOLS,
            r#"{"query": "violin records", "k": 3}"#,
        )])),
        Reply::Turn(FakeTurn::text("done")),
    ])
    .await
    .unwrap();
    let client = {
        let config = ModelConfig {
            provider: Provider::OpenAiChat,
            model: "fake-model".into(),
            base_url: Some(server.base_url()),
            ..ModelConfig::default()
        };
        connect_with_key(&config, &server.egress(), Some("sk-test-0123456789".into())).unwrap()
    };
    let options = AgentOptions {
        role: "analyst".into(),
        stream: false,
        ..AgentOptions::default()
    };
    let agent = Agent::new(client, Arc::clone(&s.gateway), options).with_selector(Arc::new(
        RetrievalSelector::new(Arc::clone(&s.search), THRESHOLD, 1).with_max_loaded(3),
    ));
    let mut history = vec![Message::user("hello")];
    agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    let requests = server.requests();
    let second = requests[1].tool_names();
    let third = requests[2].tool_names();
    let garden = |v: &[String]| v.iter().filter(|n| is_topic(n, 0)).count();
    let violin = |v: &[String]| v.iter().filter(|n| is_topic(n, 3)).count();
    assert_eq!(garden(&second), 3, "{second:?}");
    // The violin search fills the cap of 3: the garden tools, found earlier, drop out.
    assert_eq!((garden(&third), violin(&third)), (0, 3), "{third:?}");
}

/// Filler `i` is about topic `i % 7` (0 = garden, 3 = violin).
fn is_topic(name: &str, topic: usize) -> bool {
    name.strip_prefix("filler_")
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|i| i % 7 == topic)
}

#[tokio::test]
async fn a_search_result_cut_by_result_governance_still_loads_what_it_found() {
    let mut cfg = GatewayConfig::default();
    cfg.limits.result_budget_bytes = 300;
    let s = setup_with(40, cfg);
    let server = FakeServer::start(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_s",
            SEARCH_TOOLS,
            r#"{"query": "convert currency exchange rate", "k": 2}"#,
        )])),
        Reply::Turn(FakeTurn::text("done")),
    ])
    .await
    .unwrap();
    let agent = agent(&s, Provider::Anthropic, &server);
    let mut history = vec![Message::user("What is the weather forecast in Paris?")];
    agent
        .run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    let Message::ToolResults { results } = &history[2] else {
        panic!("no search result")
    };
    assert!(
        results[0].content.contains("\"truncated\""),
        "{}",
        results[0].content
    );
    let second = server.requests()[1].tool_names();
    assert!(
        second.contains(&"convert_currency".to_owned()),
        "{second:?}"
    );
    assert!(
        second.contains(&"get_exchange_rates".to_owned()),
        "{second:?}"
    );
}

#[tokio::test]
async fn loaded_tools_stay_for_the_next_user_message_of_the_conversation() {
    let s = setup(40);
    let server = FakeServer::start(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_s",
            SEARCH_TOOLS,
            r#"{"query": "convert currency", "k": 1}"#,
        )])),
        Reply::Turn(FakeTurn::text("found")),
        Reply::Turn(FakeTurn::text("and the glacier too")),
    ])
    .await
    .unwrap();
    let agent = agent(&s, Provider::OpenAiResponses, &server);
    let mut history = vec![Message::user("What is the weather forecast in Paris?")];
    let cancel = CancellationToken::new();
    agent.run(&mut history, &cancel, &Silent).await.unwrap();
    // A second turn of the chat (or a resumed session): a new question, new top K, and the
    // tool found earlier is still offered.
    history.push(Message::user("Show the glacier records"));
    agent.run(&mut history, &cancel, &Silent).await.unwrap();
    let third = server.requests()[2].tool_names();
    assert!(third.contains(&"convert_currency".to_owned()), "{third:?}");
    assert!(!third.contains(&"get_weather".to_owned()), "{third:?}");
    assert!(third.iter().any(|n| n.starts_with("filler_")), "{third:?}");
}
