//! Masking of secrets and hashing of long values, applied by the audit log before anything is
//! written (R-EXE-6). A pure function of its input — no IO, no storage — so anything that
//! shows or sends text (the audit, approval previews, the agent's error messages, telemetry)
//! can mask it without depending on a database; `toolgate_store::redact` re-exports it.
//!
//! Two independent rules, both applied to every value:
//! - **Sensitive keys** (`keys`): the value under `password`, `authorization`, `code`, … is
//!   replaced by [`REDACTED`] whatever its type; under other keys ending in `token`, `secret`,
//!   `password`, `apikey` only string values are replaced (numbers such as `max_token: 512`
//!   are not secrets).
//! - **Token-shaped text** (`patterns`): every token format of gitleaks' rule set (Stripe,
//!   GitLab, npm, SendGrid, Hugging Face, Telegram, Slack, AWS, GitHub, JWTs, PEM and PGP
//!   private key blocks, … about a hundred detectors) is replaced wherever it appears, also
//!   inside longer strings; only the secret changes. So are credentials that are only
//!   recognisable by their context, whose context is kept: the password of a URL
//!   (`postgres://app:[REDACTED]@db`) or a token as its user, `Authorization:` and `Cookie:`
//!   headers, a labelled value (`password=…`, `secret_key: …`, `AccountKey=…`,
//!   `"token":"…"`, `<apiToken>…</apiToken>`, and under a service's name or a generic word
//!   such as `key` when the value looks like a token), a SAS `sig=`, `.netrc` entries,
//!   Kubernetes `Secret` data, and command-line passwords (`mysql -p…`, `sshpass -p …`,
//!   `curl -u user:…`, `--password …`, `-passin pass:…`). Percent-encoded text is decoded
//!   for a second look, so `https%3A%2F%2Fadmin%3A…%40db` is masked too.
//!
//! Error messages echo argument values, so [`Redactor::for_audit_text`] also replaces long
//! words in them by a digest and caps their length.
//!
//! For the audit, any argument (a top-level member of the arguments object), any whole result
//! and any single string whose JSON text is longer than [`MAX_AUDIT_VALUE_CHARS`] is stored as
//! `{"length", "sha256"}` of the JSON text of the *original* value (`digest`).
//!
//! ```
//! use serde_json::json;
//! use toolgate_redact::Redactor;
//! let redactor = Redactor::default();
//! let args = json!({"url": "https://x.test", "headers": {"Authorization": "Bearer abc.def.ghi"}});
//! assert_eq!(
//!     redactor.redact_value(&args),
//!     json!({"url": "https://x.test", "headers": {"Authorization": "[REDACTED]"}})
//! );
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod digest;
mod keys;
mod patterns;

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use digest::{MAX_TEXT_WORD_CHARS, cap_text, digest_long_words, digest_of, json_text_exceeds};
use keys::{KeyClass, classify};
use patterns::TokenPatterns;

/// What a masked secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Longest JSON text (in characters) an audited argument, result or string may keep.
pub const MAX_AUDIT_VALUE_CHARS: usize = 2000;

/// Longest error text the audit keeps, in characters.
pub const MAX_AUDIT_ERROR_CHARS: usize = 2000;

/// Masks secrets in JSON values and text. The patterns are compiled once per process (a few
/// milliseconds) and shared by every `Redactor`; it is `Send + Sync` and every method takes
/// `&self`.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: TokenPatterns,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor {
            patterns: TokenPatterns::new(),
        }
    }
}

/// A JSON value whose secrets a [`Redactor`] has masked. It can only be made by
/// [`Redactor::seal`], so a value typed `Redacted` cannot have skipped the redactor.
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted(Value);

impl Redacted {
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    pub fn into_value(self) -> Value {
        self.0
    }
}

static SHARED: LazyLock<Arc<Redactor>> = LazyLock::new(|| Arc::new(Redactor::default()));

impl Redactor {
    /// The process-wide default redactor, compiled on first use.
    pub fn shared() -> Arc<Redactor> {
        Arc::clone(&SHARED)
    }

