//! The filter chain's guarantees (R-RAG-1): a tool the caller may not see never appears,
//! even as the best match, and never takes a permitted tool's place in the top K.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::SpecTool;
use serde_json::json;
use toolgate_core::Tool;
use toolgate_gateway::policy::{DecisionName, RoleConfig, Roles, RuleConfig};
use toolgate_protocol::{Risk, ToolSpec};
use toolgate_rag::{FilterChain, FilterTally, Fusion, Mode, Stage, ToolSearch};
use toolgate_registry::{Availability, Catalog};

fn tool(name: &str, desc: &str, risk: Risk) -> Arc<dyn Tool> {
    Arc::new(SpecTool(
        ToolSpec::new(name, desc, json!({"type": "object"})).with_risk(risk),
    ))
}

/// Ten weather tools; the four best matches are each hidden by a different stage.
fn catalog() -> Catalog {
    let c = Catalog::new();
    c.register_many(vec![
        // Best lexical matches, each hidden from role `analyst` by one stage:
        tool(
            "secret_weather_weather",
            "Weather weather weather forecast.",
            Risk::Read,
        ),
        tool(
            "weather_forecast_down",
            "Weather forecast weather.",
            Risk::Read,
        ),
        tool(
            "weather_forecast_delete",
            "Delete the weather forecast weather.",
            Risk::Write,
        ),
        tool(
            "weather_forecast_purge",
            "Purge weather forecast weather.",
            Risk::Read,
        ),
        // Permitted ones, weaker matches:
        tool("get_forecast", "Weather forecast for a city.", Risk::Read),
        tool("hourly_forecast", "Hourly weather forecast.", Risk::Read),
        tool(
            "forecast_alerts",
            "Severe weather alerts in the forecast.",
            Risk::Read,
        ),
        tool("tide_tables", "Tide tables for a harbour.", Risk::Read),
    ])
    .unwrap();
    c.set_availability(
        "weather_forecast_down",
        Availability::Unavailable("server down".into()),
    );
    c
}

fn roles() -> Roles {
    let analyst = RoleConfig {
        tools: vec!["*forecast*".into(), "tide_*".into()],
        write: DecisionName::Deny,
        rules: vec![RuleConfig {
            tool: "*_purge".into(),
            decision: DecisionName::Deny,
            confirm: None,
        }],
        ..RoleConfig::default()
    };
    Roles::compile(&BTreeMap::from([("analyst".to_owned(), analyst)])).unwrap()
}

#[tokio::test]
async fn denied_tools_never_appear_and_never_displace() {
    let catalog = catalog();
    let snap = catalog.snapshot();
    let roles = roles();
    let search = ToolSearch::new(None, None, Fusion::default());
    let specs: Vec<ToolSpec> = snap.entries().map(|e| e.spec().clone()).collect();
    search.refresh(&specs).await.unwrap();

    // Unfiltered, the hidden tools are the best matches.
    let all = search
        .search("weather forecast", 4, Mode::Bm25, &|_| true)
        .await
        .unwrap();
    let mut top: Vec<&str> = all.iter().map(|h| h.name.as_str()).collect();
    top.sort_unstable();
    assert_eq!(
        top,
        [
            "secret_weather_weather",
            "weather_forecast_delete",
            "weather_forecast_down",
            "weather_forecast_purge"
        ]
    );

    let chain = FilterChain::new(roles.get("analyst").unwrap(), &snap);
    assert_eq!(chain.check("secret_weather_weather"), Err(Stage::Role));
    assert_eq!(
        chain.check("weather_forecast_down"),
        Err(Stage::Availability)
    );
    assert_eq!(chain.check("weather_forecast_delete"), Err(Stage::Risk));
    assert_eq!(chain.check("weather_forecast_purge"), Err(Stage::Risk));
    let admit = |n: &str| chain.admits(n);
    for k in [1, 3, 100] {
        for mode in [Mode::Bm25, Mode::Hybrid] {
            let hits = search
                .search("weather forecast", k, mode, &admit)
                .await
                .unwrap();
            let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
            assert!(names.iter().all(|n| chain.admits(n)), "{names:?}");
            // Filtering ran before the cut: K permitted tools come back whenever K exist.
            assert_eq!(names.len(), k.min(3), "{names:?}");
            assert_eq!(names[0], "get_forecast");
        }
    }
    // Asking for the hidden tool by its exact name still does not reveal it.
    let hits = search
        .search("secret_weather_weather", 10, Mode::Bm25, &admit)
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.name != "secret_weather_weather"));
    assert_eq!(
        chain.tally(
            search
                .with_index(|ix| ix.names().map(str::to_owned).collect::<Vec<_>>())
                .iter()
                .map(String::as_str)
        ),
        FilterTally {
            role: 1,
            availability: 1,
            risk: 2,
            admitted: 4
        }
    );
}
