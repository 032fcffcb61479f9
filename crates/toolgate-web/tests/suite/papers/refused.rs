//! Nothing `[egress]` does not allow is reached: a source redirecting to the cloud
//! metadata address or to loopback is refused (`policy_denied`, no connection made), an
//! endpoint the guard refuses stops startup, and bad settings name their key.

use std::sync::Arc;

use serde_json::json;
use toolgate_core::ToolError;
use toolgate_web::PapersConfigError;
use toolgate_web::papers::{Clock, papers_tool};

use super::super::fixture::{CountingListener, dev_policy, lookup, redirect};
use super::fake::{FakeClock, Fakes, Reply, ask, tool};

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused() {
    let target = CountingListener::start().await;
    let t = target.port();
    let reply: Reply = Arc::new(move |path, _, _| {
        Some(if path.starts_with("/arxiv/") {
            redirect("http://169.254.169.254/latest/meta-data/iam")
        } else {
            redirect(&format!("http://127.0.0.1:{t}/admin"))
        })
    });
    let fakes = Fakes::start(reply).await;
    let clock = Arc::new(FakeClock::default());
    let arxiv = tool(&fakes.config(r#"["arxiv"]"#), &clock);
    let openalex = tool(&fakes.config(r#"["openalex"]"#), &clock);
    let got = [
        ask(&arxiv, json!({"query": "x"})).await,
        ask(&openalex, json!({"query": "x"})).await,
    ];
    assert_eq!(
        got,
        [
            Err(ToolError::PolicyDenied(
                "refused: 169.254.169.254 is link-local (cloud metadata); to allow it add \
                 \"169.254.169.254\" to [egress] allow_hosts"
                    .to_owned()
            )),
            Err(ToolError::PolicyDenied(format!(
                "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{t}\" to [egress] \
                 allow_hosts"
            ))),
        ]
    );
    assert_eq!(target.connections(), 0);
}

#[tokio::test]
async fn bad_settings_stop_startup_naming_the_key() {
    let fakes = Fakes::recorded().await;
    let base = fakes.config(r#"["arxiv"]"#);
    let clock: Arc<dyn Clock> = Arc::new(FakeClock::default());
    let build = |edit: &dyn Fn(&mut toolgate_web::PapersConfig)| {
        let mut config = base.clone();
        edit(&mut config);
        papers_tool(
            &config,
            &dev_policy(),
            lookup(),
            Arc::clone(&clock),
            &|_| None,
        )
        .map(drop)
        .map_err(|e| e.to_string())
    };
    let got = [
        build(&|c| c.arxiv_url = Some("http://10.0.0.5/api/query".into())),
        build(&|c| {
            c.sources = vec![toolgate_web::PaperSourceKind::Openalex];
            c.openalex_url = Some("not a url".into());
        }),
        build(&|c| c.count = 0),
        build(&|c| c.count = 60),
        build(&|c| c.sources = vec![]),
        build(&|c| {
            c.sources = vec![
                toolgate_web::PaperSourceKind::Crossref,
                toolgate_web::PaperSourceKind::Crossref,
            ]
        }),
        build(&|c| c.mailto = Some("me@x.org&evil=1".into())),
        build(&|c| c.sources = vec![toolgate_web::PaperSourceKind::SemanticScholar]),
    ];
    let e = |err: PapersConfigError| -> Result<(), String> { Err(err.to_string()) };
    assert_eq!(
        got[0].as_ref().unwrap_err().split(": ").next(),
        Some("[web.papers] arxiv_url is not reachable under [egress]")
    );
    assert_eq!(
        got[1..],
        [
            e(PapersConfigError::BadUrl {
                key: "openalex_url",
                url: "not a url".into(),
                reason: "relative URL without a base".into()
            }),
            e(PapersConfigError::Zero { key: "count" }),
            e(PapersConfigError::CountAboveMax {
                count: 60,
                max_count: 50
            }),
            e(PapersConfigError::NoSources),
            e(PapersConfigError::Duplicate("crossref")),
            e(PapersConfigError::BadMailto("me@x.org&evil=1".into())),
            e(PapersConfigError::KeyNotSet("S2_KEY".into())),
        ]
    );
}
