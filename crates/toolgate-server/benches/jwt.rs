//! The cost of admitting a caller by an OAuth access token (`[server.oauth]`), per request:
//!
//! - `cached token`: the same token on every request (what an MCP client does between
//!   refreshes): a SHA-256 of the token and a map lookup;
//! - `fresh token, <alg>`: a new token each time, the issuer's key already cached: the
//!   signature and the claims are checked.
//!
//! The issuer is a local axum server publishing metadata and a JWKS (Ed25519 and P-256 keys
//! made here with aws-lc-rs). `cargo bench -p toolgate-server --bench jwt`; prints p50 and p99
//! in microseconds per authentication.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stdout
)]

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair,
};
use axum::Json;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use toolgate_server::auth::jwt::JwtAuthority;
use toolgate_server::config::{EgressPolicy, OAuthConfig};

const RESOURCE: &str = "https://toolgate.bench/mcp";
const ROUNDS: usize = 20_000;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn percentile(mut samples: Vec<Duration>, p: f64) -> f64 {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1e6
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let rng = SystemRandom::new();
    let ed_pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let ed = Ed25519KeyPair::from_pkcs8(ed_pkcs8.as_ref()).unwrap();
    let ec_pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let ec = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, ec_pkcs8.as_ref()).unwrap();
    let point = ec.public_key().as_ref().to_vec(); // 0x04 || x || y
    let jwks = json!({"keys": [
        {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "alg": "EdDSA", "use": "sig",
         "x": B64.encode(ed.public_key().as_ref())},
        {"kty": "EC", "crv": "P-256", "kid": "ec", "alg": "ES256", "use": "sig",
         "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])},
    ]});

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let m = metadata.clone();
                async move { Json(m) }
            }),
        )
        .route(
            "/jwks",
            get(move || {
                let j = jwks.clone();
                async move { Json(j) }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let cfg = OAuthConfig {
        authorization_servers: vec![issuer.clone()],
        role_claim: "groups".into(),
        default_role: Some("default".into()),
        ..OAuthConfig::default()
    };
    let egress = EgressPolicy::default()
        .allow_plain_http("127.0.0.1")
        .unwrap()
        .allow_host("127.0.0.1")
        .unwrap();
    let jwt = JwtAuthority::new(&cfg, RESOURCE.into(), &egress)
        .unwrap()
        .unwrap();

    let ed_key = EncodingKey::from_ed_der(ed_pkcs8.as_ref());
    let ec_key = EncodingKey::from_ec_der(ec_pkcs8.as_ref());
    let mint = |alg: Algorithm, kid: &str, key: &EncodingKey, n: usize| -> String {
        let mut header = Header::new(alg);
        header.kid = Some(kid.into());
        let claims: Value = json!({"iss": issuer, "aud": RESOURCE, "sub": format!("user-{n}"),
            "exp": now() + 3600, "groups": ["agents"]});
        encode(&header, &claims, key).unwrap()
    };

    // Warm the key cache (one JWKS fetch), then measure.
    jwt.authenticate(&mint(Algorithm::EdDSA, "ed", &ed_key, 0))
        .await
        .unwrap();
    let same = mint(Algorithm::ES256, "ec", &ec_key, 1);
    let mut cached = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        jwt.authenticate(&same).await.unwrap();
        cached.push(t.elapsed());
    }
    println!(
        "cached token        p50 {:>7.2} µs  p99 {:>7.2} µs",
        percentile(cached.clone(), 0.5),
        percentile(cached, 0.99)
    );
    for (name, alg, kid, key) in [
        ("fresh token, EdDSA", Algorithm::EdDSA, "ed", &ed_key),
        ("fresh token, ES256", Algorithm::ES256, "ec", &ec_key),
    ] {
        let tokens: Vec<String> = (0..ROUNDS / 4)
            .map(|n| mint(alg, kid, key, n + 10))
            .collect();
        let mut fresh = Vec::with_capacity(tokens.len());
        for token in &tokens {
            let t = Instant::now();
            jwt.authenticate(token).await.unwrap();
            fresh.push(t.elapsed());
        }
        println!(
            "{name:<19} p50 {:>7.2} µs  p99 {:>7.2} µs",
            percentile(fresh.clone(), 0.5),
            percentile(fresh, 0.99)
        );
    }
}
