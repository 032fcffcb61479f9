//! `run_model` against the scripted fake model server (toolgate-agent's `fake` feature):
//! one request per entry, the functions as tools, the answers judged.

use std::collections::HashMap;

use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};
use toolgate_agent::{ModelConfig, Provider, connect_with_key};
use toolgate_eval::bfcl::run::{RunOptions, parse_output_line, run_model, score};
use toolgate_eval::bfcl::{Category, CheckOptions};

use super::data::data;

#[tokio::test]
async fn a_model_run_is_judged_per_entry() {
    let data = data();
    let mut cases: Vec<_> = data
        .load(Category::SimplePython)
        .unwrap()
        .into_iter()
        .take(4)
        .collect();
    cases.extend(
        data.load(Category::Irrelevance)
            .unwrap()
            .into_iter()
            .take(2),
    );
    let script = vec![
        Reply::Turn(FakeTurn::calls(&[(
            "c1",
            "calculate_triangle_area",
            r#"{"base": 10, "height": 5}"#,
        )])),
        Reply::Turn(FakeTurn::calls(&[(
            "c2",
            "math_factorial",
            r#"{"number": 6}"#,
        )])),
        Reply::Turn(FakeTurn::text("The hypotenuse is about 6.4.")),
        Reply::Turn(FakeTurn::calls(&[(
            "c4",
            "algebra_quadratic_roots",
            "{a: 1",
        )])),
        Reply::Turn(FakeTurn::text("I cannot compute that with these tools.")),
        Reply::Turn(FakeTurn::calls(&[(
            "c6",
            "math_sum",
            r#"{"numbers": [1, 2]}"#,
        )])),
    ];
    let server = FakeServer::start(script).await.unwrap();
    let config = ModelConfig {
        provider: Provider::OpenAiChat,
        model: "fake-model".into(),
        base_url: Some(server.base_url()),
        max_tokens: 256,
        ..ModelConfig::default()
    };
    let client = connect_with_key(&config, &server.egress(), Some("test-key".into())).unwrap();
    let options = RunOptions {
        concurrency: 1,
        ..RunOptions::default()
    };
    let produced = run_model(client.as_ref(), &cases, &options).await;
    let by_id: HashMap<String, _> = cases
        .iter()
        .map(|c| c.entry.id.clone())
        .zip(produced)
        .collect();
    let report = score(
        &cases,
        &by_id,
        CheckOptions {
            underscore_to_dot: true,
        },
    );

    let simple = &report.categories[&Category::SimplePython];
    assert_eq!((simple.total, simple.passed), (4, 1));
    let kinds: Vec<(&str, &str)> = simple
        .failures
        .iter()
        .map(|f| (f.id.as_str(), f.failure.as_ref().unwrap().kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("simple_python_1", "value_error:others"),
            ("simple_python_2", "simple_function_checker:wrong_count"),
            ("simple_python_3", "ast_decoder:decoder_failed"),
        ]
    );
    let irrelevance = &report.categories[&Category::Irrelevance];
    assert_eq!((irrelevance.total, irrelevance.passed), (2, 1));
    assert_eq!(
        irrelevance.failures[0]
            .failure
            .as_ref()
            .unwrap()
            .kind
            .as_str(),
        "irrelevance_error:decoder_success"
    );
    assert_eq!(report.overall(), (2, 6));

    // What the model was sent: the question, the functions as tools (dots replaced, the
    // language hint, float as number), no tool executed.
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    let body = &requests[1].body;
    assert_eq!(
        body["messages"][0]["content"],
        "Calculate the factorial of 5 using math functions."
    );
    let tool = &body["tools"][0]["function"];
    assert_eq!(tool["name"], "math_factorial");
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .ends_with("Note that the provided function is in Python 3 syntax.")
    );
    assert_eq!(tool["parameters"]["type"], "object");
}

#[test]
fn outputs_files_are_scored_and_missing_entries_counted() {
    let cases = data().load(Category::SimplePython).unwrap();
    let lines = [
        r#"{"id": "simple_python_0", "output": [{"calculate_triangle_area": {"base": 10, "height": 5}}]}"#,
        r#"{"id": "simple_python_1", "output": [{"math.factorial": {"number": 5}}]}"#,
        r#"{"id": "simple_python_2", "output": []}"#,
    ];
    let produced: HashMap<_, _> = lines
        .iter()
        .map(|l| parse_output_line(l).unwrap())
        .collect();
    let report = score(&cases, &produced, CheckOptions::default());
    let s = &report.categories[&Category::SimplePython];
    assert_eq!((s.total, s.passed, s.missing), (3, 2, 397));
    let json = report.to_json();
    assert_eq!(json["overall"]["total"], 3);
    assert_eq!(
        json["categories"]["simple_python"]["by_kind"]["simple_function_checker:wrong_count"],
        1
    );
}
