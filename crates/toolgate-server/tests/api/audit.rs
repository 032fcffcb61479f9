//! `GET /v1/audit` filters and `POST /v1/audit/verify`, also after tampering with the file.

use serde_json::{Value, json};

use crate::fixture::{DEV, NARROW, OP, TestServer, audit_path};

/// (tool, principal, outcome) of each record.
fn summary(records: &Value) -> Vec<(String, String, String)> {
    records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["tool"].as_str().unwrap().to_owned(),
                r["principal"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn t(tool: &str, principal: &str, outcome: &str) -> (String, String, String) {
    (tool.to_owned(), principal.to_owned(), outcome.to_owned())
}

#[tokio::test]
async fn query_filters_combine() {
    let s = TestServer::start().await;
    s.call(
        Some(DEV),
        json!({"tool": "echo", "arguments": {"note": "1"}, "session": "a"}),
    )
    .await;
    s.call(
        Some(NARROW),
        json!({"tool": "echo", "arguments": {"note": "2"}, "session": "b"}),
    )
    .await;
    s.call(Some(NARROW), json!({"tool": "writer", "session": "b"}))
        .await;
    let failed = s
        .call(
            Some(DEV),
            json!({"tool": "echo", "arguments": {"fail": "x"}, "session": "a"}),
        )
        .await;

    let all = s.get_json("/v1/audit", Some(OP), 200).await;
    assert_eq!(
        summary(&all),
        [
            t("echo", "bob", "ok"),
            t("echo", "carol", "ok"),
            t("writer", "carol", "forbidden"),
            t("echo", "bob", "execution_failed")
        ]
    );
    let seqs: Vec<u64> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert!(all[0]["hash"].as_str().unwrap().len() == 64);

    let q = |query: &'static str| {
        let s = &s;
        async move {
            summary(
                &s.get_json(&format!("/v1/audit?{query}"), Some(OP), 200)
                    .await,
            )
        }
    };
    assert_eq!(
        q("tool=echo&principal=carol").await,
        [t("echo", "carol", "ok")]
    );
    assert_eq!(
        q("session=b").await,
        [t("echo", "carol", "ok"), t("writer", "carol", "forbidden")]
    );
    assert_eq!(
        q("outcome=forbidden").await,
        [t("writer", "carol", "forbidden")]
    );
    assert_eq!(
        q("limit=2&newest_first=true").await,
        [
            t("echo", "bob", "execution_failed"),
            t("writer", "carol", "forbidden")
        ]
    );
    assert_eq!(
        q("since=1h&tool=writer").await,
        [t("writer", "carol", "forbidden")]
    );
    assert_eq!(q("until=2000-01-01T00:00:00Z").await, []);
    let call_id = failed["call_id"].as_str().unwrap();
    let one = s
        .get_json(&format!("/v1/audit?call_id={call_id}"), Some(OP), 200)
        .await;
    assert_eq!(summary(&one), [t("echo", "bob", "execution_failed")]);
    assert_eq!(one[0]["error"], json!("x"));
    assert_eq!(one[0]["arguments"], json!({"fail": "x"}));

    // An outcome that is no outcome is refused, not silently answered with nothing.
    let unknown = s
        .get_json("/v1/audit?outcome=forbiden", Some(OP), 400)
        .await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown outcome `forbiden`"),
        "{unknown}"
    );

    let bad = s
        .get_json("/v1/audit?since=yesterday-ish", Some(OP), 400)
        .await;
    assert_eq!(
        bad["error"]["message"],
        json!(
            "`since` is neither a duration like 10m (digits, then s, m, h, d or w) nor an RFC 3339 time like 2026-12-02T10:00:00Z"
        )
    );
}

#[tokio::test]
async fn verify_reports_the_first_bad_record_after_tampering() {
    let s = TestServer::start().await;
    for note in ["a", "b", "c"] {
        s.call(
            Some(DEV),
            json!({"tool": "echo", "arguments": {"note": note}}),
        )
        .await;
    }
    let report = s
        .post_json("/v1/audit/verify", Some(OP), &json!({}), 200)
        .await;
    let head = report["head"].as_str().unwrap().to_owned();
    assert_eq!(
        report,
        json!({"ok": true, "records": 3, "head": head, "first_bad": null})
    );

    let path = audit_path(s.dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"note\":\"b\""));
    std::fs::write(&path, text.replace("\"note\":\"b\"", "\"note\":\"B\"")).unwrap();

    let report = s
        .post_json("/v1/audit/verify", Some(OP), &json!({}), 200)
        .await;
    assert_eq!(report["ok"], json!(false));
    assert_eq!(report["records"], json!(1));
    assert_eq!(report["first_bad"]["line"], json!(2));
    assert_eq!(report["first_bad"]["seq"], json!(2));
    assert!(report["first_bad"]["reason"].is_string());
}
