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

pub(crate) mod fakes;
mod gitleaks;
mod negatives;
pub(crate) mod shapes;

use std::collections::BTreeMap;

use serde_json::json;
use toolgate_store::redact::Redactor;

use fakes::Fakes;
use gitleaks::Found::{Label, Shape};
use gitleaks::{
    BARE_CONTEXTS, GITLEAKS, GITLEAKS_CONTEXTS, GITLEAKS_NOT_TEXT, GITLEAKS_STRUCTURAL,
    SERVICE_CONTEXTS,
};
use negatives::{NEGATIVES, negatives};
use shapes::ATTACK_SHAPES;

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
