//! Token-shaped secrets inside free text: every detector of [`rules`] compiled into one
//! multi-pattern regex, so a string is scanned once whatever the number of rules, and the
//! rule that matched is known from the match alone (no capture groups on the scan: resolving
//! groups costs about 2 µs a match). Only the secret part of a match is replaced; context
//! (`Bearer `, `password=`, a URL's user, a header's name) is kept so the text stays readable.
//!
//! Then a second look, only when the text holds printable-ASCII percent escapes: the masked
//! text is percent-decoded ([`percent`]), scanned again, and what is found there is masked at
//! its place in the text as written.
//!
//! Rules too loose as regexes alone are confirmed in code ([`confirm`]): a `Basic`
//! credential must be base64 of text containing `:`; a `Bearer` token must contain a digit
//! or a token punctuation mark, or be at least 20 characters long; a value under a label that
//! names a service or a generic word must look like a token. After a candidate that is not
//! confirmed, the search goes on from just after where it started, so a secret inside it, or
//! one it ran into, is still found.

mod confirm;
mod percent;
mod rules;
mod split;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::{Input, meta};

use super::REDACTED;
use confirm::{
    is_basic_credential, is_bearer_token, is_generic_token, is_header_value, is_placeholder,
    is_service_token, is_url_user_token,
};
use percent::Decoded;
use rules::{RULES, Rule, Secret};
use split::{header_value, label_value};

/// Strings shorter than this cannot hold any of the patterns worth masking and skip the scan.
pub(crate) const MIN_SCAN_CHARS: usize = 8;

/// The compiled token matcher; cheap to clone (the compiled rules are shared).
#[derive(Debug, Clone)]
pub(crate) struct TokenPatterns {
    compiled: Arc<Compiled>,
}

#[derive(Debug)]
struct Compiled {
    /// All the rules, in one regex: one pass over the text (two regexes, one for the tokens
    /// that start with a literal and one for the rest, cost the sum of two passes).
    searcher: Searcher,
    /// For each rule, the regex that finds its secret inside its match (rules whose secret is
    /// group `s` of their own pattern).
    refiners: Vec<Option<Regex>>,
}

/// One multi-pattern regex over some of the rules.
#[derive(Debug)]
struct Searcher {
    regex: meta::Regex,
    /// `rules[i]` is the index in `RULES` of the regex's pattern `i`.
    rules: Vec<usize>,
}

impl Searcher {
    fn new(select: impl Fn(&Rule) -> bool) -> Searcher {
        let rules: Vec<usize> = (0..RULES.len()).filter(|&i| select(&RULES[i])).collect();
        let patterns: Vec<&str> = rules.iter().map(|&i| RULES[i].pattern).collect();
        // The patterns are constants covered by tests; failing to compile them is a
        // programming error caught by the first test run, never by user input.
        #[allow(clippy::expect_used)]
        let regex = meta::Builder::new()
            .configure(
                meta::Config::new()
                    .which_captures(WhichCaptures::Implicit)
                    .hybrid_cache_capacity(8 << 20)
                    .nfa_size_limit(Some(64 << 20)),
            )
            .build_many(&patterns)
            .expect("the token patterns compile");
        Searcher { regex, rules }
    }
}

/// Compiled once per process (some 100 patterns take a few milliseconds).
static COMPILED: LazyLock<Arc<Compiled>> = LazyLock::new(|| Arc::new(Compiled::new()));

impl Compiled {
    fn new() -> Self {
        let searcher = Searcher::new(|_| true);
        #[allow(clippy::expect_used)]
        let refiners = RULES
            .iter()
            .map(|rule| {
                let pattern = match rule.secret {
                    Secret::Group | Secret::UrlUser => format!("^(?:{})$", rule.pattern),
                    _ => return None,
                };
                let refiner = Regex::new(&pattern).map_err(|e| format!("rule {}: {e}", rule.id));
                Some(refiner.expect("the refiner patterns compile"))
            })
            .collect();
        Compiled { searcher, refiners }
    }
}

