//! The redaction corpus (issue 30, item 5): every token format of gitleaks' rule set
//! (`config/gitleaks.toml`, 222 rules), the 49 secret shapes of the second attack, and
//! negative samples that must come out unchanged.
//!
//! Positive samples are fakes made from each format's description by a seeded generator
//! (deterministic, no real key anywhere), placed in the contexts gitleaks' own samples use
//! (`utils.GenerateSampleSecrets`: INI, JSON, XML, YAML, Go, Java, PHP, Python, Makefile, …)
//! and, for tokens recognisable by shape alone, bare in text. A sample passes when no random
//! part of its secret (8 characters or more) survives `redact_text`, nor `redact_value` of a
//! JSON string holding it.
//!
//! `cargo test -p toolgate-store corpus -- --nocapture` prints the counts; the test asserts
//! them, and docs/security.md records them.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolgate_store::redact::Redactor;

/// A seeded xorshift generator: the same fakes on every run.
struct Fakes(u64);

impl Fakes {
    fn new(seed: &str) -> Fakes {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in seed.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Fakes(h | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick(&mut self, alphabet: &[u8]) -> char {
        char::from(alphabet[(self.next() % alphabet.len() as u64) as usize])
    }

    /// `format` with each `{<class><n>}` replaced by `n` random characters of the class:
    /// `a` alphanumeric, `h` lowercase hex, `H` uppercase hex, `d` digits, `u` uppercase and
    /// digits, `l` lowercase and digits, `L` letters, `x` alphanumeric with `_-`, `e` with
    /// `_-=`, `b` base64. Random runs of 8 or more start with a letter and hold a digit, as
    /// real keys almost always do. Returns the text and its random runs.
    fn expand(&mut self, format: &str) -> (String, Vec<String>) {
        let mut out = String::new();
        let mut parts = Vec::new();
        let mut rest = format;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = open + rest[open..].find('}').unwrap();
            let spec = &rest[open + 1..close];
            let (class, n) = spec.split_at(1);
            let n: usize = n.parse().unwrap();
            let alphabet: &[u8] = match class {
                "a" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "h" => b"0123456789abcdef",
                "H" => b"0123456789ABCDEF",
                "d" => b"0123456789",
                "u" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                "l" => b"abcdefghijklmnopqrstuvwxyz0123456789",
                "L" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                "x" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
                "e" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=",
                "b" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                other => panic!("unknown class {other}"),
            };
            let mut part: Vec<char> = (0..n).map(|_| self.pick(alphabet)).collect();
            if n >= 8 && !matches!(class, "d" | "L") {
                let letters: Vec<u8> = alphabet
                    .iter()
                    .copied()
                    .filter(u8::is_ascii_alphabetic)
                    .collect();
                part[0] = self.pick(&letters);
                part[1 + (self.next() % (n as u64 - 1)) as usize] = self.pick(b"0123456789");
            }
            let part: String = part.into_iter().collect();
            out.push_str(&part);
            parts.push(part);
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        (out, parts)
    }
}

/// How a format is found: by its shape anywhere, or by the label in front of it.
#[derive(Clone, Copy, PartialEq)]
enum Found {
    /// A distinctive prefix or shape: also tested bare, in prose, a URL and JSON.
    Shape,
    /// Only after a label naming the service (gitleaks' keyword rules): also tested under
    /// labels that say nothing about tokens (`<service>_id`, `<SERVICE>_CONSUMER`).
    Label,
}

use Found::{Label, Shape};

/// gitleaks' rules: (rule id, the identifier its samples use, the secret's format).
const GITLEAKS: &[(&str, &str, &str, Found)] = &[
    (
        "1password-secret-key",
        "1password",
        "A3-{u6}-{u11}-{u5}-{u5}-{u5}",
        Shape,
    ),
    (
        "1password-service-account-token",
        "1password",
        "ops_eyJ{b250}",
        Shape,
    ),
    ("adafruit-api-key", "adafruit", "{x32}", Label),
    ("adobe-client-id", "adobe", "{h32}", Label),
    ("adobe-client-secret", "adobe", "p8e-{a32}", Shape),
    (
        "age-secret-key",
        "age",
        "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        Shape,
    ),
    ("airtable-api-key", "airtable", "{a17}", Label),
    (
        "airtable-personnal-access-token",
        "airtable",
        "pat{a14}.{h64}",
        Shape,
    ),
    ("algolia-api-key", "algolia", "{h32}", Label),
    ("alibaba-access-key-id", "alibaba", "LTAI{a20}", Shape),
    ("alibaba-secret-key", "alibaba", "{a30}", Label),
    (
        "anthropic-admin-api-key",
        "anthropic",
        "sk-ant-admin01-{x93}AA",
        Shape,
    ),
    (
        "anthropic-api-key",
        "anthropic",
        "sk-ant-api03-{x93}AA",
        Shape,
    ),
    ("artifactory-api-key", "artifactory", "AKCp{a69}", Shape),
    (
        "artifactory-reference-token",
        "artifactory",
        "cmVmd{a59}",
        Shape,
    ),
    ("asana-client-id", "asana", "{d16}", Label),
    ("asana-client-secret", "asana", "{a32}", Label),
    ("atlassian-api-token", "jira", "{a20}{h4}", Label),
    (
        "authress-service-client-access-key",
        "authress",
        "sc_{l12}.{l5}.acc_{l16}.{b60}",
        Shape,
    ),
    ("aws-access-token", "AWS", "AKIA{u16}", Shape),
    (
        "aws-amazon-bedrock-api-key-long-lived",
        "bedrock",
        "ABSKQmVkcm9ja0FQSUtleS1{a108}=",
        Shape,
    ),
    (
        "aws-amazon-bedrock-api-key-short-lived",
        "bedrock",
        "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{b40}",
        Shape,
    ),
    ("azure-ad-client-secret", "azure", "{a3}8Q~{x33}", Shape),
    ("beamer-api-token", "beamer", "b_{e44}", Label),
    ("bitbucket-client-id", "bitbucket", "{a32}", Label),
    ("bitbucket-client-secret", "bitbucket", "{a64}", Label),
    ("bittrex-access-key", "bittrex", "{a32}", Label),
    ("bittrex-secret-key", "bittrex", "{a32}", Label),
    ("cisco-meraki-api-key", "meraki", "{h40}", Label),
    (
        "clickhouse-cloud-api-secret-key",
        "ClickHouse",
        "4b1d{a38}",
        Shape,
    ),
    ("clojars-api-token", "clojars", "CLOJARS_{a60}", Shape),
    ("cloudflare-api-key", "cloudflare", "{x40}", Label),
    ("cloudflare-global-api-key", "cloudflare", "{h37}", Label),
    (
        "cloudflare-origin-ca-key",
        "cloudflare",
        "v1.0-{h24}-{h146}",
        Shape,
    ),
    ("codecov-access-token", "codecov", "{a32}", Label),
    ("cohere-api-token", "cohere", "{a40}", Label),
    ("coinbase-access-token", "coinbase", "{x64}", Label),
    ("confluent-access-token", "confluent", "{a16}", Label),
    ("confluent-secret-key", "confluent", "{a64}", Label),
    (
        "contentful-delivery-api-token",
        "contentful",
        "{a43}",
        Label,
    ),
    ("databricks-api-token", "databricks", "dapi{h32}", Shape),
    ("datadog-access-token", "datadog", "{a40}", Label),
    (
        "defined-networking-api-token",
        "dnkey",
        "dnkey-{e26}-{e52}",
        Shape,
    ),
    ("digitalocean-access-token", "do", "doo_v1_{h64}", Shape),
    ("digitalocean-pat", "do", "dop_v1_{h64}", Shape),
    ("digitalocean-refresh-token", "do", "dor_v1_{h64}", Shape),
    ("discord-api-token", "discord", "{h64}", Label),
    ("discord-client-id", "discord", "{d18}", Label),
    ("discord-client-secret", "discord", "{d32}", Label),
    ("doppler-api-token", "doppler", "dp.pt.{a43}", Shape),
    ("droneci-access-token", "droneci", "{a32}", Label),
    ("dropbox-api-token", "dropbox", "{a15}", Label),
    (
        "dropbox-long-lived-api-token",
        "dropbox",
        "{a11}AAAAAAAAAA{e43}",
        Label,
    ),
    (
        "dropbox-short-lived-api-token",
        "dropbox",
        "sl.{e135}",
        Shape,
    ),
    ("duffel-api-token", "duffel", "duffel_test_{e43}", Shape),
    (
        "dynatrace-api-token",
        "dynatrace",
        "dt0c01.{a24}.{a64}",
        Shape,
    ),
    ("easypost-api-token", "EZAK", "EZAK{a54}", Shape),
    ("easypost-test-api-token", "EZTK", "EZTK{a54}", Shape),
    ("etsy-access-token", "etsy", "{a24}", Label),
    ("facebook-access-token", "facebook", "{d15}|{x32}", Shape),
    (
        "facebook-page-access-token",
        "facebook",
        "EAAM{a110}",
        Shape,
    ),
    ("facebook-secret", "facebook", "{h32}", Label),
    ("fastly-api-token", "fastly", "{e32}", Label),
    ("finicity-api-token", "finicity", "{h32}", Label),
    ("finicity-client-secret", "finicity", "{a20}", Label),
    ("finnhub-access-token", "finnhub", "{a20}", Label),
    ("flickr-access-token", "flickr", "{a32}", Label),
    (
        "flutterwave-encryption-key",
        "flutterwave",
        "FLWSECK_TEST-{h12}",
        Shape,
    ),
    (
        "flutterwave-public-key",
        "flutterwave",
        "FLWPUBK_TEST-{h32}-X",
        Shape,
    ),
    (
        "flutterwave-secret-key",
        "flutterwave",
        "FLWSECK_TEST-{h32}-X",
        Shape,
    ),
    ("flyio-access-token", "fly", "fm2_{b120}", Shape),
    ("frameio-api-token", "frameio", "fio-u-{e64}", Shape),
    ("freemius-secret-key", "freemius", "sk_{a29}", Label),
    ("freshbooks-access-token", "freshbooks", "{a64}", Label),
    ("gcp-api-key", "gcp", "AIza{x35}", Shape),
    ("generic-api-key", "client_api", "{a32}", Label),
    ("github-app-token", "github", "ghs_{a36}", Shape),
    (
        "github-fine-grained-pat",
        "github",
        "github_pat_{a82}",
        Shape,
    ),
    ("github-oauth", "github", "gho_{a36}", Shape),
    ("github-pat", "github", "ghp_{a36}", Shape),
    ("github-refresh-token", "github", "ghr_{a36}", Shape),
    ("gitlab-cicd-job-token", "gitlab", "glcbt-{a5}_{a20}", Shape),
    ("gitlab-deploy-token", "gitlab", "gldt-{a20}", Shape),
    (
        "gitlab-feature-flag-client-token",
        "gitlab",
        "glffct-{a20}",
        Shape,
    ),
    ("gitlab-feed-token", "gitlab", "glft-{a20}", Shape),
    ("gitlab-incoming-mail-token", "gitlab", "glimt-{a25}", Shape),
    (
        "gitlab-kubernetes-agent-token",
        "gitlab",
        "glagent-{a50}",
        Shape,
    ),
    ("gitlab-oauth-app-secret", "gitlab", "gloas-{a64}", Shape),
    ("gitlab-pat", "gitlab", "glpat-{a20}", Shape),
    ("gitlab-pat-routable", "gitlab", "glpat-{a27}.{l9}", Shape),
    ("gitlab-ptt", "gitlab", "glptt-{h40}", Shape),
    ("gitlab-rrt", "gitlab", "GR1348941{a20}", Shape),
    (
        "gitlab-runner-authentication-token",
        "gitlab",
        "glrt-{a20}",
        Shape,
    ),
    (
        "gitlab-runner-authentication-token-routable",
        "gitlab",
        "glrt-t1_{a27}.{l9}",
        Shape,
    ),
    ("gitlab-scim-token", "gitlab", "glsoat-{a20}", Shape),
    (
        "gitlab-session-cookie",
        "gitlab",
        "_gitlab_session={l32}",
        Shape,
    ),
    ("gitter-access-token", "gitter", "{x40}", Label),
    ("gocardless-api-token", "gocardless", "live_{e40}", Label),
    ("grafana-api-key", "grafana-api-key", "eyJrIjoi{a70}", Shape),
    (
        "grafana-cloud-api-token",
        "grafana-cloud-api-token",
        "glc_{a32}",
        Shape,
    ),
    (
        "grafana-service-account-token",
        "grafana-service-account-token",
        "glsa_{a32}_{h8}",
        Shape,
    ),
    ("harness-api-key", "harness", "pat.{a22}.{a24}.{a20}", Shape),
    (
        "hashicorp-tf-api-token",
        "hashicorpToken",
        "{h14}.atlasv1.{e64}",
        Shape,
    ),
    (
        "hashicorp-tf-password",
        "administrator_login_password",
        "{a16}",
        Label,
    ),
    (
        "heroku-api-key",
        "heroku",
        "{h8}-{h4}-{h4}-{h4}-{h12}",
        Label,
    ),
    ("heroku-api-key-v2", "heroku", "HRKU-AA{x58}", Shape),
    (
        "hubspot-api-key",
        "hubspot",
        "{H8}-{H4}-{H4}-{H4}-{H12}",
        Label,
    ),
    ("huggingface-access-token", "huggingface", "hf_{L34}", Shape),
    (
        "huggingface-organization-api-token",
        "huggingface",
        "api_org_{L34}",
        Shape,
    ),
    ("infracost-api-token", "ico", "ico-{a32}", Shape),
    ("intercom-api-key", "intercom", "{e60}", Label),
    ("intra42-client-secret", "intra", "s-s4t2ud-{h64}", Shape),
    ("jfrog-api-key", "jfrog", "{a73}", Label),
    ("jfrog-identity-token", "xray", "{a64}", Label),
    ("jwt", "jwt", "eyJ{x20}.eyJ{x40}.{x43}", Shape),
    (
        "jwt-base64",
        "jwt",
        "ZXlKaGJHY2lPaUpJVXpJMU5pSjku{b80}",
        Shape,
    ),
    ("kraken-access-token", "kraken", "{b86}", Label),
    ("kucoin-access-token", "kucoin", "{h24}", Label),
    (
        "kucoin-secret-key",
        "kucoin",
        "{h8}-{h4}-{h4}-{h4}-{h12}",
        Label,
    ),
    ("launchdarkly-access-token", "launchdarkly", "{e40}", Label),
    ("linear-api-key", "linear", "lin_api_{a40}", Shape),
    ("linear-client-secret", "linear", "{h32}", Label),
    ("linkedin-client-id", "linkedin", "{l14}", Label),
    ("linkedin-client-secret", "linkedin", "{l16}", Label),
    ("lob-api-key", "lob", "test_{h35}", Shape),
    ("lob-pub-api-key", "lob", "test_pub_{h31}", Shape),
    ("looker-client-id", "looker", "{a20}", Label),
    ("looker-client-secret", "looker", "{a24}", Label),
    ("mailchimp-api-key", "mailchimp", "{h32}-us20", Shape),
    ("mailgun-private-api-token", "mailgun", "key-{h32}", Shape),
    ("mailgun-pub-key", "mailgun", "pubkey-{h32}", Label),
    ("mailgun-signing-key", "mailgun", "{h32}-{h8}-{h8}", Label),
    ("mapbox-api-token", "mapbox", "pk.{a60}.{a22}", Shape),
    ("mattermost-access-token", "mattermost", "{a26}", Label),
    ("maxmind-license-key", "maxmind", "{a6}_{a29}_mmk", Shape),
    ("messagebird-api-token", "messagebird", "{a25}", Label),
    (
        "messagebird-client-id",
        "message_bird",
        "{h8}-{h4}-{h4}-{h4}-{h12}",
        Label,
    ),
    ("netlify-access-token", "netlify", "{e43}", Label),
    (
        "new-relic-browser-api-token",
        "new-relic",
        "NRJS-{h19}",
        Shape,
    ),
    ("new-relic-insert-key", "new-relic", "NRII-{h32}", Shape),
    ("new-relic-user-api-id", "new-relic", "{a64}", Label),
    ("new-relic-user-api-key", "new-relic", "NRAK-{u27}", Shape),
    ("notion-api-token", "notion", "ntn_{d11}{a35}", Shape),
    ("npm-access-token", "npmAccessToken", "npm_{a36}", Shape),
    ("nytimes-access-token", "nytimes", "{a32}", Label),
    ("octopus-deploy-api-key", "octopus", "API-{u26}", Shape),
    ("okta-access-token", "okta", "00{x40}", Label),
    (
        "openai-api-key",
        "openaiApiKey",
        "sk-proj-{x58}T3BlbkFJ{x58}",
        Shape,
    ),
    ("openshift-user-token", "oc", "sha256~{x43}", Shape),
    ("perplexity-api-key", "perplexity", "pplx-{a48}", Shape),
    (
        "plaid-api-token",
        "plaid",
        "access-production-{h8}-{h4}-{h4}-{h4}-{h12}",
        Shape,
    ),
    ("plaid-client-id", "plaid", "{a24}", Label),
    ("plaid-secret-key", "plaid", "{a30}", Label),
    (
        "planetscale-api-token",
        "planetScale",
        "pscale_tkn_{e43}",
        Shape,
    ),
    (
        "planetscale-oauth-token",
        "planetScale",
        "pscale_oauth_{e43}",
        Shape,
    ),
    (
        "planetscale-password",
        "planetScale",
        "pscale_pw_{e43}",
        Shape,
    ),
    (
        "postman-api-token",
        "postmanAPItoken",
        "PMAK-{h24}-{h34}",
        Shape,
    ),
    ("prefect-api-token", "api-token", "pnu_{a36}", Shape),
    ("privateai-api-token", "privateai", "{a32}", Label),
    ("pulumi-api-token", "pulumi-api-token", "pul-{h40}", Shape),
    (
        "pypi-upload-token",
        "pypi",
        "pypi-AgEIcHlwaS5vcmc{h64}",
        Shape,
    ),
    ("rapidapi-access-token", "rapidapi", "{x50}", Label),
    ("readme-api-token", "api-token", "rdme_{l70}", Shape),
    (
        "rubygems-api-token",
        "rubygemsAPIToken",
        "rubygems_{h48}",
        Shape,
    ),
    ("scalingo-api-token", "scalingo", "tk-us-{x48}", Shape),
    (
        "sendbird-access-id",
        "sendbird",
        "{h8}-{h4}-{h4}-{h4}-{h12}",
        Label,
    ),
    ("sendbird-access-token", "sendbird", "{h40}", Label),
    (
        "sendgrid-api-token",
        "sengridAPIToken",
        "SG.{x22}.{x43}",
        Shape,
    ),
    (
        "sendinblue-api-token",
        "sendinblue",
        "xkeysib-{h64}-{a16}",
        Shape,
    ),
    ("sentry-access-token", "sentry", "{h64}", Label),
    (
        "sentry-org-token",
        "sentry",
        "sntrys_eyJpYXQiOjE3MDAwMDAwMDAsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIiwicmVnaW9uX3VybCI6{b40}_{b43}",
        Shape,
    ),
    ("sentry-user-token", "sentry", "sntryu_{h64}", Shape),
    (
        "settlemint-application-access-token",
        "settlemintToken",
        "sm_aat_{a16}",
        Shape,
    ),
    (
        "settlemint-personal-access-token",
        "settlemintToken",
        "sm_pat_{a16}",
        Shape,
    ),
    (
        "settlemint-service-access-token",
        "settlemintToken",
        "sm_sat_{a16}",
        Shape,
    ),
    ("shippo-api-token", "shippo", "shippo_live_{h40}", Shape),
    ("shopify-access-token", "shopify", "shpat_{h32}", Shape),
    (
        "shopify-custom-access-token",
        "shopify",
        "shpca_{h32}",
        Shape,
    ),
    (
        "shopify-private-app-access-token",
        "shopify",
        "shppa_{h32}",
        Shape,
    ),
    ("shopify-shared-secret", "shopify", "shpss_{h32}", Shape),
    (
        "sidekiq-secret",
        "BUNDLE_ENTERPRISE__CONTRIBSYS__COM",
        "{h8}:{h8}",
        Label,
    ),
    (
        "slack-app-token",
        "slack",
        "xapp-1-A{u10}-{d13}-{h64}",
        Shape,
    ),
    ("slack-bot-token", "bot", "xoxb-{d12}-{d13}-{a24}", Shape),
    (
        "slack-config-access-token",
        "access",
        "xoxe.xoxp-1-{a163}",
        Shape,
    ),
    (
        "slack-config-refresh-token",
        "refresh",
        "xoxe-1-{a146}",
        Shape,
    ),
    ("slack-legacy-bot-token", "slack", "xoxb-{d12}-{a24}", Shape),
    (
        "slack-legacy-token",
        "slack",
        "xoxs-{d12}-{d9}-{d10}-{h10}",
        Shape,
    ),
    (
        "slack-legacy-workspace-token",
        "slack",
        "xoxa-2-{a24}",
        Shape,
    ),
    (
        "slack-user-token",
        "user",
        "xoxp-{d11}-{d10}-{d11}-{h32}",
        Shape,
    ),
    ("snyk-api-token", "snyk", "{h8}-{h4}-{h4}-{h4}-{h12}", Label),
    ("sonar-api-token", "sonar", "squ_{h40}", Label),
    (
        "sourcegraph-access-token",
        "sourcegraph",
        "sgp_{h16}_{h40}",
        Shape,
    ),
    ("square-access-token", "square", "sq0atp-{x40}", Shape),
    (
        "squarespace-access-token",
        "squarespace",
        "{h8}-{h4}-{h4}-{h4}-{h12}",
        Label,
    ),
    ("stripe-access-token", "stripe", "sk_test_{a30}", Shape),
    ("sumologic-access-id", "sumo", "su{a12}", Label),
    ("sumologic-access-token", "sumo", "{a64}", Label),
    ("telegram-bot-api-token", "telegram", "{d9}:A{x34}", Shape),
    ("travisci-access-token", "travis", "{a22}", Label),
    ("twilio-api-key", "twilio", "SK{h32}", Shape),
    ("twitch-api-token", "twitch", "{a30}", Label),
    ("twitter-access-secret", "twitter", "{a45}", Label),
    ("twitter-access-token", "twitter", "{d19}-{a32}", Label),
    ("twitter-api-key", "twitter", "{a25}", Label),
    ("twitter-api-secret", "twitter", "{a50}", Label),
    (
        "twitter-bearer-token",
        "twitter",
        "AAAAAAAAAAAAAAAAAAAAAA{a90}",
        Shape,
    ),
    ("typeform-api-token", "typeformAPIToken", "tfp_{e59}", Shape),
    ("vault-batch-token", "vault", "hvb.{x138}", Shape),
    ("vault-service-token", "vault", "hvs.{x95}", Shape),
    ("yandex-access-token", "yandex", "t1.{x40}.{x86}", Shape),
    ("yandex-api-key", "yandex", "AQVN{x36}", Shape),
    ("yandex-aws-access-token", "yandex", "YC{x38}", Label),
    ("zendesk-secret-key", "zendesk", "{a40}", Label),
];

/// gitleaks' rules whose samples are whole documents or commands rather than a token
/// after an identifier: (rule id, text with `{s}` where the secret goes, the secret's format).
const GITLEAKS_STRUCTURAL: &[(&str, &str, &str)] = &[
    (
        "curl-auth-header",
        "curl -s -H \"Authorization: Bearer {s}\" https://api.example.com/v1/me",
        "{x40}",
    ),
    (
        "curl-auth-header",
        "curl --header 'Authorization: Basic {s}' https://example.com",
        "dXNlcm5hbWU6c2VjcmV0X3Bhc3N3b3Jk{b8}",
    ),
    (
        "curl-auth-header",
        "curl -H \"X-Api-Key: {s}\" https://example.com/api",
        "{a32}",
    ),
    (
        "curl-auth-header",
        "curl -H 'Authorization: Token {s}' https://example.com",
        "{h40}",
    ),
    (
        "curl-auth-user",
        "curl -u admin:{s} https://ci.example.com/api/json",
        "{a16}",
    ),
    (
        "curl-auth-user",
        "curl --user \"deploy:{s}\" https://example.com",
        "{x20}",
    ),
    (
        "kubernetes-secret-yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: {s}\n",
        "{b32}",
    ),
    (
        "kubernetes-secret-yaml",
        "apiVersion: v1\ndata:\n  api-key: {s}\nkind: Secret\nmetadata:\n  name: api\n",
        "{b44}==",
    ),
    (
        "nuget-config-password",
        "<packageSourceCredentials><feed><add key=\"Username\" value=\"ci\" /><add key=\"ClearTextPassword\" value=\"{s}\" /></feed></packageSourceCredentials>",
        "{x24}",
    ),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{s}\n-----END RSA PRIVATE KEY-----",
        "{b64}",
    ),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{s}\n-----END OPENSSH PRIVATE KEY-----",
        "{b70}",
    ),
    (
        "private-key",
        "-----BEGIN EC PRIVATE KEY-----\n{s}\n-----END EC PRIVATE KEY-----",
        "{b64}",
    ),
    (
        "private-key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBGZ{s}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----",
        "{b64}",
    ),
    (
        "sidekiq-sensitive-url",
        "source \"https://{s}@gems.contribsys.com/\" do",
        "{h8}:{h8}",
    ),
    (
        "sidekiq-sensitive-url",
        "https://{s}@enterprise.contribsys.com/",
        "{h8}:{h8}",
    ),
    (
        "slack-webhook-url",
        "https://hooks.slack.com/services/{s}",
        "T{u8}/B{u10}/{a24}",
    ),
    (
        "slack-webhook-url",
        "hooks.slack.com/workflows/{s}",
        "{a44}",
    ),
    (
        "microsoft-teams-webhook",
        "https://contoso.webhook.office.com/webhookb2/{s}",
        "{h8}-{h4}-{h4}-{h4}-{h12}@{h8}-{h4}-{h4}-{h4}-{h12}/IncomingWebhook/{h32}/{h8}-{h4}-{h4}-{h4}-{h12}",
    ),
    (
        "freemius-secret-key",
        "$config = array(\n  \"secret_key\" => \"{s}\",\n);",
        "sk_{a29}",
    ),
    (
        "hashicorp-tf-password",
        "administrator_login_password = \"{s}\"",
        "{x16}",
    ),
    ("generic-api-key", "private_key_id = {s}", "{h40}"),
    ("generic-api-key", "\"client_credential\": \"{s}\"", "{a32}"),
    (
        "azure-ad-client-secret",
        "\"pass\": \"{s}\"",
        "{a3}7Q~{x34}",
    ),
    ("facebook-access-token", "fbAuth={s}", "{d15}%7C{x32}"),
    (
        "telegram-bot-api-token",
        "https://api.telegram.org/bot{s}/sendMessage",
        "{d10}:A{x34}",
    ),
];

