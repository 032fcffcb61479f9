//! The detectors, in priority order: where two match at the same place, the earlier wins.
//!
//! Written from the token formats' public descriptions, with gitleaks' rule set
//! (`config/gitleaks.toml`) as the checklist of formats to cover: every rule there is a
//! prefixed token below, a label rule (the value after `twitter_api_key =`, `"auth":`,
//! `<sentryToken>` …), or a structural rule (headers, URLs, command lines, PEM/PGP blocks,
//! `.netrc`, Kubernetes secrets). Lengths are minimums where the format allows a longer run, so
//! a longer token is masked whole rather than cut.
//!
//! Every pattern keeps word boundaries ASCII (`(?-u:\b)`), which keeps the search on the lazy
//! DFA for any input.

/// What part of a match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Secret {
    /// The whole match.
    Whole,
    /// Group `s` of the rule's own pattern, run on the match alone; the rest is kept. Empty,
    /// placeholder (`null`, `[REDACTED]`) and variable (`$X`) values are kept.
    Group,
    /// An `Authorization`/`Cookie` header's value after its scheme word; without a scheme,
    /// only a value with a digit, a `=` or 20 characters (not `authorization: required`).
    Header,
    /// A `Bearer`/`Basic` credential, confirmed in code.
    Scheme,
    /// A labelled value (group `s`), whatever it looks like: the label says it is secret.
    Label,
    /// A labelled value under a label that names a service (`twitter_consumer = …`): masked
    /// if the value looks like a token.
    ServiceLabel,
    /// A labelled value under a generic word (`key`, `auth`, `access`): masked if the value
    /// looks like a high-entropy token, or is base64 of `user:password` (docker's `auth`).
    GenericLabel,
    /// A URL's user name without a password: masked only if it looks like a token.
    UrlUser,
    /// The `data:` block of a Kubernetes manifest: its values, if the text is a `Secret`.
    KubeData,
}

/// One detector.
#[derive(Debug)]
pub(super) struct Rule {
    /// A name for tests and docs (gitleaks' id where the rule covers one of its rules).
    pub(super) id: &'static str,
    pub(super) pattern: &'static str,
    pub(super) secret: Secret,
}

const fn whole(id: &'static str, pattern: &'static str) -> Rule {
    Rule {
        id,
        pattern,
        secret: Secret::Whole,
    }
}

const fn group(id: &'static str, pattern: &'static str) -> Rule {
    Rule {
        id,
        pattern,
        secret: Secret::Group,
    }
}

/// A labelled value: `label op value`. `op` is what configuration files and code put between
/// a name and its value (`=`, `:`, `:=`, `::=`, `?=`, `.=`, `=>`, `", "`), optionally after a
/// type word (`var xToken string = …`); the value is quoted (the quotes kept) or a bare word.
macro_rules! labelled {
    ($label:expr) => {
        concat!(
            r#"(?-u:\b)(?i:"#,
            $label,
            r#")(?:[ \t]+(?:string|String|str))?"#,
            r#"(?:["'`]?[ \t]*(?:=>|[:=]{1,4}|\?=|\.=)|["'`][ \t]*,)[ \t]*"#,
            r#"(?:(?i:bearer|basic|token)[ \t]+)?"#,
            r#"(?:"[^"\n]*"?|'[^'\n]*'?|`[^`\n]*`?|[^\s"'`&;,$(<>](?:[^\s"'`&;,<]*[^\s"'`&;,)\]}>.<])?)"#
        )
    };
}

/// Words that make a label secret whatever its value: the label ends with one of them.
macro_rules! secret_label {
    () => {
        r#"[a-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|(?:access|secret|private|account|signing|encryption|master|client|session)[_\-]?key|credentials?)|(?:[a-z0-9_.\-]*[_.\-])?pass"#
    };
}