/// What a match turned out to be.
enum Outcome {
    /// Mask this range of the match.
    Mask(Range<usize>),
    /// Not a secret after all: search again from just after where the match started, so a
    /// secret inside it, or one that starts inside it, is still found.
    Retry,
    /// Nothing to mask.
    Keep,
}

impl TokenPatterns {
    pub(crate) fn new() -> Self {
        TokenPatterns {
            compiled: Arc::clone(&COMPILED),
        }
    }

    /// `text` with every secret masked; borrowed when nothing matched.
    pub(crate) fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if text.len() < MIN_SCAN_CHARS {
            return Cow::Borrowed(text);
        }
        let mut spans = Vec::new();
        self.scan(text, 0, &mut spans);
        let masked = replace(text, &mut spans);
        let Some(decoded) = Decoded::of(&masked) else {
            return masked;
        };
        let mut found = Vec::new();
        self.scan(&decoded.text, 0, &mut found);
        if found.is_empty() {
            return masked;
        }
        let mut spans: Vec<Range<usize>> = found
            .into_iter()
            .map(|r| {
                let (start, end) = decoded.original(r.start, r.end);
                start..end
            })
            .collect();
        Cow::Owned(replace(&masked, &mut spans).into_owned())
    }

    /// Appends to `spans` the secrets in `text`, offset by `base`.
    fn scan(&self, text: &str, base: usize, spans: &mut Vec<Range<usize>>) {
        if text.len() < MIN_SCAN_CHARS {
            return;
        }
        let searcher = &self.compiled.searcher;
        // Searching again inside a match (below) can rescan a long match many times
        // (`key=key=key=…`): past this many bytes searched, the search moves on after each
        // match instead, so a scan stays linear in the text, and a candidate it can no longer
        // afford to look into is masked whole (closed, not open).
        let budget = text.len().saturating_mul(16).saturating_add(1 << 12);
        let mut searched = 0usize;
        let mut from = 0;
        while from < text.len() {
            let input = Input::new(text).span(from..text.len());
            let Some(m) = searcher.regex.search(&input) else {
                break;
            };
            searched += m.end() - from;
            let rule = searcher.rules[m.pattern().as_usize()];
            let whole = &text[m.range()];
            let at = base + m.start();
            let next_char = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
            let again = match self.outcome(rule, whole) {
                Outcome::Mask(r) => {
                    spans.push(at + r.start..at + r.end);
                    // A head that is not a fixed word may have taken in a token before the
                    // secret (`ghp_….AccountKey=…`: a label's name runs over `.`, `_` and
                    // `-`; `<xoxp-….piToken>…`: an element's name does too; a URL's user
                    // before its password): the head is searched too. It is strictly shorter
                    // than the match, so the search ends. A scheme's or a header's head is a
                    // fixed word (`Authorization: Bearer `) and is not searched.
                    let fixed_head = matches!(
                        RULES[rule].secret,
                        Secret::Scheme | Secret::Header | Secret::Whole | Secret::KubeData
                    );
                    if !fixed_head && r.start > 0 {
                        self.scan(&whole[..r.start], at, spans);
                    }
                    // A value after a label or scheme is searched too: what the label took
                    // for its value may begin another secret (`token: mysql -pX`, `Bearer
                    // aws_secret_access_key=X`). A whole token is not searched again.
                    (r.start > 0).then_some(m.start() + r.start)
                }
                // A later start may be a secret this candidate covered (`9.Authorization:
                // ApiKey …` is no generic label, but holds a header; `token:`sk-…` is no
                // command substitution, but holds a key).
                Outcome::Keep | Outcome::Retry => Some(next_char),
            };
            if RULES[rule].secret == Secret::KubeData && text_is_kube_secret(text) {
                kube_data_values(whole, at, spans);
            }
            from = match again {
                Some(again) if searched <= budget => again,
                Some(_) => {
                    spans.push(at..at + whole.len());
                    m.end().max(next_char)
                }
                None => m.end().max(next_char),
            };
        }
    }

    /// Which part of the match `whole` of rule `rule` is a secret.
    fn outcome(&self, rule: usize, whole: &str) -> Outcome {
        let Rule { secret, .. } = RULES[rule];
        match secret {
            Secret::Whole => Outcome::Mask(0..whole.len()),
            Secret::Scheme => scheme_outcome(whole),
            Secret::KubeData => Outcome::Retry,
            Secret::Group
            | Secret::Header
            | Secret::Label
            | Secret::ServiceLabel
            | Secret::GenericLabel
            | Secret::UrlUser => {
                let found = match secret {
                    Secret::Header => header_value(whole),
                    Secret::Label | Secret::ServiceLabel | Secret::GenericLabel => {
                        label_value(whole)
                    }
                    _ => self.compiled.refiners[rule]
                        .as_ref()
                        .and_then(|r| r.captures(whole))
                        .and_then(|caps| caps.name("s"))
                        .map(|s| split::Value {
                            range: s.range(),
                            backticks: false,
                        }),
                };
                let Some(found) = found else {
                    return Outcome::Mask(0..whole.len());
                };
                let range = found.range;
                // `password=`cat /run/pw``: a command substitution, not a secret (a Go raw
                // string holding a token has no space).
                if found.backticks && whole[range.clone()].contains(char::is_whitespace) {
                    return Outcome::Keep;
                }
                let value = &whole[range.clone()];
                let head = &whole[..range.start];
                let is_label = matches!(
                    secret,
                    Secret::Label | Secret::ServiceLabel | Secret::GenericLabel
                );
                if is_placeholder(head, value, is_label) || value.starts_with(['$', '`']) {
                    return Outcome::Keep;
                }
                let confirmed = match secret {
                    Secret::ServiceLabel => is_service_token(value),
                    Secret::GenericLabel => is_generic_token(value),
                    Secret::UrlUser => is_url_user_token(value),
                    Secret::Header => is_header_value(head, value),
                    _ => true,
                };
                if confirmed {
                    Outcome::Mask(range)
                } else {
                    Outcome::Retry
                }
            }
        }
    }
}