/// gitleaks rules with nothing to find in text: `pkcs12-file` matches a file by its name.
const GITLEAKS_NOT_TEXT: &[&str] = &["pkcs12-file"];

/// gitleaks' sample contexts (`utils.GenerateSampleSecrets`): `{i}` the identifier, `{I}`
/// the same in upper case, `{s}` the secret.
const GITLEAKS_CONTEXTS: &[&str] = &[
    "{i}Token=\"{s}\"",
    "{i}Token = \"{s}\"",
    "{i}Token={s}",
    "{i}Token = {s}",
    "{\n    \"{i}_token\": \"{s}\"\n}",
    "{\"config.ini\": \"{I}_TOKEN={s}\\nBACKUP_ENABLED=true\"}",
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    "{i}_token: \"{s}\"",
    "string {i}Token = \"{s}\";",
    "var {i}Token string = \"{s}\"",
    "{i}Token := \"{s}\"",
    "{i}Token := `{s}`",
    "String {i}Token = \"{s}\";",
    "var {i}Token = \"{s}\"",
    "${i}Token .= \"{s}\"",
    "{i}Token = '{s}'",
    "{i}Token = \"{s}\"",
    "System.setProperty(\"{I}_TOKEN\", \"{s}\")",
    "  \"{i}Token\" => \"{s}\"",
    "{i}_TOKEN = \"{s}\"",
    "{i}_TOKEN := \"{s}\"",
    "{i}_TOKEN ::= \"{s}\"",
    "{i}_TOKEN :::= \"{s}\"",
    "{i}_TOKEN ?= \"{s}\"",
];

