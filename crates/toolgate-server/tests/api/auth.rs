//! Who may call what: tokens, the anonymous grants, operators, and the Host/Origin guard.

use std::net::SocketAddr;

use serde_json::json;
use toolgate_server::ServerConfig;
use toolgate_server::api::{Access, ROUTES};
use toolgate_server::config::AnonymousConfig;

use crate::fixture::{DEV, OP, Setup, TestServer, answer, tokens};

fn sample_path(path: &str) -> String {
    path.replace("{name}", "echo")
        .replace("{id}", "apr_000000000000")
}

#[tokio::test]
async fn without_tokens_configured_loopback_is_the_local_readonly_operator() {
    let s = TestServer::with(Setup {
        server: ServerConfig::default(),
        ..Setup::default()
    })
    .await;
    assert_eq!(
        s.get_json("/v1/me", None, 200).await,
        json!({"principal": "anonymous", "role": "readonly", "operator": true})
    );
    // readonly: write tools are denied by policy, in the envelope.
    let env = s
        .call(None, json!({"tool": "writer", "arguments": {}}))
        .await;
    assert_eq!(env["error"]["code"], json!("policy_denied"));
}

/// Issue 12, item 4: once tokens exist, a tokenless caller on loopback is nobody — it
/// neither reads the audit nor decides approvals (any local process could otherwise).
#[tokio::test]
async fn with_tokens_configured_a_tokenless_loopback_caller_is_refused() {
    let s = TestServer::start().await;
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": "x"}}),
        )
        .await;
    let id = crate::fixture::approval_id(&env);
    for (method, path) in [
        ("GET", "/v1/audit".to_owned()),
        ("GET", "/v1/approvals".to_owned()),
        ("GET", format!("/v1/approvals/{id}")),
        ("POST", format!("/v1/approvals/{id}/decision")),
        ("POST", "/v1/audit/verify".to_owned()),
        ("GET", "/v1/me".to_owned()),
        ("GET", "/v1/tools".to_owned()),
        ("POST", "/v1/calls".to_owned()),
    ] {
        let resp = match method {
            "GET" => s.get(&path, None),
            _ => s.post(&path, None, &json!({"approve": true, "tool": "echo"})),
        };
        let resp = resp.send().await.unwrap();
        assert!(
            resp.headers().contains_key("www-authenticate"),
            "{method} {path}"
        );
        let body = answer(resp, 401).await;
        assert_eq!(
            body["error"]["message"],
            json!("this server requires a bearer token"),
            "{method} {path}"
        );
    }
    // /mcp too: an MCP client without a token is refused before the protocol starts.
    let resp = s
        .client
        .post(s.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // The approval is still pending: nobody decided it.
    let a = s
        .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
        .await;
    assert_eq!(a["status"], json!("pending"));
    // Public routes still answer, without operator extras.
    let ready = s.get_json("/v1/ready", None, 200).await;
    assert!(ready.get("mcp_servers").is_none(), "{ready}");
}

#[tokio::test]
async fn a_configured_anonymous_grant_applies_without_a_token() {
    let s = TestServer::with(Setup {
        server: ServerConfig {
            tokens: tokens(),
            anonymous: Some(AnonymousConfig {
                role: "narrow".into(),
                principal: "guest".into(),
                operator: false,
            }),
            ..ServerConfig::default()
        },
        ..Setup::default()
    })
    .await;
    assert_eq!(
        s.get_json("/v1/me", None, 200).await,
        json!({"principal": "guest", "role": "narrow", "operator": false})
    );
    let body = s.get_json("/v1/approvals", None, 403).await;
    assert_eq!(body["error"]["code"], json!("forbidden"));
}

#[tokio::test]
async fn a_valid_token_acts_as_its_principal_and_role() {
    let s = TestServer::start().await;
    assert_eq!(
        s.get_json("/v1/me", Some(DEV), 200).await,
        json!({"principal": "bob", "role": "default", "operator": false})
    );
    let env = s
        .call(Some(DEV), json!({"tool": "echo", "arguments": {}}))
        .await;
    assert_eq!(env["ok"], json!(true));
    let call_id = env["call_id"].as_str().unwrap();
    let records = s
        .get_json(&format!("/v1/audit?call_id={call_id}"), Some(OP), 200)
        .await;
    assert_eq!(records[0]["principal"], json!("bob"));
    assert_eq!(records[0]["role"], json!("default"));
    assert_eq!(records[0]["session"], json!("http"));
}