/// A `Bearer`/`Basic` match: the credential if it is one; otherwise the word after the
/// scheme is scanned on its own, so a secret in it is not swallowed (`basic sk-…`).
fn scheme_outcome(whole: &str) -> Outcome {
    // Every byte up to the credential is ASCII, so these offsets fall on char boundaries.
    let scheme_len = whole.find([' ', '\t']).unwrap_or(whole.len());
    let cred_start = scheme_len
        + whole[scheme_len..]
            .bytes()
            .take_while(|b| *b == b' ' || *b == b'\t')
            .count();
    let cred = &whole[cred_start..];
    // Sentence punctuation after a credential (`Basic dXNlcjpwYXNz.`) is not part of it.
    let core = cred.trim_end_matches(['.', '-', '_', '~']);
    let is_basic = whole[..scheme_len].eq_ignore_ascii_case("basic");
    if is_basic {
        if is_basic_credential(cred) {
            return Outcome::Mask(cred_start..whole.len());
        }
        if is_basic_credential(core) {
            return Outcome::Mask(cred_start..cred_start + core.len());
        }
        // Glued to more token characters (`Basic dXNlcjpwYXNz.x`): the longest head before a
        // `.`, `-`, `_` or `~` that is a credential.
        cred.rmatch_indices(['.', '-', '_', '~'])
            .map(|(i, _)| &cred[..i])
            .find(|head| is_basic_credential(head))
            .map_or(Outcome::Retry, |head| {
                Outcome::Mask(cred_start..cred_start + head.len())
            })
    } else if is_bearer_token(cred) {
        Outcome::Mask(cred_start..whole.len())
    } else {
        Outcome::Retry
    }
}

/// Whether `text` declares a Kubernetes `Secret` (`kind: Secret`), whose `data:` values are
/// credentials.
fn text_is_kube_secret(text: &str) -> bool {
    static KIND: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r#"(?m)^[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?Secret\b"#).ok());
    KIND.as_ref().is_some_and(|r| r.is_match(text))
}

