//! `toolgate tools search`: Tool RAG through the role's filter chain, from the binary.

use std::path::PathBuf;

use serde_json::Value;

use super::harness::Env;

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn search_ranks_builtins_and_hides_what_the_role_may_not_see() {
    let env = Env::with_config(
        r#"
[roles.reader]
tools = ["read_*", "list_*", "search_*"]
"#,
    );
    let all = env
        .run(&["tools", "search", "write text content to a file", "--json"])
        .assert_code(0)
        .json();
    let top = names(&all);
    assert_eq!(top[0], "write_file", "{all:#}");
    assert!(all[0]["score"].as_f64().unwrap() > 0.0);
    assert!(all[0]["bm25"]["rank"].as_u64() == Some(1));

    // The best match is hidden by the allowlist (role) and by the risk policy (readonly
    // denies write): it never appears, and the K slots are filled with visible tools.
    for role in ["reader", "readonly"] {
        let hits = env
            .run(&[
                "tools",
                "search",
                "write text content to a file",
                "--role",
                role,
                "-k",
                "3",
                "--json",
            ])
            .assert_code(0)
            .json();
        let got = names(&hits);
        assert!(
            !got.iter()
                .any(|n| n == "write_file" || n == "edit_file" || n == "shell"),
            "{role}: {got:?}"
        );
        assert_eq!(got.len(), 3, "{role}: {got:?}");
    }

    let explain = env.run(&[
        "--role",
        "reader",
        "tools",
        "search",
        "list a directory",
        "--explain",
    ]);
    explain.assert_code(0);
    assert!(explain.stdout.contains("list_dir"), "{explain:#?}");
    assert!(explain.stdout.contains("hidden by role"), "{explain:#?}");
    assert!(!explain.stdout.contains("write_file"), "{explain:#?}");

    let bad = env.run(&["tools", "search", "x", "--role", "nobody"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("unknown role `nobody`"), "{bad:#?}");
}

fn model_dir() -> PathBuf {
    toolgate_testkit::packaged_model_dir()
}

#[test]
fn hybrid_search_embeds_once_then_reads_the_cache() {
    let env = Env::with_config(&format!(
        "[rag]\nmodel_dir = {:?}\nmode = \"hybrid\"\n",
        model_dir().display().to_string()
    ));
    let first = env.run(&[
        "tools",
        "search",
        "run a command in a terminal",
        "--explain",
    ]);
    first.assert_code(0);
    assert!(first.stdout.contains("mode hybrid"), "{first:#?}");
    assert!(first.stdout.contains(" 0 from the cache"), "{first:#?}");
    assert!(first.stdout.contains("shell"), "{first:#?}");
    let second = env.run(&[
        "tools",
        "search",
        "run a command in a terminal",
        "--explain",
    ]);
    second.assert_code(0);
    assert!(second.stdout.contains("(0 embedded now"), "{second:#?}");
    let hits = env
        .run(&["tools", "search", "run a command in a terminal", "--json"])
        .assert_code(0)
        .json();
    assert_eq!(hits[0]["name"], "shell", "{hits:#}");
    assert!(hits[0]["dense"]["rank"].as_u64().is_some(), "{hits:#}");
}

/// `doctor`'s `tool rag` checks, by name: (status, detail).
fn rag_checks(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("tool rag"))
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
                c["detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn doctor_embeds_with_the_model_and_fails_a_refused_reranker() {
    let env = Env::with_config(&format!(
        "[rag]\nmodel_dir = {:?}\n\n[rag.reranker]\nurl = \"http://127.0.0.1:9/v1\"\nmodel = \"rerank-small\"\n",
        model_dir().display().to_string()
    ));
    let run = env.run(&["doctor", "--json"]);
    let report = run.json();
    let checks = rag_checks(&report);
    assert_eq!(checks.len(), 2, "{report:#}");
    assert_eq!(checks[0].1, "ok", "{report:#}");
    assert!(checks[0].2.contains("384 dimensions"), "{report:#}");
    // Loopback is not allowed by [egress]: the guard's refusal, not a connection error.
    assert_eq!(checks[1].1, "fail", "{report:#}");
    assert!(checks[1].2.contains("127.0.0.1"), "{report:#}");
    assert_eq!(report["ok"], false);
    run.assert_code(1);

    let env = Env::with_config(
        "[rag.endpoint]\nurl = \"https://api.example.com/v1\"\nmodel = \"m\"\napi_key_env = \"TOOLGATE_TEST_UNSET_KEY\"\n",
    );
    let report = env.run(&["doctor", "--json"]).json();
    let checks = rag_checks(&report);
    assert_eq!(checks.len(), 1, "{report:#}");
    assert_eq!(checks[0].1, "fail");
    assert!(
        checks[0].2.contains("`TOOLGATE_TEST_UNSET_KEY` is not set"),
        "{report:#}"
    );
}

#[test]
fn a_refused_reranker_leaves_the_fused_order_and_explain_says_so() {
    let env = Env::with_config(
        "[rag.reranker]\nurl = \"http://127.0.0.1:9/v1\"\nmodel = \"rerank-small\"\n",
    );
    let run = env.run(&["tools", "search", "write text to a file", "--explain"]);
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("[rag.reranker] did not answer: fused order"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("write_file"), "{run:#?}");
    assert!(run.stderr.contains("reranking failed"), "{run:#?}");
    let hits = env
        .run(&["tools", "search", "write text to a file", "--json"])
        .assert_code(0)
        .json();
    assert!(hits[0]["rerank"].is_null(), "{hits:#}");
}