#[tokio::test]
async fn a_bad_token_is_401_pointing_at_the_metadata() {
    let s = TestServer::start().await;
    // A token that is not one (RFC 6750 §3.1: `invalid_token`, with why), and no bearer
    // token at all (no error code: the client should just authenticate).
    for (auth, error) in [
        (
            "Bearer wrong",
            ", error=\"invalid_token\", error_description=\"unknown bearer token\"",
        ),
        ("Basic YWxpY2U6c2VjcmV0", ""),
    ] {
        let resp = s
            .client
            .get(s.url("/v1/tools"))
            .header("authorization", auth)
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.headers()["www-authenticate"].to_str().unwrap(),
            format!(
                "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"{error}",
                s.base
            )
        );
        let body = answer(resp, 401).await;
        assert_eq!(body["error"]["code"], json!("forbidden"), "{auth}");
    }
    let resp = s.get("/v1/tools", Some("wrong")).send().await.unwrap();
    assert_eq!(
        answer(resp, 401).await,
        json!({"error": {"code": "forbidden", "message": "unknown bearer token", "retryable": false}})
    );
}

#[tokio::test]
async fn non_operators_get_403_on_every_operator_route() {
    let s = TestServer::start().await;
    let operator_routes: Vec<_> = ROUTES
        .iter()
        .filter(|r| r.access == Access::Operator)
        .collect();
    assert_eq!(operator_routes.len(), 11);
    for r in operator_routes {
        let path = sample_path(r.path);
        let resp = match r.method {
            "GET" => s.get(&path, Some(DEV)),
            _ => s.post(&path, Some(DEV), &json!({"approve": true})),
        };
        let body = answer(resp.send().await.unwrap(), 403).await;
        assert_eq!(
            body,
            json!({"error": {"code": "forbidden",
                "message": "`bob` is not an operator: deciding approvals and reading the audit need an operator token",
                "retryable": false,
                "hint": "use an operator token: an operator issues one with `toolgate token create --principal NAME --role ROLE --operator` (or `operator = true` in [[server.tokens]])"}}),
            "{} {path}",
            r.method
        );
    }
}

#[tokio::test]
async fn beyond_loopback_without_tokens_only_public_routes_answer() {
    let s = TestServer::with(Setup {
        server: ServerConfig::default(),
        pretend_addr: Some("0.0.0.0:8765".parse::<SocketAddr>().unwrap()),
        ..Setup::default()
    })
    .await;
    for r in ROUTES {
        let path = sample_path(r.path);
        let resp = match r.method {
            "GET" => s.get(&path, None),
            _ => s.post(&path, None, &json!({})),
        };
        let resp = resp.send().await.unwrap();
        let status = resp.status().as_u16();
        if r.access == Access::Public {
            assert_eq!(status, 200, "{} {path}", r.method);
        } else {
            assert!(resp.headers().contains_key("www-authenticate"));
            let body = answer(resp, 401).await;
            assert_eq!(
                body["error"]["message"],
                json!("this server requires a bearer token"),
                "{} {path}",
                r.method
            );
        }
    }
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let s = TestServer::start().await;
    let resp = s
        .get("/v1/health", None)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(resp, 403).await,
        json!({"error": {"code": "forbidden", "message": "Host `evil.example` is not allowed",
            "retryable": false,
            "hint": "add it to [server] allowed_hosts in toolgate.toml if this server is reached by that name"}})
    );
    let resp = s
        .get("/v1/me", Some(OP))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(resp, 403).await,
        json!({"error": {"code": "forbidden", "message": "Origin `http://evil.example` is not allowed",
            "retryable": false, "hint": "add it to [server] allowed_origins in toolgate.toml"}})
    );
    for origin in [
        s.base.clone(),
        format!("http://localhost:{}", s.addr.port()),
    ] {
        let resp = s
            .get("/v1/me", Some(OP))
            .header("origin", &origin)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{origin}");
    }
}

#[tokio::test]
async fn configured_hosts_and_origins_are_accepted() {
    let s = TestServer::with_internal_hosts().await;
    let resp = s
        .get("/v1/me", Some(OP))
        .header("host", "toolgate.internal")
        .header("origin", "https://console.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}

#[tokio::test]
async fn the_console_page_needs_no_credentials_but_its_api_does() {
    let s = TestServer::with(Setup {
        server: ServerConfig::default(),
        pretend_addr: Some("0.0.0.0:8765".parse::<SocketAddr>().unwrap()),
        ..Setup::default()
    })
    .await;
    let page = s.get("/", None).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let api = s.get("/v1/tools", None).send().await.unwrap();
    assert_eq!(api.status().as_u16(), 401);
    // Unknown paths are 404 whoever asks.
    let body = s.get_json("/nothing/here", None, 404).await;
    assert_eq!(
        body["error"]["message"],
        json!("nothing at GET /nothing/here")
    );
}
