//! Bot tokens and signing secrets: read from the environment variable the configuration
//! names, never from the file, never shown (`Debug` and `Display` print `[redacted]`).

use std::fmt;

/// A secret read from the environment.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

/// The variable a channel names is unset or empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "channel `{channel}`: the environment variable {var} ({what}) is not set; export it in \
     the server's environment"
)]
pub struct MissingSecret {
    pub channel: String,
    pub var: String,
    pub what: &'static str,
}

impl Secret {
    /// Reads `var`; an unset or blank variable is an error naming it (never its value).
    pub fn from_env(channel: &str, var: &str, what: &'static str) -> Result<Secret, MissingSecret> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Secret(v.trim().to_owned())),
            _ => Err(MissingSecret {
                channel: channel.to_owned(),
                var: var.to_owned(),
                what,
            }),
        }
    }

    /// For tests and callers that already hold the value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself: put it on the wire, never in a log or an error.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `given` (a header's value, if any) is this secret, compared in constant time.
    pub fn matches(&self, given: Option<&str>) -> bool {
        given.is_some_and(|s| {
            aws_lc_rs::constant_time::verify_slices_are_equal(s.as_bytes(), self.0.as_bytes())
                .is_ok()
        })
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}