/// Contexts for a token found by its shape alone.
const BARE_CONTEXTS: &[&str] = &[
    "{s}",
    "the build failed with {s} in its log",
    "https://example.com/callback?code=1&t={s}&q=1",
    "{\"value\":\"{s}\",\"n\":1}",
    "export VALUE='{s}'",
];

/// Contexts for a token found after a label naming its service, with no word such as
/// `token` or `secret` in the label.
const SERVICE_CONTEXTS: &[&str] = &[
    "{i}_id = {s}",
    "{I}_CONSUMER: \"{s}\"",
    "{i}.client = '{s}'",
];

/// The 49 secret shapes of the second attack (issue 30, item 6): the 20 it got through
/// first, then the 29 the redactor already masked. (name, text with `{s}`, secret format.)
const ATTACK_SHAPES: &[(&str, &str, &str)] = &[
    ("stripe sk_live_", "STRIPE_KEY in use: {s}", "sk_live_{a24}"),
    (
        "stripe rk_live_",
        "restricted key {s} rotated",
        "rk_live_{a24}",
    ),
    (
        "azure AccountKey=",
        "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={s};EndpointSuffix=core.windows.net",
        "{b86}==",
    ),
    (
        "azure SAS sig=",
        "https://prodlogs.blob.core.windows.net/c/app.log?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&spr=https&sig={s}",
        "{a30}%2B{a12}%3D",
    ),
    (
        "PGP private key block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF{s}\n-----END PGP PRIVATE KEY BLOCK-----",
        "{b64}",
    ),
    (
        "telegram bot token",
        "TG={s} python bot.py",
        "{d10}:AA{x33}",
    ),
    (
        "--password VALUE",
        "pg_dump --host db --password {s} app",
        "{a14}",
    ),
    (
        ".netrc",
        "machine api.example.com\n  login deploy\n  password {s}\n",
        "{x18}",
    ),
    ("Authorization: Token", "Authorization: Token {s}", "{h40}"),
    ("Cookie:", "Cookie: sessionid={s}; csrftoken=x1", "{l32}"),
    (
        "docker auth",
        "{\"auths\":{\"registry.example.com\":{\"auth\":\"{s}\"}}}",
        "ZGVwbG95OnMzY3JldC1wYXNz{b8}",
    ),
    (
        "gitlab glpat-",
        "git remote set-url origin https://oauth2:{s}@gitlab.example.com/g/p.git",
        "glpat-{x20}",
    ),
    (
        "npm npm_",
        "//registry.npmjs.org/:_authToken={s}",
        "npm_{a36}",
    ),
    ("sendgrid SG.", "mail via {s}", "SG.{x22}.{x43}"),
    (
        "hugging face hf_",
        "huggingface-cli login --token {s}",
        "hf_{L34}",
    ),
    (
        "slack webhook",
        "curl -X POST https://hooks.slack.com/services/{s} -d @msg.json",
        "T{u8}/B{u10}/{a24}",
    ),
    (
        "-passin pass:",
        "openssl rsa -in key.pem -passin pass:{s} -out plain.pem",
        "{a16}",
    ),
    ("secret_key:", "secret_key: {s}", "{x24}"),
    (
        "token as URL user",
        "git clone https://{s}@github.com/org/private.git",
        "{h40}",
    ),
    (
        "percent-encoded URL credentials",
        "GET /login?next=https%3A%2F%2Fadmin%3A{s}%40db.internal%2Fapp",
        "{a16}",
    ),
    ("bearer header", "Authorization: Bearer {s}", "{x40}"),
    (
        "basic header",
        "Authorization: Basic {s}",
        "YWRtaW46aHVudGVyMg{b6}",
    ),
    (
        "jwt",
        "session {s} expired",
        "eyJhbGciOiJIUzI1NiJ9.eyJ{x40}.{x43}",
    ),
    ("openai sk-proj-", "OPENAI_API_KEY={s}", "sk-proj-{x48}"),
    ("anthropic sk-ant-", "using {s}", "sk-ant-api03-{x93}AA"),
    ("aws access key id", "aws key {s} in use", "AKIA{u16}"),
    (
        "aws secret access key",
        "aws_secret_access_key = {s}",
        "{b40}",
    ),
    ("github ghp_", "clone with {s}", "ghp_{a36}"),
    ("github gho_", "oauth {s}", "gho_{a36}"),
    ("github_pat_", "pat {s}", "github_pat_{a82}"),
    ("slack xoxb-", "slack {s}", "xoxb-{d12}-{d13}-{a24}"),
    ("google AIza", "maps {s}", "AIza{x35}"),
    (
        "RSA private key",
        "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
        "{b64}",
    ),
    (
        "OpenSSH private key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",
        "{b70}",
    ),
    (
        "URL password",
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
        "{x16}",
    ),
    ("redis URL password", "redis://:{s}@cache:6379/0", "{a16}"),
    ("password=", "connect with password={s} please", "{x12}"),
    ("passwd:", "passwd: {s}", "{a12}"),
    ("PGPASSWORD=", "PGPASSWORD={s} psql -h db -U app", "{a12}"),
    ("mysql -p", "mysql -h db -u root -p{s} appdb", "{a12}"),
    (
        "mysqldump --password=",
        "mysqldump --password={s} appdb",
        "{a12}",
    ),
    (
        "json \"password\"",
        "{\"user\":\"app\",\"password\":\"{s}\"}",
        "{x14}",
    ),
    ("quoted DB_PASSWORD", "export DB_PASSWORD=\"{s}\"", "{x14}"),
    ("api_key=", "settings: api_key={s}; region=eu", "{a20}"),
    ("curl -u", "curl -u admin:{s} https://x.test", "{a12}"),
    ("sshpass -p", "sshpass -p {s} ssh backup@host", "{a12}"),
    ("GITHUB_TOKEN=", "GITHUB_TOKEN={s} make release", "{a14}"),
    ("\"token\":", "{\"token\":\"{s}\"}", "{x24}"),
    ("X-Api-Key header", "X-Api-Key: {s}", "{a32}"),
];