/// The values of a `data:` block (`whole`, at offset `at`): each `name: value` line's value.
fn kube_data_values(whole: &str, at: usize, spans: &mut Vec<Range<usize>>) {
    let mut offset = 0;
    for line in whole.split_inclusive('\n').skip(1) {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(colon) = content.find(':') {
            let value = &content[colon + 1..];
            let trimmed = value.trim_start_matches([' ', '\t']);
            let start = colon + 1 + (value.len() - trimmed.len());
            let trimmed = trimmed.trim_end();
            let first_line = whole.find('\n').map_or(whole.len(), |i| i + 1);
            if !trimmed.is_empty() && !["|", ">", "|-", ">-"].contains(&trimmed) {
                let line_at = at + first_line + offset;
                spans.push(line_at + start..line_at + start + trimmed.len());
            }
        }
        offset += line.len();
    }
}

/// `text` with each span replaced by [`REDACTED`]; overlapping spans are merged.
fn replace<'a>(text: &'a str, spans: &mut [Range<usize>]) -> Cow<'a, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in spans.iter().filter(|r| !r.is_empty()) {
        if span.start < copied {
            // Overlaps the previous span: already masked, perhaps extended.
            copied = copied.max(span.end);
            continue;
        }
        out.push_str(&text[copied..span.start]);
        out.push_str(REDACTED);
        copied = span.end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the fuzz smoke (seed 1796643032): a label's name took in the GitHub token
    /// before it, and the token was kept while the label's value was masked.
    #[test]
    fn a_token_inside_a_labels_name_is_masked() {
        let patterns = TokenPatterns::new();
        let token = "ghp_SaRYfmt07ELSZgnu18FMTahov29GNUbipw3A";
        let text = format!("\0\0p.{token}.AccountKey=wd:440");
        let masked = patterns.mask(&text);
        assert!(!masked.contains(token), "{masked}");
        assert!(!masked.contains("wd:440"), "{masked}");
    }

    /// Found by the `redact` fuzz smoke in CI (seed 1796660878): an XML element's name took
    /// in the Slack token before it (`<xoxp-….piToken>RY`), and the token was kept while the
    /// element's text was masked.
    #[test]
    fn a_token_inside_an_elements_name_is_masked() {
        let patterns = TokenPatterns::new();
        let token = "xoxp-DKRYfmt07D";
        for text in [
            format!("<{token}.piToken>RY"),
            format!("<{token}.piToken>value"),
            format!("x <{token}_password> hunter2"),
        ] {
            let masked = patterns.mask(&text);
            assert!(!masked.contains(token), "{text} → {masked}");
        }
    }

    /// A URL's user before its password is searched too: a token there is masked.
    #[test]
    fn a_token_as_a_urls_user_before_its_password_is_masked() {
        let patterns = TokenPatterns::new();
        let token = "ghp_SaRYfmt07ELSZgnu18FMTahov29GNUbipw3A";
        let text = format!("https://{token}:x-oauth-basic@github.com/o/r.git");
        let masked = patterns.mask(&text);
        assert!(!masked.contains(token), "{masked}");
    }

    /// Found by the `redact` fuzz target: a Telegram token ending in `-` has no word
    /// boundary before the `/` of its URL, so a rule ending in `\b` kept it.
    #[test]
    fn a_telegram_token_ending_in_a_dash_is_masked() {
        let patterns = TokenPatterns::new();
        let token = "11111111:AXXXXXXXXXXX-----------------------";
        for text in [
            format!("'https://api.telegram.org/bot{token}/sendMessage,"),
            format!("TELEGRAM_BOT_TOKEN={token},"),
            token.to_owned(),
        ] {
            let masked = patterns.mask(&text);
            assert!(!masked.contains(token), "{text} → {masked}");
        }
    }

    #[test]
    fn short_text_is_not_scanned() {
        let patterns = TokenPatterns::new();
        assert!(matches!(patterns.mask("pwd=abc"), Cow::Borrowed(_)));
    }

    #[test]
    fn overlapping_spans_are_masked_once() {
        let mut spans = vec![4..8, 2..6, 10..12];
        assert_eq!(
            replace("0123456789abcd", &mut spans),
            "01[REDACTED]89[REDACTED]cd"
        );
    }
}
