//! Negative samples: written ones and generated ones (UUIDs, SHAs, base64 of text).

use super::fakes::Fakes;

/// Text that holds no secret and must come out as it went in: prose, logs, identifiers,
/// base64 of ordinary data, code and configuration, and look-alikes from gitleaks' own
/// negative samples.
pub(crate) const NEGATIVES: &[&str] = &[
    // Prose and logs.
    "The deploy of checkout-api at 14:02 UTC rolled out build 8c1f2e9 to eu-west-1.",
    "Two of the five health checks failed: the /ready probe timed out after 3 s.",
    "Reset your password from the account page; the link expires in 24 hours.",
    "The token bucket refills at 10 tokens per second; the secret is consistency.",
    "Basic settings are documented in the manual, and bearer tokens in RFC 6750.",
    "Our API key rotation policy is described in docs/keys.md.",
    "machine learning models need a GPU; the default login shell is bash",
    "2026-12-07T10:02:00Z INFO request GET /v1/items/42 200 in 13ms user=alice",
    "2026-12-07T10:02:01Z WARN retrying connection to db.internal:5432 (attempt 3 of 5)",
    "thread 'main' panicked at src/main.rs:42:5: index out of bounds",
    "error[E0308]: mismatched types: expected `u32`, found `String`",
    "Cookie consent banner: accepted by 87% of visitors",
    // Identifiers.
    "request id 0f8b6c1e-3a2d-4e5f-9a7b-1c2d3e4f5a6b",
    "id: 123e4567-e89b-12d3-a456-426614174000",
    "commit 4bf92f3577b34da6a3ce929d0e0e473685c1a9d2",
    "Merge pull request #1234 from org/feature-x (a1b2c3d)",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
    "git@github.com:org/repo.git and https://github.com/org/repo/pull/12",
    "https://example.com/search?q=rust+regex&page=2&sort=desc",
    "https://git@github.com/org/repo.git",
    "100% of requests succeeded; 50%-off sale; path%2Fwith%2Fslashes",
    // Base64 of ordinary data.
    "SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBvZiBiYXNlNjQgZW5jb2Rpbmcu",
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
    // Code and configuration.
    "fn main() { let tokens = lexer.tokenize(&source)?; println!(\"{}\", tokens.len()); }",
    "def get_password(user): return vault.read(f\"secret/{user}\")",
    "const apiUrl = process.env.API_URL || 'https://api.example.com/v1';",
    "for key in sorted(keys): print(key, counts[key])",
    "max_tokens: 512\ntemperature: 0.2\napi_version: 2024-06-01",
    "keyboard_layout: us-intl\ncache_key: user_profile_settings",
    "password: null\ntoken: ~\napi_key: ${API_KEY}",
    "token=$GITHUB_TOKEN and password=`cat /run/pw`",
    "use --password-file /run/secret to read it",
    "kind: ConfigMap\ndata:\n  log_level: debug\n  feature_flags: a,b,c\n",
    "{\"name\": \"checkout-api\", \"replicas\": 3, \"image\": \"registry.example.com/checkout:1.4.2\"}",
    "SELECT id, name FROM users WHERE created_at > '2026-01-01' ORDER BY id LIMIT 50;",
    "<add key=\"Username\" value=\"ci-bot\" />",
    // gitleaks' own negative samples, by shape.
    "the fixture task_test_ab12cd34ef56gh78ij90kl12mn34op is not a Stripe key",
    "getPagesInConfluenceSpace,searchConfluenceUsingCql",
    "wrongStart := \"AkCpab12cd34ef56gh78ij90kl12mn34op56qr78st90uv12wx34yz56ab78cd90ef12gh34ij56kl7\"",
    "sntryu_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "<xsd:element name=\"AgencyIdentificationCode\" type=\"clm54321:AgencyIdentificationCodeContentType\"/>",
];

/// Generated negatives: (what, format), each expanded 100 times with its own seed.
pub(crate) const GENERATED_NEGATIVES: &[(&str, &str)] = &[
    ("uuid", "{h8}-{h4}-4{h3}-a{h3}-{h12}"),
    ("git sha-1", "commit {h40}"),
    ("sha-256", "sha256:{h64}"),
    ("short sha", "fixed in {h7} and {h7}"),
    ("base64 of text", "{s}"),
];

/// Base64 of an ordinary sentence, chosen by `n`.
pub(crate) fn base64_of_text(n: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let text = format!("{} (item {n})", NEGATIVES[n % 12]);
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let v = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(B64[((v >> (18 - 6 * i)) & 63) as usize]));
        }
        out.push_str(&"=".repeat(3 - chunk.len()));
    }
    out
}

/// Every negative sample: the written ones, then the generated ones.
pub(crate) fn negatives() -> Vec<String> {
    let mut all: Vec<String> = NEGATIVES.iter().map(|s| (*s).to_owned()).collect();
    for &(what, format) in GENERATED_NEGATIVES {
        let mut fakes = Fakes::new(what);
        for n in 0..100 {
            all.push(if what == "base64 of text" {
                base64_of_text(n)
            } else {
                fakes.expand(format).0
            });
        }
    }
    all
}