/// Text that holds no secret and must come out as it went in: prose, logs, identifiers,
/// base64 of ordinary data, code and configuration, and look-alikes from gitleaks' own
/// negative samples.
const NEGATIVES: &[&str] = &[
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

/// What one sample set gave.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    samples: usize,
    misses: Vec<String>,
}

/// Whether a random part of the secret survived in any string of the output.
fn survives(redactor: &Redactor, text: &str, parts: &[String]) -> Option<String> {
    let as_text = redactor.redact_text(text);
    let as_value = redactor.redact_value(&json!({"note": text, "list": [text]}));
    let strings = [
        as_text,
        as_value["note"].as_str().unwrap_or_default().to_owned(),
        as_value["list"][0].as_str().unwrap_or_default().to_owned(),
    ];
    parts
        .iter()
        .filter(|p| p.len() >= 8)
        .find(|p| strings.iter().any(|s| s.contains(p.as_str())))
        .map(|p| format!("{text:?} kept {p:?} → {:?}", strings[0]))
}

fn fill(template: &str, identifier: &str, secret: &str) -> String {
    template
        .replace("{i}", identifier)
        .replace("{I}", &identifier.to_ascii_uppercase())
        .replace("{s}", secret)
}

fn gitleaks_tally(redactor: &Redactor) -> (Tally, BTreeMap<&'static str, usize>) {
    let mut tally = Tally::default();
    let mut per_rule: BTreeMap<&'static str, usize> = BTreeMap::new();
    for &(id, identifier, format, found) in GITLEAKS {
        let mut fakes = Fakes::new(id);
        let mut contexts: Vec<&str> = GITLEAKS_CONTEXTS.to_vec();
        contexts.extend(match found {
            Shape => BARE_CONTEXTS,
            Label => SERVICE_CONTEXTS,
        });
        for context in contexts {
            let (secret, parts) = fakes.expand(format);
            let text = fill(context, identifier, &secret);
            tally.samples += 1;
            *per_rule.entry(id).or_default() += 1;
            tally.misses.extend(survives(redactor, &text, &parts));
        }
    }
    for &(id, template, format) in GITLEAKS_STRUCTURAL {
        let mut fakes = Fakes::new(template);
        let (secret, parts) = fakes.expand(format);
        let text = template.replace("{s}", &secret);
        tally.samples += 1;
        *per_rule.entry(id).or_default() += 1;
        tally.misses.extend(survives(redactor, &text, &parts));
    }
    (tally, per_rule)
}

