//! `toolgate serve` as an OAuth 2.1 resource server (issue 16, items 1–2), against a test
//! authorization server with its own keys and JWKS (`tests/peers/auth_server.py`, PyJWT):
//! each token of the specification's cases is accepted or refused as RFC 6750/8707/9068 and
//! the MCP authorization specification say — a valid token (RS256, ES256, EdDSA); expired;
//! not yet valid; wrong `iss`; a token for another resource (`aud`); an unknown `kid`
//! accepted after the issuer rotates its keys (one JWKS re-fetch, rate limited); a missing
//! scope (403 with `insufficient_scope` and the scope to ask for); `alg: none`; HS256 signed
//! with the issuer's public key. Claims map to principal, role and operator, and the issuer
//! and subject reach the audit.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{Answer, Env, http, http_with, peer_json, peer_python};

/// The test authorization server, killed on drop.
pub struct AuthServer {
    child: Child,
    pub issuer: String,
    addr: String,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AuthServer {
    pub fn start() -> AuthServer {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut child = Command::new(peer_python())
            .arg(repo.join("crates/toolgate-cli/tests/peers/auth_server.py"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the test authorization server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_owned();
        AuthServer {
            child,
            issuer: format!("http://127.0.0.1:{port}"),
            addr: format!("127.0.0.1:{port}"),
        }
    }

    /// A token from `/admin/mint`, signed with the key `kid` names.
    pub fn mint(&self, claims: Value, alg: &str, kid: &str) -> String {
        self.mint_with_key(claims, alg, kid, kid)
    }

    /// A token naming `kid` in its header, signed with the key `key`.
    pub fn mint_with_key(&self, claims: Value, alg: &str, kid: &str, key: &str) -> String {
        let (status, body) = http(
            &self.addr,
            "POST",
            "/admin/mint",
            Some(&json!({"claims": claims, "alg": alg, "kid": kid, "key": key})),
        );
        assert_eq!(status, 200, "{body}");
        body["token"].as_str().unwrap().to_owned()
    }

    pub fn rotate(&self) {
        assert_eq!(http(&self.addr, "POST", "/admin/rotate", None).0, 200);
    }

    pub fn retire(&self, kid: &str) {
        let (status, _) = http(
            &self.addr,
            "POST",
            "/admin/retire",
            Some(&json!({"kid": kid})),
        );
        assert_eq!(status, 200);
    }

    pub fn jwks_mode(&self, mode: &str) {
        let body = json!({"mode": mode});
        assert_eq!(
            http(&self.addr, "POST", "/admin/jwks_mode", Some(&body)).0,
            200
        );
    }

    pub fn stats(&self) -> Value {
        http(&self.addr, "GET", "/admin/stats", None).1
    }

    pub fn jwks_fetches(&self) -> u64 {
        http(&self.addr, "GET", "/admin/stats", None).1["jwks_fetches"]
            .as_u64()
            .unwrap()
    }
}

/// The configuration trusting `issuer`: scope `tools` required; `groups` claim: `admins` →
/// role default + operator, `agents` → role readonly.
pub fn oauth_config(issuer: &str) -> String {
    format!(
        r#"[egress]
allow_hosts = ["127.0.0.1"]
allow_http = ["127.0.0.1"]

[server.oauth]
authorization_servers = ["{issuer}"]
scopes_supported = ["tools", "admin"]
required_scopes = ["tools"]
principal_claim = "sub"
role_claim = "groups"
operator_values = ["admins"]

[server.oauth.roles]
admins = "default"
agents = "readonly"
"#
    )
}

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn me(addr: &str, token: &str) -> Answer {
    let auth = format!("Bearer {token}");
    http_with(addr, "GET", "/v1/me", &[("Authorization", &auth)], None)
}

#[test]
fn tokens_are_accepted_or_refused_as_the_specification_says() {
    let auth = AuthServer::start();
    let env = Env::with_config(&oauth_config(&auth.issuer));
    let (child, addr) = env.serve();
    let _served = Served(child);
    let resource = format!("http://{addr}/mcp");

    // The protected-resource metadata names the authorization server and the resource.
    let (status, prm) = http(&addr, "GET", "/.well-known/oauth-protected-resource", None);
    assert_eq!(status, 200);
    assert_eq!(prm["resource"], resource.as_str());
    assert_eq!(prm["authorization_servers"], json!([auth.issuer]));
    assert_eq!(prm["scopes_supported"], json!(["tools", "admin"]));

    let good = json!({"aud": resource, "scope": "tools", "groups": ["admins"], "sub": "alice"});
    for (alg, kid) in [("RS256", "rsa-1"), ("ES256", "ec-1"), ("EdDSA", "ed-1")] {
        let answer = me(&addr, &auth.mint(good.clone(), alg, kid));
        assert_eq!(answer.status, 200, "{alg}: {}", answer.body);
        assert_eq!(
            (
                &answer.body["principal"],
                &answer.body["role"],
                &answer.body["operator"]
            ),
            (
                &json!(format!("{}#alice", auth.issuer)),
                &json!("default"),
                &json!(true)
            ),
            "{alg}"
        );
    }
    let agent = me(
        &addr,
        &auth.mint(
            json!({"aud": resource, "scope": "tools other", "groups": "agents", "sub": "bot-7"}),
            "RS256",
            "rsa-1",
        ),
    );
    assert_eq!(
        (agent.status, &agent.body["role"], &agent.body["operator"]),
        (200, &json!("readonly"), &json!(false))
    );

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let with = |extra: Value| {
        let mut claims = good.clone();
        for (k, v) in extra.as_object().unwrap() {
            claims[k] = v.clone();
        }
        claims
    };
    let no_role = format!("`{}#alice` has no role here", auth.issuer);
    // (what, token, status, the message's start)
    let cases = [
        (
            "expired",
            auth.mint(with(json!({"exp": now - 120})), "RS256", "rsa-1"),
            401,
            "the token has expired",
        ),
        (
            "not yet valid",
            auth.mint(with(json!({"nbf": now + 600})), "RS256", "rsa-1"),
            401,
            "the token is not valid yet",
        ),
        (
            "wrong iss",
            auth.mint(with(json!({"iss": "http://127.0.0.1:1"})), "RS256", "rsa-1"),
            401,
            "the token's issuer `http://127.0.0.1:1` is not trusted",
        ),
        (
            "another resource",
            auth.mint(
                with(json!({"aud": "https://other.example/mcp"})),
                "RS256",
                "rsa-1",
            ),
            401,
            "the token is for another resource",
        ),
        (
            "no aud",
            auth.mint(with(json!({"aud": null})), "RS256", "rsa-1"),
            401,
            "the token has no `aud`",
        ),
        (
            "alg none",
            auth.mint(good.clone(), "none", "rsa-1"),
            401,
            "not a usable JWT",
        ),
        (
            "HS256 with the public key",
            auth.mint(good.clone(), "HS256-with-public-key", "rsa-1"),
            401,
            "the token's algorithm HS256 is not accepted",
        ),
        (
            "signed by a key not published",
            auth.mint(good.clone(), "RS256", "rsa-2"),
            401,
            "the issuer publishes no key `rsa-2`",
        ),
        (
            "tampered",
            {
                let t = auth.mint(good.clone(), "RS256", "rsa-1");
                let parts: Vec<&str> = t.split('.').collect();
                let forged = auth.mint(with(json!({"sub": "mallory"})), "RS256", "rsa-1");
                format!(
                    "{}.{}.{}",
                    parts[0],
                    forged.split('.').nth(1).unwrap(),
                    parts[2]
                )
            },
            401,
            "the token's signature does not verify",
        ),
        (
            "no role",
            auth.mint(with(json!({"groups": ["guests"]})), "RS256", "rsa-1"),
            403,
            no_role.as_str(),
        ),
    ];
    for (what, token, status, message) in &cases {
        let answer = me(&addr, token);
        assert_eq!(answer.status, *status, "{what}: {}", answer.body);
        let text = answer.body["error"]["message"].as_str().unwrap_or_default();
        assert!(text.starts_with(message), "{what}: {text}");
        if *status == 401 {
            let www = answer.header("www-authenticate").unwrap_or_default();
            assert!(
                www.contains("error=\"invalid_token\"") && www.contains("resource_metadata="),
                "{what}: {www}"
            );
        }
    }

    // A missing scope: 403 naming the scope to ask for.
    let unscoped = me(
        &addr,
        &auth.mint(with(json!({"scope": "admin"})), "RS256", "rsa-1"),
    );
    assert_eq!(unscoped.status, 403, "{}", unscoped.body);
    let www = unscoped.header("www-authenticate").unwrap();
    assert!(
        www.contains("error=\"insufficient_scope\"") && www.contains("scope=\"tools\""),
        "{www}"
    );

    // Key rotation: a token signed with the new key is refused while it is unpublished (and
    // the refusals above did not make toolgate fetch the JWKS again and again); once the
    // issuer publishes it, the next token naming it makes toolgate fetch once and accept.
    let fetches_before = auth.jwks_fetches();
    assert!(fetches_before <= 2, "JWKS fetched {fetches_before} times");
    auth.rotate();
    std::thread::sleep(Duration::from_millis(10_500)); // the re-fetch rate limit
    let rotated = me(&addr, &auth.mint(good.clone(), "RS256", "rsa-2"));
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    assert_eq!(auth.jwks_fetches(), fetches_before + 1);
    // A flood of unknown key ids does not reach the issuer more than once per 10 s.
    for i in 0..20 {
        let token = auth.mint_with_key(good.clone(), "RS256", &format!("made-up-{i}"), "rsa-1");
        let answer = me(&addr, &token);
        assert_eq!(answer.status, 401);
    }
    assert!(auth.jwks_fetches() <= fetches_before + 2);

    // The issuer and subject reach the audit.
    let token = auth.mint(with(json!({"sub": "auditor"})), "ES256", "ec-1");
    let auth_header = format!("Bearer {token}");
    let call = http_with(
        &addr,
        "POST",
        "/v1/calls",
        &[("Authorization", &auth_header)],
        Some(&json!({"tool": "list_dir", "arguments": {"path": "."}})),
    );
    assert_eq!(call.status, 200, "{}", call.body);
    let record = env
        .audit_records()
        .into_iter()
        .rev()
        .find(|r| r["principal"] == format!("{}#auditor", auth.issuer))
        .expect("an audit record for the call");
    assert_eq!(record["issuer"], auth.issuer.as_str());
    assert_eq!(record["subject"], "auditor");
    assert!(
        !record.to_string().contains(&token),
        "the token is never audited"
    );
}

#[test]
fn a_tokenless_caller_is_never_the_local_operator_when_an_issuer_is_trusted() {
    let auth = AuthServer::start();
    let env = Env::with_config(&oauth_config(&auth.issuer));
    let (child, addr) = env.serve();
    let _served = Served(child);
    let (status, body) = http(&addr, "GET", "/v1/approvals", None);
    assert_eq!(status, 401, "{body}");
}

/// The MCP Python SDK's OAuth client (client credentials) through the whole flow: 401 with
/// the metadata pointer, protected-resource metadata, authorization server metadata, a token
/// for toolgate's resource, then `tools/list` and a tool call acting as the token's subject.
#[test]
fn the_python_sdk_client_gets_a_token_and_calls_a_tool() {
    let auth = AuthServer::start();
    let env = Env::with_config(&oauth_config(&auth.issuer));
    let (child, addr) = env.serve();
    let _served = Served(child);
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let report = peer_json(
        Command::new(peer_python())
            .arg(repo.join("crates/toolgate-cli/tests/peers/oauth_client.py"))
            .args(["--url", &format!("http://{addr}/mcp")])
            .args(["--issuer", &auth.issuer])
            .args([
                "--client-id",
                "test-client",
                "--client-secret",
                "test-secret",
            ])
            .args(["--tool", "list_dir"]),
    );
    assert_eq!(report["is_error"], json!(false), "{report}");
    assert_eq!(report["token_requests"], json!(1));
    assert!(
        report["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("list_dir")),
        "{report}"
    );
    // The token carried `groups: ["agents"]` → role readonly, principal = issuer#sub.
    let record = env
        .audit_records()
        .into_iter()
        .rev()
        .find(|r| r["tool"] == "list_dir")
        .expect("the call is audited");
    assert_eq!(
        (&record["principal"], &record["role"], &record["issuer"]),
        (
            &json!(format!("{}#test-client", auth.issuer)),
            &json!("readonly"),
            &json!(auth.issuer)
        )
    );
}

/// An approval request records who vouched for its caller, as the audit does: a write call
/// by a token's holder asks for approval, and the request an operator lists names the
/// token's issuer and subject.
#[test]
fn approval_requests_record_the_issuer_and_subject() {
    let auth = AuthServer::start();
    let env = Env::with_config(&oauth_config(&auth.issuer));
    let (child, addr) = env.serve();
    let _served = Served(child);
    let resource = format!("http://{addr}/mcp");
    let claims =
        |sub: &str| json!({"aud": resource, "scope": "tools", "groups": ["admins"], "sub": sub});
    let caller = format!("Bearer {}", auth.mint(claims("writer-1"), "ES256", "ec-1"));
    let call = http_with(
        &addr,
        "POST",
        "/v1/calls",
        &[("Authorization", &caller)],
        Some(&json!({"tool": "write_file", "arguments": {"path": "a.txt", "content": "x"}})),
    );
    assert_eq!(
        call.body["error"]["code"], "approval_required",
        "{}",
        call.body
    );
    let operator = format!("Bearer {}", auth.mint(claims("op-1"), "EdDSA", "ed-1"));
    let listed = http_with(
        &addr,
        "GET",
        "/v1/approvals",
        &[("Authorization", &operator)],
        None,
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
    let request = &listed.body[0];
    assert_eq!(
        (
            &request["principal"],
            &request["issuer"],
            &request["subject"]
        ),
        (
            &json!(format!("{}#writer-1", auth.issuer)),
            &json!(auth.issuer),
            &json!("writer-1")
        )
    );
}

fn call_as(addr: &str, bearer: &str, tool: &str, arguments: Value) -> Answer {
    let auth = format!("Bearer {bearer}");
    http_with(
        addr,
        "POST",
        "/v1/calls",
        &[("Authorization", &auth)],
        Some(&json!({"tool": tool, "arguments": arguments})),
    )
}

/// Issue 30 (attack 4): principals are issuer-qualified. Issued-token `alice` holds a
/// standing (`always`) grant for `write_file`; a JWT with `sub: alice` is
/// `<issuer>#alice`, asks for approval like anyone else and writes nothing. (Before, it was
/// plain `alice` and wrote without asking.)
#[test]
fn a_jwt_with_sub_alice_does_not_inherit_token_alices_grant() {
    use sha2::{Digest, Sha256};
    let auth = AuthServer::start();
    let own = "alice-own-token-0123456789abcdef";
    let config = format!(
        "{}\n[[server.tokens]]\nprincipal = \"alice\"\nrole = \"default\"\nsha256 = \"{}\"\n",
        oauth_config(&auth.issuer),
        hex::encode(Sha256::digest(own.as_bytes()))
    );
    let env = Env::with_config(&config);
    let (child, addr) = env.serve();
    let _served = Served(child);
    let resource = format!("http://{addr}/mcp");
    let claims =
        |sub: &str| json!({"aud": resource, "scope": "tools", "groups": ["admins"], "sub": sub});
    let operator = auth.mint(claims("op-1"), "ES256", "ec-1");
    let write = json!({"path": "a.txt", "content": "granted"});

    // Token alice asks once; an operator grants her `always`.
    let asked = call_as(&addr, own, "write_file", write.clone());
    assert_eq!(
        asked.body["error"]["code"], "approval_required",
        "{}",
        asked.body
    );
    let op = format!("Bearer {operator}");
    let listed = http_with(
        &addr,
        "GET",
        "/v1/approvals",
        &[("Authorization", &op)],
        None,
    );
    let id = listed.body[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(listed.body[0]["principal"], "alice");
    let decided = http_with(
        &addr,
        "POST",
        &format!("/v1/approvals/{id}/decision"),
        &[("Authorization", &op)],
        Some(&json!({"approve": true, "scope": "always"})),
    );
    assert_eq!(decided.status, 200, "{}", decided.body);
    let again = call_as(&addr, own, "write_file", write.clone());
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(env.read("a.txt"), "granted");

    // The JWT `sub: alice` is someone else.
    let jwt = auth.mint(claims("alice"), "RS256", "rsa-1");
    let forged = json!({"path": "a.txt", "content": "from the jwt"});
    let refused = call_as(&addr, &jwt, "write_file", forged);
    assert_eq!(
        refused.body["error"]["code"], "approval_required",
        "{}",
        refused.body
    );
    assert_eq!(env.read("a.txt"), "granted");
    let same_args = call_as(&addr, &jwt, "write_file", write);
    assert_eq!(
        same_args.body["error"]["code"], "approval_required",
        "{}",
        same_args.body
    );
    assert_eq!(
        me(&addr, &jwt).body["principal"],
        json!(format!("{}#alice", auth.issuer))
    );
}

/// Issue 30 (attack 4): a JWKS answered chunked, without Content-Length, and far past the
/// 1 MiB cap (256 MiB) is refused after about the cap — toolgate hangs up instead of reading
/// it whole — and the 503 names neither the JWKS URL nor its error.
#[test]
fn a_chunked_jwks_past_the_cap_is_refused_unread() {
    let auth = AuthServer::start();
    let env = Env::with_config(&oauth_config(&auth.issuer));
    let (child, addr) = env.serve();
    let _served = Served(child);
    let resource = format!("http://{addr}/mcp");
    auth.jwks_mode("huge");
    let token = auth.mint(
        json!({"aud": resource, "scope": "tools", "groups": ["admins"], "sub": "alice"}),
        "RS256",
        "rsa-1",
    );
    let answer = me(&addr, &token);
    assert_eq!(answer.status, 503, "{}", answer.body);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let stats = loop {
        let stats = auth.stats();
        if stats["huge_done"] == 1 {
            break stats;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the huge body never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let sent = stats["huge_sent"].as_u64().unwrap();
    assert!(
        sent < 16 << 20,
        "{sent} bytes of a 256 MiB body were read (cap 1 MiB)"
    );
    assert_no_internal_url(&answer);
}

/// Issue 30 (attack 4): with the JWKS unreachable (HTTP 500), an unauthenticated caller's
/// 503 does not reveal where the keys are fetched from.
#[test]
fn an_unreachable_jwks_is_not_named_to_the_caller() {
    let auth = AuthServer::start();
    let env = Env::with_config(&oauth_config(&auth.issuer));
    let (child, addr) = env.serve();
    let _served = Served(child);
    let resource = format!("http://{addr}/mcp");
    auth.jwks_mode("down");
    let token = auth.mint(
        json!({"aud": resource, "scope": "tools", "groups": ["admins"], "sub": "alice"}),
        "RS256",
        "rsa-1",
    );
    let answer = me(&addr, &token);
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], "unavailable");
    assert_no_internal_url(&answer);
}

fn assert_no_internal_url(answer: &Answer) {
    let text = format!(
        "{} {}",
        answer.body,
        answer.header("www-authenticate").unwrap_or_default()
    );
    let body = answer.body.to_string();
    for leak in ["/jwks", "HTTP 500", "larger than"] {
        assert!(!text.contains(leak), "`{leak}` in {text}");
    }
    assert!(!body.contains("http://"), "a URL in {body}");
}

/// Issue 30 (attack 4): a token keeps working only while its key is published. The issuer
/// withdraws `rsa-1`; once the refresh interval (here 1 s, and at least the 10 s between
/// two fetches) has passed, the token that was accepted — and remembered — is refused.
#[test]
fn a_key_that_left_the_jwks_ends_its_tokens() {
    let auth = AuthServer::start();
    let config = oauth_config(&auth.issuer).replace(
        "principal_claim = \"sub\"",
        "principal_claim = \"sub\"\njwks_refresh_secs = 1",
    );
    let env = Env::with_config(&config);
    let (child, addr) = env.serve();
    let _served = Served(child);
    let resource = format!("http://{addr}/mcp");
    let claims = json!({"aud": resource, "scope": "tools", "groups": ["admins"], "sub": "alice"});
    let old = auth.mint(claims.clone(), "RS256", "rsa-1");
    let other = auth.mint(claims, "ES256", "ec-1");
    assert_eq!(me(&addr, &old).status, 200);
    assert_eq!(me(&addr, &other).status, 200);
    auth.retire("rsa-1");
    std::thread::sleep(Duration::from_millis(10_500)); // the least time between two fetches
    let answer = me(&addr, &old);
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert!(
        answer.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("publishes no key `rsa-1`"),
        "{}",
        answer.body
    );
    assert_eq!(me(&addr, &other).status, 200, "a key still published works");
}
