//! Which object keys hold secrets. A key is compared case-insensitively after removing `-` and
//! `_`, so `X-Api-Key`, `x_api_key` and `XAPIKEY` are the same key.
//!
//! Two strengths:
//! - [`KeyClass::Exact`]: a key on the fixed list (`password`, `authorization`, `code`, …).
//!   Whatever sits under it is masked, numbers and objects included.
//! - [`KeyClass::Suffix`]: any other key ending in `token`, `secret`, `password`, `apikey`,
//!   `secretkey` or `privatekey` (`github_token`, `db_password`, `stripe_secret_key`). Only
//!   *string* values are masked, so counters such as `max_token: 512` stay readable. So are
//!   string values under `auth` (docker's `config.json`), `sig` and `pass`. Keys that merely
//!   contain the word (`tokens_used`, `max_tokens`, `tokenizer`, `auths`) are not sensitive
//!   at all.

/// How sensitive the value under a key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyClass {
    /// Not a secret-bearing key.
    Plain,
    /// Mask the value whatever its type.
    Exact,
    /// Mask the value if it is a string.
    Suffix,
}

/// Normalised names (lowercase, no `-`/`_`) whose values are always masked.
const EXACT_KEYS: &[&str] = &[
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "cookie",
    "cookies",
    "setcookie",
    "password",
    "passwd",
    "pwd",
    "secret",
    "clientsecret",
    "authorization",
    "proxyauthorization",
    "apikey",
    "xapikey",
    "code",
    "privatekey",
    "credential",
    "credentials",
    "sessionid",
    "awssecretaccesskey",
];

/// Normalised suffixes whose string values are masked.
/// Beyond the four the spec names, `secretkey` and `privatekey` catch `stripe_secret_key`,
/// `aws_secret_key` and `ssh_private_key`; `accountkey` Azure's `AccountKey`, `passphrase`
/// and `passwd` the other spellings of a password.
const SUFFIXES: &[&str] = &[
    "token",
    "secret",
    "password",
    "apikey",
    "secretkey",
    "privatekey",
    "accountkey",
    "passphrase",
    "passwd",
];

/// Normalised names whose string values are masked, too short to be suffixes: docker's
/// `"auth"` (base64 of `user:password`), a SAS URL's `sig`, a `pass` field.
const STRING_KEYS: &[&str] = &["auth", "sig", "pass"];

/// Longest normalised key compared in full; longer keys only need their suffix checked.
const KEY_BUF: usize = 32;

/// Classifies `key` without allocating.
pub(crate) fn classify(key: &str) -> KeyClass {
    // Keep the last KEY_BUF normalised bytes: enough for every exact key and every suffix.
    let mut buf = [0u8; KEY_BUF];
    let mut len = 0usize;
    let mut overflowed = false;
    for b in key.bytes() {
        if b == b'-' || b == b'_' {
            continue;
        }
        if len == KEY_BUF {
            buf.copy_within(1.., 0);
            len -= 1;
            overflowed = true;
        }
        buf[len] = b.to_ascii_lowercase();
        len += 1;
    }
    let norm = &buf[..len];
    if !overflowed && EXACT_KEYS.iter().any(|k| k.as_bytes() == norm) {
        return KeyClass::Exact;
    }
    if SUFFIXES.iter().any(|s| norm.ends_with(s.as_bytes()))
        || (!overflowed && STRING_KEYS.iter().any(|k| k.as_bytes() == norm))
    {
        return KeyClass::Suffix;
    }
    KeyClass::Plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_keys_ignore_case_dashes_and_underscores() {
        for key in [
            "password",
            "Authorization",
            "X-Api-Key",
            "api_key",
            "SET-COOKIE",
            "code",
        ] {
            assert_eq!(classify(key), KeyClass::Exact, "{key}");
        }
    }

    #[test]
    fn suffix_keys_and_plain_keys() {
        for key in [
            "github_token",
            "db_password",
            "client-secret-x-secret",
            "OPENAI_API_KEY",
            "auth",
            "AccountKey",
            "ssh_passphrase",
        ] {
            assert_eq!(classify(key), KeyClass::Suffix, "{key}");
        }
        for key in [
            "tokens_used",
            "max_tokens",
            "tokenizer",
            "status_code",
            "codec",
            "name",
            "auths",
            "author",
            "signature",
        ] {
            assert_eq!(classify(key), KeyClass::Plain, "{key}");
        }
    }

    #[test]
    fn long_keys_are_judged_by_their_suffix() {
        let long = format!("{}_refresh_token", "x".repeat(100));
        assert_eq!(classify(&long), KeyClass::Suffix);
        let long_plain = format!("{}password_hint", "y".repeat(100));
        assert_eq!(classify(&long_plain), KeyClass::Plain);
    }
}