fn shape_tally(redactor: &Redactor) -> Tally {
    let mut tally = Tally::default();
    for &(name, template, format) in ATTACK_SHAPES {
        let mut fakes = Fakes::new(name);
        let (secret, parts) = fakes.expand(format);
        let text = template.replace("{s}", &secret);
        tally.samples += 1;
        tally.misses.extend(survives(redactor, &text, &parts));
    }
    tally
}

/// Generated negatives: (what, format), each expanded 100 times with its own seed.
const GENERATED_NEGATIVES: &[(&str, &str)] = &[
    ("uuid", "{h8}-{h4}-4{h3}-a{h3}-{h12}"),
    ("git sha-1", "commit {h40}"),
    ("sha-256", "sha256:{h64}"),
    ("short sha", "fixed in {h7} and {h7}"),
    ("base64 of text", "{s}"),
];

/// Base64 of an ordinary sentence, chosen by `n`.
fn base64_of_text(n: usize) -> String {
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
fn negatives() -> Vec<String> {
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

/// Negative samples that changed, with what they became.
fn false_positives(redactor: &Redactor, negatives: &[String]) -> Vec<String> {
    negatives
        .iter()
        .map(String::as_str)
        .filter_map(|text| {
            let out = redactor.redact_text(text);
            let value = redactor.redact_value(&json!({"note": text}));
            (out != text || value != json!({"note": text})).then(|| format!("{text:?} → {out:?}"))
        })
        .collect()
}

#[test]
#[allow(clippy::print_stdout)]
fn the_corpus_is_masked_and_the_negatives_are_kept() {
    let redactor = Redactor::default();
    let (gitleaks, per_rule) = gitleaks_tally(&redactor);
    let shapes = shape_tally(&redactor);
    let negatives = negatives();
    let false_positives = false_positives(&redactor, &negatives);

    println!(
        "gitleaks rules: {} with samples + {} not text = {}",
        per_rule.len(),
        GITLEAKS_NOT_TEXT.len(),
        per_rule.len() + GITLEAKS_NOT_TEXT.len()
    );
    println!(
        "gitleaks samples: {}, missed {}",
        gitleaks.samples,
        gitleaks.misses.len()
    );
    println!(
        "attack shapes: {}, missed {}",
        shapes.samples,
        shapes.misses.len()
    );
    println!(
        "negatives: {} ({} written, {} generated), false positives {}",
        negatives.len(),
        NEGATIVES.len(),
        negatives.len() - NEGATIVES.len(),
        false_positives.len()
    );
    for miss in gitleaks.misses.iter().chain(&shapes.misses) {
        println!("MISS {miss}");
    }
    for fp in &false_positives {
        println!("FALSE POSITIVE {fp}");
    }

    assert_eq!(
        (
            per_rule.len() + GITLEAKS_NOT_TEXT.len(),
            gitleaks.samples,
            shapes.samples,
            negatives.len()
        ),
        (222, 6_456, 49, 543),
        "the corpus changed: update these counts and docs/security.md"
    );
    assert_eq!(gitleaks.misses, Vec::<String>::new());
    assert_eq!(shapes.misses, Vec::<String>::new());
    assert_eq!(false_positives, Vec::<String>::new());
}

#[test]
fn every_gitleaks_rule_has_samples_once() {
    let mut ids: Vec<&str> = GITLEAKS.iter().map(|r| r.0).collect();
    ids.extend(GITLEAKS_NOT_TEXT);
    ids.extend([
        "curl-auth-header",
        "curl-auth-user",
        "kubernetes-secret-yaml",
    ]);
    ids.extend([
        "nuget-config-password",
        "private-key",
        "sidekiq-sensitive-url",
    ]);
    ids.extend(["slack-webhook-url", "microsoft-teams-webhook"]);
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "a rule is listed twice");
    assert_eq!(ids.len(), 222);
}

#[test]
fn percent_encoded_credentials_are_masked_where_they_are_written() {
    let r = Redactor::default();
    assert_eq!(
        r.redact_text("next=https%3A%2F%2Fadmin%3Ahunter2pw%40db.internal%2F"),
        "next=https%3A%2F%2Fadmin%3A[REDACTED]%40db.internal%2F"
    );
    assert_eq!(
        r.redact_text("q=password%3Ds3cr3t-value&x=1"),
        "q=password%3D[REDACTED]&x=1"
    );
    let v: Value = r.redact_value(&json!({"u": "postgres://app:p%40ss%21word@db/app"}));
    assert_eq!(v, json!({"u": "postgres://app:[REDACTED]@db/app"}));
}

#[test]
fn secrets_under_keys_of_structured_values_are_masked() {
    let r = Redactor::default();
    let docker = json!({"auths": {"registry.example.com": {"auth": "ZGVwbG95OnMzY3JldA==", "email": "ci@example.com"}}});
    assert_eq!(
        r.redact_value(&docker),
        json!({"auths": {"registry.example.com": {"auth": "[REDACTED]", "email": "ci@example.com"}}})
    );
    let azure = json!({"AccountKey": "bm90IGEgcmVhbCBrZXk=", "sig": "abc%2Bdef", "ssh_passphrase": "correct horse"});
    assert_eq!(
        r.redact_value(&azure),
        json!({"AccountKey": "[REDACTED]", "sig": "[REDACTED]", "ssh_passphrase": "[REDACTED]"})
    );
}

#[test]
fn headers_keep_the_text_after_a_one_token_scheme() {
    let r = Redactor::default();
    for (input, expected) in [
        (
            "Authorization: Bearer abcdef1234567890XYZ and aws AKIAIOSFODNN7EXAMPLE ok",
            "Authorization: Bearer [REDACTED] and aws [REDACTED] ok",
        ),
        (
            "Authorization: Digest username=\"bob\", response=\"6629fae49393a05397450978507c4ef1\"",
            "Authorization: Digest [REDACTED]",
        ),
        (
            "Cookie: sessionid=abc123def456; theme=dark",
            "Cookie: [REDACTED]",
        ),
        (
            "the authorization: required field",
            "the authorization: required field",
        ),
        (
            r#"{"Cookie": "sid=abc123; theme=dark", "Accept": "json"}"#,
            r#"{"Cookie": "[REDACTED]", "Accept": "json"}"#,
        ),
    ] {
        assert_eq!(r.redact_text(input), expected, "input: {input}");
    }
}

/// What the `redact` fuzz target reported as open gaps (docs/security.md, Fuzzing), and what
/// a sweep of its generator found with the gaps' skip off: a match that starts before a
/// secret took the secret's context as its own value.
#[test]
fn a_match_before_a_secret_no_longer_swallows_it() {
    let r = Redactor::default();
    for (input, secret) in [
        (
            "Bearer aws-secret-key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA.x",
            "dXNlcjpwYXNzd29yZA",
        ),
        ("token: mysql -u root -pS3cretPw99 app", "S3cretPw99"),
        (
            "<apiToken> Cookie: sessionid=a1b2c3d4e5f6a7b8",
            "a1b2c3d4e5f6a7b8",
        ),
        (
            "api_key=abc.-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
            "MIIEvQIBADANBg",
        ),
        (
            "9.Authorization: ApiKey ZKRYfmt07ELSZgnu18FM",
            "ZKRYfmt07ELSZgnu18FM",
        ),
        (
            "token:`sk-AlKvU5eDoNyX8hGrQ1a-kJuT4dCnMxW7\t key=value",
            "AlKvU5eDoNyX8hGrQ1a",
        ),
        (
            "machine m login l password = 'FqR2dEpItU5gHsLwX8jK'",
            "FqR2dEpItU5gHsLwX8jK",
        ),
    ] {
        let out = r.redact_text(input);
        assert!(!out.contains(secret), "{input:?} → {out:?}");
    }
}

/// Searching again inside matches stays linear: 50,000 nested labels (each one's value is
/// the rest of the text) and 50,000 unconfirmed generic labels end, and still mask.
#[test]
fn nested_labels_do_not_make_the_scan_quadratic() {
    let r = Redactor::default();
    let nested = format!("{}end", "token=".repeat(50_000));
    assert!(r.redact_text(&nested).contains("[REDACTED]"));
    let unconfirmed = format!("{}ghp_{}", "key=".repeat(50_000), "a1".repeat(18));
    assert!(!r.redact_text(&unconfirmed).contains("a1a1a1a1"));
}

/// The attack's 49 shapes as a call's arguments and error text reach neither the audit log
/// nor its SQLite index (where the attack found 20 of them).
#[tokio::test]
async fn the_attack_shapes_never_reach_the_audit_file_or_index() {
    use toolgate_store::audit::Durability;

    use super::super::audit_fixtures::{LogDir, record};

    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    let mut arguments = serde_json::Map::new();
    let mut texts = Vec::new();
    let mut parts = Vec::new();
    for (n, &(name, template, format)) in ATTACK_SHAPES.iter().enumerate() {
        let (secret, random) = Fakes::new(name).expand(format);
        let text = template.replace("{s}", &secret);
        arguments.insert(format!("arg{n}"), Value::String(text.clone()));
        texts.push(text);
        parts.extend(random.into_iter().filter(|p| p.len() >= 8));
    }
    let mut rec = record(1);
    rec.arguments = Value::Object(arguments);
    rec.error = Some(texts.join(" | "));
    rec.outcome = "execution_failed".parse().unwrap();
    log.append(rec).await.unwrap();
    drop(log);

    let mut raw = std::fs::read(&dir.jsonl).unwrap();
    raw.extend(std::fs::read(&dir.db).unwrap());
    let raw = String::from_utf8_lossy(&raw);
    let kept: Vec<&String> = parts.iter().filter(|p| raw.contains(p.as_str())).collect();
    assert_eq!(kept, Vec::<&String>::new(), "reached the disk");
    assert!(raw.contains("[REDACTED]"));
}
