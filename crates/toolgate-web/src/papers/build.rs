//! [`papers_tool`]: `[web.papers]` → `retrieve_papers` over the sources it lists. Every
//! setting is checked here (zero limits, duplicate sources, endpoints refused by
//! `[egress]`, a named key variable that is unset), so a bad one stops startup.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use toolgate_net::{EgressPolicy, Lookup, check_url, client_with_lookup};
use url::Url;

use super::arxiv::{ARXIV_URL, ArxivSource};
use super::clock::Clock;
use super::config::{PaperSourceKind, PapersConfig, PapersConfigError};
use super::crossref::{CROSSREF_URL, CrossrefSource};
use super::http::{HttpLimits, PaperHttp};
use super::openalex::{OPENALEX_URL, OpenAlexSource};
use super::semantic_scholar::{SEMANTIC_SCHOLAR_URL, SemanticScholarSource};
use super::source::PaperSource;
use super::tool::{PapersLimits, RetrievePapersTool};
use crate::error::WebError;
use crate::search::ApiKey;
use crate::tools::EnvLookup;

/// The tool `config` describes, its requests confined by `egress`, its waits on `clock`.
pub fn papers_tool(
    config: &PapersConfig,
    egress: &EgressPolicy,
    lookup: Arc<dyn Lookup>,
    clock: Arc<dyn Clock>,
    env: EnvLookup<'_>,
) -> Result<RetrievePapersTool, WebError> {
    check_limits(config)?;
    let mailto = match config.mailto.as_deref().map(str::trim) {
        Some(m) if is_mailto(m) => Some(m.to_owned()),
        Some(m) => return Err(PapersConfigError::BadMailto(m.to_owned()).into()),
        None => None,
    };
    let user_agent = match &mailto {
        Some(m) => format!(
            "toolgate-retrieve-papers/{} (mailto:{m})",
            env!("CARGO_PKG_VERSION")
        ),
        None => format!("toolgate-retrieve-papers/{}", env!("CARGO_PKG_VERSION")),
    };
    let client = client_with_lookup(egress, lookup).map_err(WebError::Client)?;
    let http = PaperHttp::new(
        client,
        clock,
        HttpLimits {
            max_bytes: config.max_bytes,
            max_retries: config.max_retries,
            max_wait: Duration::from_secs(config.max_retry_after_secs),
        },
        &user_agent,
    );
    let endpoint = |key: &'static str, given: &Option<String>, default: &str| {
        let raw = given.as_deref().unwrap_or(default);
        let url = Url::parse(raw).map_err(|e| PapersConfigError::BadUrl {
            key,
            url: raw.to_owned(),
            reason: e.to_string(),
        })?;
        check_url(egress, &url)
            .map_err(|refusal| PapersConfigError::UrlRefused { key, refusal })?;
        Ok::<Url, PapersConfigError>(url)
    };
    let mut sources: Vec<Arc<dyn PaperSource>> = Vec::new();
    for kind in &config.sources {
        let source: Arc<dyn PaperSource> = match kind {
            PaperSourceKind::Arxiv => Arc::new(ArxivSource::new(
                endpoint("arxiv_url", &config.arxiv_url, ARXIV_URL)?,
                http.clone(),
                Duration::from_millis(config.arxiv_interval_ms),
            )),
            PaperSourceKind::Openalex => Arc::new(OpenAlexSource::new(
                endpoint("openalex_url", &config.openalex_url, OPENALEX_URL)?,
                mailto.clone(),
                http.clone(),
            )),
            PaperSourceKind::SemanticScholar => {
                let key = match config.semantic_scholar_key_env.as_deref().map(str::trim) {
                    Some(var) if !var.is_empty() => Some(ApiKey::new(
                        env(var)
                            .map(|k| k.trim().to_owned())
                            .filter(|k| !k.is_empty())
                            .ok_or_else(|| PapersConfigError::KeyNotSet(var.to_owned()))?,
                    )),
                    _ => None,
                };
                Arc::new(SemanticScholarSource::new(
                    endpoint(
                        "semantic_scholar_url",
                        &config.semantic_scholar_url,
                        SEMANTIC_SCHOLAR_URL,
                    )?,
                    key,
                    http.clone(),
                ))
            }
            PaperSourceKind::Crossref => Arc::new(CrossrefSource::new(
                endpoint("crossref_url", &config.crossref_url, CROSSREF_URL)?,
                mailto.clone(),
                http.clone(),
            )),
        };
        sources.push(source);
    }
    Ok(RetrievePapersTool::new(
        sources,
        PapersLimits {
            default_count: config.count,
            max_count: config.max_count,
            abstract_chars: config.abstract_chars,
            timeout: Duration::from_secs(config.timeout_secs),
        },
    ))
}

fn check_limits(config: &PapersConfig) -> Result<(), PapersConfigError> {
    for (key, value) in [
        ("count", u64::from(config.count)),
        ("max_count", u64::from(config.max_count)),
        ("timeout_secs", config.timeout_secs),
        ("max_bytes", config.max_bytes),
        ("abstract_chars", u64::from(config.abstract_chars)),
    ] {
        if value == 0 {
            return Err(PapersConfigError::Zero { key });
        }
    }
    if config.count > config.max_count {
        return Err(PapersConfigError::CountAboveMax {
            count: config.count,
            max_count: config.max_count,
        });
    }
    if config.sources.is_empty() {
        return Err(PapersConfigError::NoSources);
    }
    let mut seen = HashSet::new();
    for kind in &config.sources {
        if !seen.insert(*kind) {
            return Err(PapersConfigError::Duplicate(kind.as_str()));
        }
    }
    Ok(())
}

/// `name@host.domain`, nothing a header or a query could be bent with.
fn is_mailto(m: &str) -> bool {
    let ok_chars = m
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "@.-_+".contains(c));
    matches!(m.split_once('@'), Some((user, host)) if !user.is_empty() && host.contains('.') && !host.contains('@'))
        && ok_chars
}
