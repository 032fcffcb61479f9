//! `toolgate eval bfcl` end to end: the real binary against the installed BFCL data, with the
//! scripted model server as the model, and with files of decoded outputs.

use std::path::Path;

use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};
use toolgate_eval::bfcl::BfclData;

use super::harness::{Env, Run};

const KEY_VAR: &str = "TOOLGATE_TEST_MODEL_KEY";

fn data_dir() -> String {
    BfclData::discover_from(Path::new(env!("CARGO_MANIFEST_DIR")))
        .expect("bfcl-eval in the repository's .venv (scripts/test.sh installs it)")
        .dir()
        .display()
        .to_string()
}

fn run(env: &Env, args: &[&str]) -> Run {
    let out = env
        .command()
        .env(KEY_VAR, "sk-test-model-key-0123456789")
        .args(args)
        .output()
        .unwrap();
    Run::from_output(out)
}

#[test]
fn the_configured_model_is_scored_per_category_with_failures_listed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(FakeServer::start(vec![
            Reply::Turn(FakeTurn::calls(&[(
                "c1",
                "calculate_triangle_area",
                r#"{"base": 10, "height": 5, "unit": "units"}"#,
            )])),
            Reply::Turn(FakeTurn::calls(&[(
                "c2",
                "math_factorial",
                r#"{"number": "5"}"#,
            )])),
            Reply::Turn(FakeTurn::text("About 6.4.")),
        ]))
        .unwrap();
    let port = server.addr.port();
    let env = Env::with_config(&format!(
        "[model]\nprovider = \"openai-chat\"\nmodel = \"fake-model\"\n\
         base_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\n\n\
         [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n",
        server.base_url()
    ));
    let data = data_dir();
    let r = run(
        &env,
        &[
            "eval",
            "bfcl",
            "--category",
            "simple_python",
            "--limit",
            "3",
            "--concurrency",
            "1",
            "--json",
            "--data",
            &data,
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let report = r.json();
    let simple = &report["categories"]["simple_python"];
    assert_eq!(simple["total"], 3);
    assert_eq!(simple["passed"], 1);
    let failures: Vec<(&str, &str)> = simple["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap(),
                f["failure"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        failures,
        [
            ("simple_python_1", "type_error:simple"),
            ("simple_python_2", "simple_function_checker:wrong_count"),
        ]
    );
    assert_eq!(report["overall"]["accuracy"], 1.0 / 3.0);
    assert!(!r.stdout.contains("sk-test-model-key"));

    // What the model was sent: one request per entry, the question, the functions as tools
    // (dots replaced, BFCL's language hint, JSON Schema types); no tool was executed.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let body = &requests[1].body;
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(
        body["messages"][0]["content"],
        "Calculate the factorial of 5 using math functions."
    );
    let tool = &body["tools"][0]["function"];
    assert_eq!(tool["name"], "math_factorial");
    assert_eq!(
        tool["description"],
        "Calculate the factorial of a given number. Note that the provided function is in Python 3 syntax."
    );
    assert_eq!(tool["parameters"]["type"], "object");
    assert_eq!(
        tool["parameters"]["properties"]["number"]["type"],
        "integer"
    );
}

/// Three answers with known token counts (3,000 in, 100 out in all), one of them right, at
/// $2 / $8 per million tokens: the run cost $0.0068, pass@1 per dollar is (1/3) / 0.0068,
/// 3,100 tokens per solved entry. The saved outputs keep the counts, so scoring the file
/// again (text report) gives the same figures.
#[test]
fn cost_is_reported_beside_accuracy_from_the_answers_token_counts() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(FakeServer::start(vec![
            Reply::Turn(
                FakeTurn::calls(&[(
                    "c1",
                    "calculate_triangle_area",
                    r#"{"base": 10, "height": 5, "unit": "units"}"#,
                )])
                .with_usage(1200, 30),
            ),
            Reply::Turn(
                FakeTurn::calls(&[("c2", "math_factorial", r#"{"number": "5"}"#)])
                    .with_usage(800, 20),
            ),
            Reply::Turn(FakeTurn::text("About 6.4.").with_usage(1000, 50)),
        ]))
        .unwrap();
    let port = server.addr.port();
    let env = Env::with_config(&format!(
        "[model]\nprovider = \"openai-chat\"\nmodel = \"fake-model\"\n\
         base_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\n\n\
         [model.prices.\"fake-model\"]\ninput_usd_per_mtok = 2.0\noutput_usd_per_mtok = 8.0\n\n\
         [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n",
        server.base_url()
    ));
    let data = data_dir();
    let saved = env.ws.join("saved.jsonl").display().to_string();
    let r = run(
        &env,
        &[
            "eval",
            "bfcl",
            "--category",
            "simple_python",
            "--limit",
            "3",
            "--concurrency",
            "1",
            "--json",
            "--data",
            &data,
            "--save",
            &saved,
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let report = r.json();
    let want = serde_json::json!({
        "metered": 3,
        "input_tokens": 3000,
        "output_tokens": 100,
        "tokens_per_solved": 3100.0,
        "cost_usd": 0.0068,
        "pass_at_1_per_usd": (1.0 / 3.0) / 0.0068,
    });
    assert_eq!(report["overall"]["cost"], want);
    assert_eq!(report["categories"]["simple_python"]["cost"], want);
    assert_eq!(
        report["categories"]["simple_python"]["failures"][0]["tokens"],
        serde_json::json!({"input_tokens": 800, "output_tokens": 20})
    );

    let r = run(
        &env,
        &[
            "eval",
            "bfcl",
            "--category",
            "simple_python",
            "--limit",
            "3",
            "--outputs",
            &saved,
            "--underscore-names",
            "--data",
            &data,
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let lines: Vec<Vec<&str>> = r
        .stdout
        .lines()
        .take(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        [
            vec![
                "category",
                "total",
                "passed",
                "accuracy",
                "tokens",
                "in",
                "tokens",
                "out",
                "tokens/solved",
                "cost",
                "pass@1/$"
            ],
            vec![
                "simple_python",
                "3",
                "1",
                "33.3%",
                "3000",
                "100",
                "3100",
                "$0.0068",
                "49.02"
            ],
            vec![
                "overall", "3", "1", "33.3%", "3000", "100", "3100", "$0.0068", "49.02"
            ],
        ]
    );
}

#[test]
fn undecodable_calls_fail_ast_entries_and_count_as_no_call_for_irrelevance() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(FakeServer::start(vec![
            Reply::Turn(FakeTurn::calls(&[(
                "c1",
                "calculate_triangle_area",
                "{base: 10",
            )])),
            Reply::Turn(FakeTurn::calls(&[(
                "c2",
                "determine_body_mass_index",
                "{oops",
            )])),
            Reply::Turn(FakeTurn::calls(&[(
                "c3",
                "math_sum",
                r#"{"numbers": [1, 2]}"#,
            )])),
        ]))
        .unwrap();
    let port = server.addr.port();
    let env = Env::with_config(&format!(
        "[model]\nprovider = \"openai-responses\"\nmodel = \"fake-model\"\n\
         base_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\n\n\
         [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n",
        server.base_url()
    ));
    let data = data_dir();
    let saved = env.ws.join("saved.jsonl").display().to_string();
    let r = run(
        &env,
        &[
            "eval",
            "bfcl",
            "--category",
            "simple_python,irrelevance",
            "--limit",
            "1",
            "--concurrency",
            "1",
            "--json",
            "--data",
            &data,
            "--save",
            &saved,
        ],
    );
    // One request per entry, in category order: simple_python_0, irrelevance_0 … and the
    // script has one reply too many, which nothing asks for.
    assert_eq!(r.code, 0, "{r:#?}");
    let report = r.json();
    assert_eq!(
        report["categories"]["simple_python"]["failures"][0]["failure"]["kind"],
        "ast_decoder:decoder_failed"
    );
    assert_eq!(report["categories"]["irrelevance"]["passed"], 1);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].path, "/v1/responses");
    let saved = std::fs::read_to_string(&saved).unwrap();
    assert_eq!(saved.lines().count(), 2);
    assert!(
        saved
            .lines()
            .next()
            .unwrap()
            .contains("\"id\":\"simple_python_0\""),
        "{saved}"
    );
}

#[test]
fn an_outputs_file_is_scored_without_a_model() {
    let env = Env::new();
    let outputs = env.ws.join("outputs.jsonl");
    std::fs::write(
        &outputs,
        concat!(
            r#"{"id": "simple_python_0", "output": [{"calculate_triangle_area": {"base": 10, "height": 5}}]}"#,
            "\n",
            r#"{"id": "simple_python_1", "output": [{"math.factorial": {"number": 5, "extra": 1}}]}"#,
            "\n",
            r#"{"id": "irrelevance_0", "output": []}"#,
            "\n",
            r#"{"id": "irrelevance_1", "output": [{"math.sum": {"numbers": [1, 2, 3]}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let data = data_dir();
    let file = outputs.display().to_string();
    let r = run(
        &env,
        &[
            "eval",
            "bfcl",
            "--category",
            "simple_python,irrelevance",
            "--limit",
            "2",
            "--outputs",
            &file,
            "--data",
            &data,
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["category", "total", "passed", "accuracy"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["simple_python", "2", "1", "50.0%"]
    );
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["irrelevance", "2", "1", "50.0%"]
    );
    assert_eq!(
        lines[3].split_whitespace().collect::<Vec<_>>(),
        ["overall", "4", "2", "50.0%"]
    );
    assert!(
        r.stdout
            .contains("simple_python_1  simple_function_checker:unexpected_param"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("irrelevance_1  irrelevance_error:decoder_success"),
        "{}",
        r.stdout
    );
}

#[test]
fn bad_categories_and_malformed_outputs_are_explained() {
    let env = Env::new();
    let data = data_dir();
    let r = run(
        &env,
        &["eval", "bfcl", "--category", "simple_rust", "--data", &data],
    );
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(
        r.stderr.contains("unknown BFCL category `simple_rust`"),
        "{}",
        r.stderr
    );

    let outputs = env.ws.join("bad.jsonl");
    std::fs::write(&outputs, "{\"id\": \"simple_python_0\"}\n").unwrap();
    let file = outputs.display().to_string();
    let r = run(&env, &["eval", "bfcl", "--outputs", &file, "--data", &data]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(r.stderr.contains("bad.jsonl:1"), "{}", r.stderr);

    let r = run(&env, &["eval", "bfcl", "--data", "/nonexistent/bfcl"]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(
        r.stderr.contains("pip install --no-deps bfcl-eval"),
        "{}",
        r.stderr
    );
}

#[test]
fn retrieval_scores_bm25_on_the_real_catalog_and_refuses_rerank_without_a_reranker() {
    let env = Env::new();
    let data = data_dir();
    let r = run(
        &env,
        &[
            "eval",
            "retrieval",
            "--data",
            &data,
            "--sizes",
            "100",
            "--by-name",
            "--json",
        ],
    );
    r.assert_code(0);
    let rows = r.json();
    let find = |catalog: &str, retriever: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|x| {
                x["catalog"].as_str().unwrap().starts_with(catalog) && x["retriever"] == retriever
            })
            .unwrap_or_else(|| panic!("no row {catalog} {retriever}: {rows:#}"))
            .clone()
    };
    // No model configured: BM25 only, at 100 and at the full BFCL catalog (3,526 docs, 2,501
    // questions), each also by name.
    assert_eq!(rows.as_array().unwrap().len(), 4, "{rows:#}");
    let full = find("full", "bm25");
    assert_eq!(full["tools"], 3526, "{full:#}");
    assert_eq!(full["queries"], 2501, "{full:#}");
    let by_name = find("full", "bm25 (by name)");
    let (r5, named_r5) = (
        full["recall_at_5"].as_f64().unwrap(),
        by_name["recall_at_5"].as_f64().unwrap(),
    );
    // docs/rag.md: 0.661 / 0.877 at 10,000 tools; fewer distractors here.
    assert!(r5 > 0.6 && named_r5 > r5 && named_r5 < 1.0, "{rows:#}");
    let small = find("100", "bm25");
    assert!(small["recall_at_10"].as_f64().unwrap() > r5, "{rows:#}");

    let r = run(
        &env,
        &[
            "eval",
            "retrieval",
            "--data",
            &data,
            "--rerank",
            "--sizes",
            "100",
        ],
    );
    r.assert_code(1);
    assert!(r.stderr.contains("--rerank needs [rag.reranker]"), "{r:#?}");

    // A reranker but no model: there is no hybrid ranking to reorder, and it says so
    // rather than leaving the row out.
    let env =
        Env::with_config("[rag.reranker]\nurl = \"https://rerank.example/v1\"\nmodel = \"m\"\n");
    let r = run(
        &env,
        &[
            "eval",
            "retrieval",
            "--data",
            &data,
            "--rerank",
            "--sizes",
            "100",
        ],
    );
    r.assert_code(1);
    assert!(r.stderr.contains("needs an embedding model"), "{r:#?}");
}
