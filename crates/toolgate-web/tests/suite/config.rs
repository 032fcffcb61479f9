//! `[web]` → tools: what is registered, and every unusable setting refused with a message
//! naming the key.

use toolgate_net::{AddrClass, EgressError, EgressPolicy};
use toolgate_web::{
    SearchBackendKind, SearchConfig, UrlReadConfig, WebConfig, WebError, web_tools_with,
};

use super::fixture::lookup;

fn names(
    config: &WebConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, WebError> {
    web_tools_with(config, &EgressPolicy::default(), lookup(), env)
        .map(|tools| tools.iter().map(|t| t.spec().name.clone()).collect())
}

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn search_is_registered_only_when_configured() {
    let read = UrlReadConfig {
        enabled: true,
        ..UrlReadConfig::default()
    };
    let searxng = WebConfig {
        url_read: read.clone(),
        search: Some(SearchConfig {
            base_url: Some("https://searx.example.org".into()),
            ..SearchConfig::new(SearchBackendKind::Searxng)
        }),
        papers: None,
    };
    let no_read = WebConfig {
        url_read: UrlReadConfig::default(),
        ..searxng.clone()
    };
    let key = |v: &str| (v == "K").then(|| "secret".to_owned());
    let brave = WebConfig {
        url_read: read.clone(),
        search: Some(SearchConfig {
            api_key_env: Some("K".into()),
            ..SearchConfig::new(SearchBackendKind::Brave)
        }),
        papers: None,
    };
    let read_only = WebConfig {
        url_read: read,
        search: None,
        papers: None,
    };
    assert_eq!(
        [
            names(&WebConfig::default(), &no_env),
            names(&read_only, &no_env),
            names(&searxng, &no_env),
            names(&no_read, &no_env),
            names(&brave, &key),
        ],
        [
            Ok(vec![]),
            Ok(vec!["url_read".to_owned()]),
            Ok(vec!["url_read".to_owned(), "web_search".to_owned()]),
            Ok(vec!["web_search".to_owned()]),
            Ok(vec!["url_read".to_owned(), "web_search".to_owned()]),
        ]
    );
}

#[test]
fn unusable_settings_name_the_key() {
    let search = |c: SearchConfig| WebConfig {
        search: Some(c),
        ..WebConfig::default()
    };
    let searxng = SearchConfig::new(SearchBackendKind::Searxng);
    let brave = SearchConfig::new(SearchBackendKind::Brave);
    let cases = [
        search(searxng.clone()),
        search(SearchConfig {
            base_url: Some("searx.local".into()),
            ..searxng.clone()
        }),
        search(SearchConfig {
            base_url: Some("https://10.1.2.3:8888".into()),
            ..searxng.clone()
        }),
        search(brave.clone()),
        search(SearchConfig {
            api_key_env: Some("TOOLGATE_WEB_TEST_UNSET".into()),
            ..brave.clone()
        }),
        search(SearchConfig {
            count: 30,
            ..searxng.clone()
        }),
        WebConfig {
            url_read: UrlReadConfig {
                enabled: true,
                max_bytes: 0,
                ..UrlReadConfig::default()
            },
            search: None,
            papers: None,
        },
    ];
    let got: Vec<_> = cases
        .iter()
        .map(|c| names(c, &no_env).unwrap_err())
        .collect();
    assert_eq!(
        got,
        [
            WebError::MissingBaseUrl { backend: "searxng" },
            WebError::BadBaseUrl {
                url: "searx.local".into(),
                reason: "relative URL without a base".into()
            },
            WebError::BaseUrlRefused(EgressError::ForbiddenAddress {
                addr: "10.1.2.3".parse().unwrap(),
                port: Some(8888),
                class: AddrClass::Private
            }),
            WebError::MissingKeyEnv { backend: "brave" },
            WebError::KeyNotSet {
                var: "TOOLGATE_WEB_TEST_UNSET".into()
            },
            WebError::OutOfRange {
                key: "count",
                value: 30,
                reason: "it is above max_count"
            },
            WebError::Zero {
                table: "url_read",
                key: "max_bytes"
            },
        ]
    );
    assert_eq!(
        got[4].to_string(),
        "[web.search] api_key_env = \"TOOLGATE_WEB_TEST_UNSET\", but the environment variable \
         TOOLGATE_WEB_TEST_UNSET is not set (or is empty); set it, or remove [web.search] to turn \
         web_search off"
    );
}