    /// Masks secrets in a JSON value: values under sensitive keys, and token-shaped strings
    /// anywhere (also inside longer strings and nested arrays/objects).
    pub fn redact_value(&self, v: &Value) -> Value {
        let mut out = v.clone();
        self.walk(&mut out, false);
        out
    }

    /// [`Redactor::redact_value`], sealed as [`Redacted`]: the only form in which a value may
    /// be put before a human (an approval request's arguments).
    pub fn seal(&self, v: &Value) -> Redacted {
        Redacted(self.redact_value(v))
    }

    /// Masks token-shaped substrings in free text (error messages).
    pub fn redact_text(&self, s: &str) -> String {
        self.patterns.mask(s).into_owned()
    }

    /// Free text as the audit stores it (error messages, which may echo argument values):
    /// secrets masked, every word longer than 200 characters (a path, a blob) replaced by
    /// `[<n> chars sha256:<hex>]` of the masked word, and the whole cut to
    /// [`MAX_AUDIT_ERROR_CHARS`] (head, `…`, the digest of the whole).
    pub fn for_audit_text(&self, s: &str) -> String {
        let masked = self.patterns.mask(s);
        let short_words = digest_long_words(&masked, MAX_TEXT_WORD_CHARS);
        cap_text(&short_words, MAX_AUDIT_ERROR_CHARS).into_owned()
    }

    /// Arguments as the audit stores them: secrets masked, and every top-level member whose
    /// JSON text is longer than [`MAX_AUDIT_VALUE_CHARS`] replaced by its `{length, sha256}`.
    /// Arguments that are not an object are treated like a result.
    pub fn for_audit_arguments(&self, v: &Value) -> Value {
        let mut out = v.clone();
        self.for_audit_arguments_in_place(&mut out);
        out
    }

    /// A result as the audit stores it: secrets masked, or the whole result replaced by its
    /// `{length, sha256}` when its JSON text is longer than [`MAX_AUDIT_VALUE_CHARS`].
    pub fn for_audit_result(&self, v: &Value) -> Value {
        let mut out = v.clone();
        self.for_audit_result_in_place(&mut out);
        out
    }

    /// [`Redactor::for_audit_arguments`] on a value the caller owns: only what is masked or
    /// digested changes, so the rest of the value is neither copied nor rebuilt.
    pub fn for_audit_arguments_in_place(&self, v: &mut Value) {
        let Value::Object(members) = v else {
            return self.for_audit_result_in_place(v);
        };
        for (key, value) in members.iter_mut() {
            if let Some(masked) = self.masked_for_key(key, value) {
                *value = masked;
            } else if json_text_exceeds(value, MAX_AUDIT_VALUE_CHARS) {
                *value = digest_of(value);
            } else {
                self.walk(value, true);
            }
        }
    }

    /// [`Redactor::for_audit_result`] on a value the caller owns.
    pub fn for_audit_result_in_place(&self, v: &mut Value) {
        if json_text_exceeds(v, MAX_AUDIT_VALUE_CHARS) {
            *v = digest_of(v);
        } else {
            self.walk(v, true);
        }
    }

    /// `Some(REDACTED)` when `key` says its value is a secret.
    fn masked_for_key(&self, key: &str, value: &Value) -> Option<Value> {
        match classify(key) {
            KeyClass::Exact => Some(Value::String(REDACTED.to_owned())),
            KeyClass::Suffix if value.is_string() => Some(Value::String(REDACTED.to_owned())),
            _ => None,
        }
    }

    /// Masks secrets throughout `v`, in place; with `digest_long_strings`, strings too long
    /// for the audit become their digest.
    fn walk(&self, v: &mut Value, digest_long_strings: bool) {
        if digest_long_strings && v.is_string() && json_text_exceeds(v, MAX_AUDIT_VALUE_CHARS) {
            *v = digest_of(v);
            return;
        }
        match v {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.patterns.mask(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, digest_long_strings);
                }
            }
            Value::Object(members) => {
                for (key, value) in members.iter_mut() {
                    match self.masked_for_key(key, value) {
                        Some(masked) => *value = masked,
                        None => self.walk(value, digest_long_strings),
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}
