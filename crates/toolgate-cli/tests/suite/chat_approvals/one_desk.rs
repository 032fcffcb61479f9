//! One desk for every decision (issue 31): an approval decided from the HTTP API, from
//! `toolgate approvals approve` and from a chat tap leaves the same audit record — one shape,
//! written by the gateway's decision desk — and so does a refused decision.

use super::*;

/// Every key of `r` but those a front end fills its own way (when, the record's id, which
/// front end and who).
fn shape(r: &Value) -> Vec<String> {
    let mut keys: Vec<String> = r.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

#[test]
fn a_decision_from_the_api_the_cli_and_a_chat_leaves_the_same_record() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let served = serve(&env, &log);

    let mut ids = Vec::new();
    for (n, via) in ["api", "cli", "chat"].into_iter().enumerate() {
        let call = waiting_call(
            &env,
            "write_file",
            &json!({"path": format!("{via}.txt"), "content": via}),
        );
        let id = pending_id(&env);
        match via {
            "api" => {
                let path = format!("/v1/approvals/{id}/decision");
                let (status, body) =
                    http(&served.addr, "POST", &path, Some(&json!({"approve": true})));
                assert_eq!(status, 200, "{body}");
            }
            "cli" => {
                env.run(&["approvals", "approve", &id]).assert_code(0);
            }
            _ => {
                let card = fake.messages_when("the card", |m| {
                    m.iter()
                        .any(|c| c["text"].as_str().is_some_and(|t| t.contains(&id)))
                });
                let card = card
                    .iter()
                    .find(|c| c["text"].as_str().is_some_and(|t| t.contains(&id)))
                    .unwrap()
                    .clone();
                // A refused one first: a mapped chat user without the operator right.
                let q = tap(&fake, &card, MALLORY, &format!("a.once.{id}"));
                assert!(answer_to(&fake, &q).starts_with("Not allowed"));
                let q = tap(&fake, &card, ALICE, &format!("a.once.{id}"));
                assert!(answer_to(&fake, &q).starts_with("✅ Approved once"));
            }
        }
        finished(call).assert_code(0);
        assert_eq!(env.read(&format!("{via}.txt")), via, "call {n}");
        ids.push(id);
    }
    // Refused from the API and the CLI: the first request is decided already.
    let path = format!("/v1/approvals/{}/decision", ids[0]);
    let (status, _) = http(
        &served.addr,
        "POST",
        &path,
        Some(&json!({"approve": false})),
    );
    assert_eq!(status, 409);
    assert_ne!(env.run(&["approvals", "deny", &ids[0]]).code, 0);

    let records = env.audit_records();
    let decision = |via: &str, ok: bool| -> Value {
        let found: Vec<&Value> = records
            .iter()
            .filter(|r| {
                r["source"] == json!(format!("approvals:{via}")) && (r["outcome"] == "ok") == ok
            })
            .collect();
        assert_eq!(found.len(), 1, "{via} ok={ok}: {records:?}");
        found[0].clone()
    };
    let taken = [
        decision("api", true),
        decision("cli", true),
        decision("telegram:oncall", true),
    ];
    for (r, id) in taken.iter().zip(&ids) {
        assert_eq!(shape(r), shape(&taken[0]), "{r}");
        assert_eq!(
            (
                &r["tool"],
                &r["risk"],
                &r["role"],
                &r["approval_id"],
                &r["arguments"]["approval_id"],
                &r["arguments"]["decision"]
            ),
            (
                &json!("write_file"),
                &json!("write"),
                &json!("operator"),
                &json!(id),
                &json!(id),
                &json!("approve once")
            ),
            "{r}"
        );
        assert_eq!(r["approver"], r["principal"], "{r}");
        assert!(
            r["call_id"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{id}.decision."))
        );
    }
    assert_eq!(taken[2]["principal"], "alice");
    assert_eq!(taken[2]["arguments"]["chat_user"], json!(ALICE.to_string()));

    let refused = [
        decision("api", false),
        decision("cli", false),
        decision("telegram:oncall", false),
    ];
    for r in &refused {
        assert_eq!(shape(r), shape(&refused[0]), "{r}");
        assert!(r["approver"].is_null(), "{r}");
        assert!(r["error"].as_str().is_some_and(|e| !e.is_empty()), "{r}");
    }
    assert_eq!(
        (&refused[0]["arguments"]["decision"], &refused[0]["outcome"]),
        (&json!("deny"), &json!("invalid_arguments"))
    );
    assert_eq!(
        (&refused[2]["principal"], &refused[2]["outcome"]),
        (&json!("mallory"), &json!("forbidden"))
    );
}
