//! `toolgate tools lint` end to end: the real catalog (built-ins with the web tools on),
//! each output format, `--server`, and the exit status that CI keys on.

use serde_json::json;

use super::harness::Env;

const WEB: &str = "[web.url_read]\nenabled = true\n\
                   [web.search]\nbackend = \"searxng\"\nbase_url = \"https://searx.example.org\"\n\
                   [web.papers]\n";

#[test]
fn the_builtin_catalog_is_linted_with_a_fix_per_finding() {
    let env = Env::with_config(WEB);
    let r = env.run(&["tools", "lint", "--format", "json"]);
    r.assert_code(0);
    let report = r.json();
    assert_eq!(report["tools"], 10, "{report:#}");
    assert_eq!(report["counts"]["error"], 0, "{report:#}");
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .all(|f| !f["fix"].as_str().unwrap().is_empty()),
        "{report:#}"
    );
    let url_read = findings.iter().find(|f| f["tool"] == "url_read").unwrap();
    assert_eq!(
        url_read,
        &json!({
            "tool": "url_read", "rule": "name-verb", "severity": "note",
            "message": "`url_read` does not start with a verb",
            "fix": "put the verb first: `read_url`",
        })
    );

    let r = env.run(&["tools", "lint", "--format", "sarif", "--fail-on", "note"]);
    r.assert_code(2);
    let sarif = r.json();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());

    let r = env.run(&["tools", "lint"]);
    r.assert_code(0);
    let row: Vec<&str> = r
        .stdout
        .lines()
        .find(|l| l.starts_with("url_read "))
        .unwrap()
        .split_whitespace()
        .take(5)
        .collect();
    assert_eq!(row, ["url_read", "note", "name-verb", "-", "`url_read`"]);
    assert!(
        r.stdout.ends_with(&format!(
            "10 tools: 0 errors, 0 warnings, {} notes\n",
            findings.len()
        )),
        "{}",
        r.stdout
    );
}

#[test]
fn bad_flags_and_an_unknown_server_are_explained() {
    let env = Env::new();
    let r = env.run(&["tools", "lint", "--format", "xml"]);
    r.assert_code(1);
    assert!(r.stderr.contains("--format `xml`"), "{r:?}");
    let r = env.run(&["tools", "lint", "--server", "nope"]);
    r.assert_code(1);
    assert!(r.stderr.contains("no tools from `nope`"), "{r:?}");
    let r = env.run(&["tools", "lint", "--server", "builtin", "--format", "json"]);
    r.assert_code(0);
    assert!(r.json()["tools"].as_u64().unwrap() > 0);
}

/// With an embedding model (`[rag] model_dir`, the packaged test model), pairs are also found
/// by the encoder's cosine: at a threshold low enough, the built-in `read_file` and
/// `write_file` are reported with "encoder" in the message; at 1.0 none is.
#[test]
fn confusable_pairs_come_from_the_encoder_too_when_a_model_is_configured() {
    let config = format!(
        "[rag]\nmodel_dir = {:?}\nmode = \"hybrid\"\n",
        toolgate_testkit::packaged_model_dir()
    );
    let env = Env::with_config(&config);
    let encoder_findings = |threshold: &str| {
        let r = env.run(&[
            "tools",
            "lint",
            "--format",
            "json",
            "--confusable-threshold",
            "1",
            "--encoder-threshold",
            threshold,
        ]);
        r.assert_code(0);
        r.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["rule"] == "confusable" && f["message"].as_str().unwrap().contains("encoder")
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    let low = encoder_findings("0.3");
    assert!(
        low.iter().any(|f| {
            let pair = [f["tool"].as_str().unwrap(), f["related"].as_str().unwrap()];
            pair.contains(&"read_file") && pair.contains(&"write_file")
        }),
        "{low:#?}"
    );
    assert!(encoder_findings("1").is_empty());
}