/// Services named in gitleaks' keyword rules: a label containing one (`adafruit_io_key`,
/// `TWITTER_CONSUMER`, `sentryDsn`) holds a secret if its value looks like a token.
macro_rules! service_label {
    () => {
        r#"[a-z0-9_.\-]*?(?:adafruit|adobe|airtable|algolia|alibaba|asana|atlassian|confluence|jira|beamer|bitbucket|bittrex|meraki|cloudflare|codecov|cohere|co_api|coinbase|confluent|contentful|datadog|dnkey|discord|droneci|dropbox|etsy|facebook|fastly|finicity|finnhub|flickr|freshbooks|gitter|gocardless|heroku|hubspot|intercom|jfrog|artifactory|bintray|xray|kraken|kucoin|launchdarkly|linear|linked[_\-]?in|looker|mailchimp|mailgun|mapbox|mattermost|message[_\-]?bird|netlify|new[_\-]?relic|nytimes|new-york-times|newyorktimes|okta|plaid|private[_\-]?ai|rapidapi|sendbird|sentry|snyk|sonar|squarespace|sumo|telegr|travis|twitch|twitter|typeform|yandex|zendesk|contribsys|sourcegraph|trello|freemius)[a-z0-9_.\-]*"#
    };
}

/// The generic words of gitleaks' `generic-api-key` rule: a label containing one holds a
/// secret if its value looks like a high-entropy token.
macro_rules! generic_label {
    () => {
        r#"[a-z0-9_.\-]*?(?:access|auth|api|credential|creds|key|secret|token|passw)[a-z0-9_.\-]*"#
    };
}

/// The rules in priority order.
pub(super) static RULES: &[Rule] = &[
    // --- Structural: headers, URLs, command lines, blocks -------------------------------
    // A scheme that takes one token (`Bearer x`) masks that token; any other value (`Digest
    // username="…", response="…"`, a cookie list) the rest of the line, or of its quotes.
    Rule {
        id: "authorization-header",
        pattern: r#"(?-u:\b)(?i:(?:proxy-)?authorization|(?:set-)?cookie)["']?[ \t]*[:=][ \t]*(?:["']?(?i:bearer|basic|token|apikey|api-key|key|bot|sso-key)[ \t]+[^\s"'`]+|"[^"\r\n]*"?|'[^'\r\n]*'?|[^\s"'`](?:[^\r\n]*[^\s])?)"#,
        secret: Secret::Header,
    },
    Rule {
        id: "bearer-basic",
        pattern: r#"(?-u:\b)(?i:bearer|basic)[ \t]+[A-Za-z0-9\-._~+/]+=*"#,
        secret: Secret::Scheme,
    },
    whole(
        "private-key",
        r#"-----BEGIN[A-Z0-9 _\-]*PRIVATE KEY(?: BLOCK)?-----(?s:.)*?(?:-----END[A-Z0-9 _\-]*PRIVATE KEY(?: BLOCK)?-----|\z)"#,
    ),
    group(
        "sidekiq-sensitive-url",
        r#"(?i:https?://)(?P<s>[a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys\.com"#,
    ),
    group(
        "url-password",
        r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?\#"'<>]*:(?P<s>[^\s/?\#"'<>]+)@"#,
    ),
    Rule {
        id: "url-user-token",
        pattern: r#"[A-Za-z][A-Za-z0-9+.\-]*://(?P<s>[^\s:/@?\#"'<>]{12,})@"#,
        secret: Secret::UrlUser,
    },
    group(
        "slack-webhook-url",
        r#"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_\-]{20,})"#,
    ),
    group(
        "microsoft-teams-webhook",
        r#"\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/\-]{40,})"#,
    ),
    group(
        "discord-webhook",
        r#"discord(?:app)?\.com/api/webhooks/(?P<s>[0-9]{5,}/[A-Za-z0-9_\-]{20,})"#,
    ),
    group(
        "azure-sas-signature",
        r#"[?&;](?i:sig)=(?P<s>[A-Za-z0-9%+/=_\-]{16,})"#,
    ),
    group(
        "mysql-password",
        r#"(?-u:\b)(?:mysql[a-z]*|mariadb[a-z\-]*)(?:[ \t]+[^\s;|&]+)*?[ \t]+-p(?P<s>[^\s;|&]+)"#,
    ),
    group(
        "sshpass",
        r#"(?-u:\b)sshpass[ \t]+-p[ \t]*(?P<s>[^\s;|&]+)"#,
    ),
    group(
        "curl-auth-user",
        r#"(?-u:\b)curl(?:[ \t]+[^\s;|&]+)*?[ \t]+(?:-u|--user)[ \t]*["']?[^\s:"']+:(?P<s>[^\s"']+)"#,
    ),
    group(
        "openssl-pass",
        r#"-pass(?:in|out)?[ \t]+pass:(?P<s>[^\s"']+)"#,
    ),
    group(
        "cli-password-flag",
        r#"(?:^|[\s"'(])--?(?i:[a-z0-9\-]*(?:password|passwd|passphrase|secret|token|api-key|apikey|access-key|secret-key)|storepass|keypass|srcstorepass|deststorepass)[ \t]+(?P<s>"[^"\n]*"?|'[^'\n]*'?|[^\s"'`$(\-][^\s"'`]*)"#,
    ),
    group(
        "netrc",
        r#"(?-u:\b)(?:machine[ \t\r\n]+\S+|default)(?:[ \t\r\n]+(?:account|port)[ \t\r\n]+\S+)*[ \t\r\n]+login[ \t\r\n]+\S+(?:[ \t\r\n]+(?:account|port)[ \t\r\n]+\S+)*[ \t\r\n]+password[ \t\r\n]+(?P<s>[^\s=:]\S*)"#,
    ),
    group(
        "nuget-config-password",
        r#"(?i:<add[ \t]+key=["'](?:cleartext)?password["'][ \t]+value=["'])(?P<s>[^"'\n]*)"#,
    ),
    group(
        "xml-secret-element",
        concat!(
            r#"<(?i:"#,
            secret_label!(),
            "|",
            service_label!(),
            r#")>[ \t\r\n]*(?P<s>[^<\s]+)"#
        ),
    ),
    Rule {
        id: "kubernetes-secret-yaml",
        pattern: r#"(?m:^)[ \t]*(?:data|stringData):[ \t]*\r?\n(?:[ \t]+[\w.\-]+:[^\n]*(?:\n|\z))+"#,
        secret: Secret::KubeData,
    },
    // --- Tokens with a distinctive shape -------------------------------------------------
    whole(
        "jwt",
        r#"ey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9_/\\\-]{10,}\.[A-Za-z0-9_/\\\-]*=*"#,
    ),
    whole("jwt-base64", r#"(?-u:\b)ZXlK[A-Za-z0-9+/]{60,}={0,2}"#),
    whole(
        "openai-anthropic-api-key",
        r#"(?-u:\b)sk-[A-Za-z0-9_\-]{20,}"#,
    ),
    whole(
        "aws-access-token",
        r#"(?-u:\b)(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)"#,
    ),
    whole(
        "aws-bedrock-api-key",
        r#"(?-u:\b)(?:ABSK[A-Za-z0-9+/]{100,}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&?.\-]*)"#,
    ),
    whole(
        "github-token",
        r#"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"#,
    ),
    whole(
        "gitlab-token",
        r#"(?-u:\b)(?:(?:glpat|gldt|glft|glsoat|glrt|glffct|glimt|glagent|gloas|glptt)-[0-9A-Za-z_.\-]{20,}|glcbt-[0-9A-Za-z]{1,5}_[0-9A-Za-z_\-]{20,}|GR1348941[0-9A-Za-z_\-]{20,})"#,
    ),
    group(
        "gitlab-session-cookie",
        r#"_gitlab_session=(?P<s>[0-9a-z]{32,})"#,
    ),
    whole(
        "slack-token",
        r#"(?-u:\b)(?:xox[abeoprs](?:\.xox[bp])?-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,})"#,
    ),
    whole("gcp-api-key", r#"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"#),
    whole(
        "stripe-access-token",
        r#"(?-u:\b)(?:(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})"#,
    ),
    group(
        "telegram-bot-api-token",
        // Ends where the token's alphabet ends (gitleaks' terminator), not at a word
        // boundary: a token ending in `-` before `/` or `,` has none.
        r#"(?:(?-u:\b)|bot)(?P<s>[0-9]{5,16}:A[A-Za-z0-9_\-]{34})(?:[^A-Za-z0-9_\-]|$)"#,
    ),
    whole("npm-access-token", r#"(?-u:\b)npm_[A-Za-z0-9]{36,}"#),
    whole("sendgrid-api-token", r#"(?-u:\b)SG\.[A-Za-z0-9_=.\-]{60,}"#),
    whole(
        "huggingface-token",
        r#"(?-u:\b)(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,})"#,
    ),
    whole(
        "1password-secret-key",
        r#"(?-u:\b)A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"#,
    ),
    whole(
        "1password-service-account-token",
        r#"(?-u:\b)ops_eyJ[A-Za-z0-9+/]{100,}={0,3}"#,
    ),
    whole("adobe-client-secret", r#"(?-u:\b)p8e-[A-Za-z0-9]{32}"#),
    whole(
        "age-secret-key",
        r#"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"#,
    ),
    whole(
        "airtable-personnal-access-token",
        r#"(?-u:\b)pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"#,
    ),
    whole("alibaba-access-key-id", r#"(?-u:\b)LTAI[A-Za-z0-9]{20}"#),
    whole(
        "artifactory-token",
        r#"(?-u:\b)(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})"#,
    ),
    whole(
        "authress-service-client-access-key",
        r#"(?-u:\b)(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,}"#,
    ),
    whole(
        "azure-ad-client-secret",
        r#"(?-u:\b)[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"#,
    ),
    whole(
        "clickhouse-cloud-api-secret-key",
        r#"(?-u:\b)4b1d[A-Za-z0-9]{38}"#,
    ),
    whole("clojars-api-token", r#"CLOJARS_[A-Za-z0-9]{60}"#),
    whole(
        "cloudflare-origin-ca-key",
        r#"(?-u:\b)v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"#,
    ),
    whole(
        "databricks-api-token",
        r#"(?-u:\b)dapi[a-f0-9]{32}(?:-[0-9])?"#,
    ),
    whole("digitalocean-token", r#"(?-u:\b)do[opr]_v1_[a-f0-9]{64}"#),
    whole(
        "doppler-api-token",
        r#"(?-u:\b)dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}"#,
    ),
    whole(
        "duffel-api-token",
        r#"duffel_(?:test|live)_[A-Za-z0-9_=\-]{43}"#,
    ),
    whole(
        "dynatrace-api-token",
        r#"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"#,
    ),
    whole("easypost-api-token", r#"(?-u:\b)EZ[AT]K[A-Za-z0-9]{54}"#),
    whole(
        "facebook-access-token",
        r#"(?-u:\b)[0-9]{15,16}(?:\||%7[Cc])[0-9A-Za-z_\-]{27,40}"#,
    ),
    whole(
        "facebook-page-access-token",
        r#"(?-u:\b)EAA[MC][A-Za-z0-9]{100,}"#,
    ),
    whole(
        "flutterwave-key",
        r#"FLW(?:SECK|PUBK)(?:_TEST)?-[A-Ha-h0-9]{12,32}(?:-X)?"#,
    ),
    whole(
        "flyio-access-token",
        r#"(?-u:\b)(?:fo1_[A-Za-z0-9_\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})"#,
    ),
    whole("frameio-api-token", r#"fio-u-[A-Za-z0-9_=\-]{64}"#),
    whole(
        "grafana-token",
        r#"(?-u:\b)(?:eyJrIjoi[A-Za-z0-9]{70,}={0,3}|glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"#,
    ),
    whole(
        "harness-api-key",
        r#"(?-u:\b)(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"#,
    ),
    whole(
        "hashicorp-tf-api-token",
        r#"(?-u:\b)[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}"#,
    ),
    whole("heroku-api-key-v2", r#"(?-u:\b)HRKU-AA[0-9A-Za-z_\-]{58}"#),
    whole("infracost-api-token", r#"(?-u:\b)ico-[A-Za-z0-9]{32}"#),
    whole(
        "intra42-client-secret",
        r#"(?-u:\b)s-s4t2(?:ud|af)-[A-Fa-f0-9]{64}"#,
    ),
    whole("linear-api-key", r#"lin_api_[A-Za-z0-9]{40}"#),
    whole(
        "lob-api-key",
        r#"(?-u:\b)(?:live|test)_(?:pub_[a-f0-9]{31}|[a-f0-9]{35})(?-u:\b)"#,
    ),
    whole(
        "maxmind-license-key",
        r#"(?-u:\b)[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"#,
    ),
    whole(
        "new-relic-key",
        r#"(?-u:\b)(?:NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9\-]{32}|NRAK-[A-Za-z0-9]{27})"#,
    ),
    whole(
        "notion-api-token",
        r#"(?-u:\b)(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})"#,
    ),
    whole(
        "octopus-deploy-api-key",
        r#"(?-u:\b)API-[A-Z0-9]{26}(?-u:\b)"#,
    ),
    whole(
        "openshift-user-token",
        r#"(?-u:\b)sha256~[A-Za-z0-9_\-]{43}"#,
    ),
    whole("perplexity-api-key", r#"(?-u:\b)pplx-[A-Za-z0-9]{48}"#),
    whole(
        "plaid-api-token",
        r#"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#,
    ),
    whole(
        "planetscale-token",
        r#"(?-u:\b)pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,}"#,
    ),
    whole(
        "postman-api-token",
        r#"(?-u:\b)PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"#,
    ),
    whole("prefect-api-token", r#"(?-u:\b)pnu_[A-Za-z0-9]{36}"#),
    whole("pulumi-api-token", r#"(?-u:\b)pul-[a-f0-9]{40}"#),
    whole(
        "pypi-upload-token",
        r#"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"#,
    ),
    whole("readme-api-token", r#"(?-u:\b)rdme_[a-z0-9]{70}"#),
    whole("rubygems-api-token", r#"(?-u:\b)rubygems_[a-f0-9]{48}"#),
    whole("scalingo-api-token", r#"(?-u:\b)tk-us-[A-Za-z0-9_\-]{48}"#),
    whole(
        "sendinblue-api-token",
        r#"(?-u:\b)xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"#,
    ),
    whole(
        "sentry-token",
        r#"(?-u:\b)(?:sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,}|sntryu_[a-f0-9]{64})"#,
    ),
    whole(
        "settlemint-access-token",
        r#"(?-u:\b)sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}"#,
    ),
    whole(
        "shippo-api-token",
        r#"(?-u:\b)shippo_(?:live|test)_[a-fA-F0-9]{40}"#,
    ),
    whole("shopify-token", r#"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"#),
    whole(
        "square-access-token",
        r#"(?-u:\b)(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_\-]{22,}"#,
    ),
    whole("twilio-api-key", r#"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)"#),
    whole(
        "vault-token",
        r#"(?-u:\b)(?:hvs\.[A-Za-z0-9_\-]{90,}|hvb\.[A-Za-z0-9_\-]{138,}|s\.[A-Za-z0-9]{24}(?-u:\b))"#,
    ),
    whole(
        "yandex-token",
        r#"(?-u:\b)(?:t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{86}=*|AQVN[A-Za-z0-9_\-]{35,38})"#,
    ),
    whole(
        "sourcegraph-access-token",
        r#"(?-u:\b)sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}"#,
    ),
    whole(
        "defined-networking-api-token",
        r#"(?-u:\b)dnkey-[A-Za-z0-9=_\-]{26}-[A-Za-z0-9=_\-]{52}"#,
    ),
    whole(
        "dropbox-short-lived-api-token",
        r#"(?-u:\b)sl\.[A-Za-z0-9\-=_]{135,}"#,
    ),
    whole(
        "mapbox-api-token",
        r#"(?-u:\b)[ps]k\.[A-Za-z0-9]{60,}\.[A-Za-z0-9_\-]{22,}"#,
    ),
    whole(
        "mailchimp-api-key",
        r#"(?-u:\b)[a-f0-9]{32}-us[0-9]{1,2}(?-u:\b)"#,
    ),
    whole(
        "mailgun-private-api-token",
        r#"(?-u:\b)key-[a-f0-9]{32}(?-u:\b)"#,
    ),
    whole("twitter-bearer-token", r#"A{22}[A-Za-z0-9%]{80,}"#),
    whole("typeform-api-token", r#"(?-u:\b)tfp_[A-Za-z0-9_.=\-]{59}"#),
    // --- Labelled values -------------------------------------------------------------------
    Rule {
        id: "secret-label",
        pattern: labelled!(secret_label!()),
        secret: Secret::Label,
    },
    Rule {
        id: "service-label",
        pattern: labelled!(service_label!()),
        secret: Secret::ServiceLabel,
    },
    Rule {
        id: "generic-label",
        pattern: labelled!(generic_label!()),
        secret: Secret::GenericLabel,
    },
];
