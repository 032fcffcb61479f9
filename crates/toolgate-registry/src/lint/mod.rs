//! Suspicious tool descriptions ("tool poisoning"): text a model reads but a user rarely
//! does, written to steer the model. [`description_flags`] reports, for review, never blocks:
//!
//! - [`FlagKind::OtherTool`]: names a tool of another server (shadowing: "when `send_email`
//!   is used, …"). A tool's own server's tools are fine; bare one-word names (`add`,
//!   `shell`) are too common to match.
//! - [`FlagKind::Instruction`]: text addressed to the model, not describing the tool
//!   ("ignore previous instructions", "do not tell the user", `<IMPORTANT>`, "before using
//!   this tool, read …", "the tool will not work").
//! - [`FlagKind::SecretAccess`]: names credential files (`~/.ssh`, `id_rsa`, `mcp.json`, …).
//! - [`FlagKind::Exfiltration`]: asks to smuggle data out ("pass its content as", "include the
//!   contents of", the conversation history, a hard-coded recipient address).
//! - [`FlagKind::HiddenText`]: zero-width, bidi-override, tag and control characters, HTML
//!   comments: text a person reviewing it does not see.
//! - [`FlagKind::Long`]: more than [`LONG_DESCRIPTION_CHARS`] characters.
//!
//! Scanned: the description, the annotations' title, and every `description` and `title`
//! string inside the input schema (parameters are read by the model too).

mod patterns;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use toolgate_protocol::ToolSpec;

use patterns::{PHRASES, hidden_character};

/// Descriptions longer than this many characters are flagged.
pub const LONG_DESCRIPTION_CHARS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    OtherTool,
    Instruction,
    SecretAccess,
    Exfiltration,
    HiddenText,
    Long,
}

impl FlagKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlagKind::OtherTool => "other_tool",
            FlagKind::Instruction => "instruction",
            FlagKind::SecretAccess => "secret_access",
            FlagKind::Exfiltration => "exfiltration",
            FlagKind::HiddenText => "hidden_text",
            FlagKind::Long => "long",
        }
    }
}

impl fmt::Display for FlagKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One suspicious finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    pub kind: FlagKind,
    /// Where: `description`, `annotations.title`, or a path into the input schema such as
    /// `input_schema.properties.sidenote.description`.
    pub location: String,
    /// What was found, quoted from the text (or described, for invisible characters).
    pub evidence: String,
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}: {}", self.kind, self.location, self.evidence)
    }
}

/// The flags for `spec`, given the names of the other tools in the catalog (catalog names
/// such as `mcp__mail__send_email` or built-in names). Ordered by location, then kind, then
/// position; no duplicates.
pub fn description_flags<S: AsRef<str>>(spec: &ToolSpec, other_tool_names: &[S]) -> Vec<Flag> {
    let mut texts = vec![("description".to_owned(), spec.description.as_str())];
    if let Some(title) = &spec.annotations.title {
        texts.push(("annotations.title".to_owned(), title.as_str()));
    }
    schema_texts(&spec.input_schema, "input_schema", &mut texts);

    let mentions = mention_targets(&spec.name, other_tool_names);
    let mut flags = Vec::new();
    for (location, text) in &texts {
        let mut found = Vec::new();
        for (name, shown) in &mentions {
            if let Some(at) = find_word(text, name) {
                found.push((FlagKind::OtherTool, at, shown.clone()));
            }
        }
        for (kind, regex) in PHRASES.iter() {
            for m in regex.find_iter(text) {
                found.push((*kind, m.start(), format!("\"{}\"", one_line(m.as_str()))));
            }
        }
        for (at, c) in text.char_indices() {
            if let Some(what) = hidden_character(c) {
                found.push((
                    FlagKind::HiddenText,
                    at,
                    format!("U+{:04X} ({what}) at byte {at}", u32::from(c)),
                ));
            }
        }
        if location == "description" {
            let chars = text.chars().count();
            if chars > LONG_DESCRIPTION_CHARS {
                found.push((
                    FlagKind::Long,
                    0,
                    format!("{chars} characters (more than {LONG_DESCRIPTION_CHARS})"),
                ));
            }
        }
        found.sort_by_key(|f| (f.0, f.1));
        for (kind, _, evidence) in found {
            let flag = Flag {
                kind,
                location: location.clone(),
                evidence,
            };
            if !flags.contains(&flag) {
                flags.push(flag);
            }
        }
    }
    flags
}

/// `description` and `title` strings anywhere in a schema, with their paths.
fn schema_texts<'a>(schema: &'a Value, path: &str, out: &mut Vec<(String, &'a str)>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{path}.{key}");
                match value {
                    Value::String(s) if key == "description" || key == "title" => {
                        out.push((here, s.as_str()));
                    }
                    _ => schema_texts(value, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                schema_texts(item, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// `mcp__{server}__{tool}` → (`server`, `tool`).
fn split_external(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__")?.split_once("__")
}

/// A name distinctive enough to search for: it has a `_` or `-` in it.
fn distinctive(name: &str) -> bool {
    name.len() >= 4 && name.contains(['_', '-'])
}

/// What to search for, and how to report it: for each tool of another server, its catalog
/// name and (for external tools) its raw name, when distinctive.
fn mention_targets<S: AsRef<str>>(own: &str, others: &[S]) -> Vec<(String, String)> {
    let own_server = split_external(own).map(|(server, _)| server);
    let mut targets = Vec::new();
    for other in others {
        let other = other.as_ref();
        let (server, raw) = match split_external(other) {
            Some((server, raw)) => (Some(server), Some(raw)),
            None => (None, None),
        };
        if other == own || server == own_server {
            continue;
        }
        if distinctive(other) {
            targets.push((other.to_owned(), format!("`{other}`")));
        }
        if let Some(raw) = raw.filter(|r| distinctive(r)) {
            targets.push((raw.to_owned(), format!("`{raw}` (`{other}`)")));
        }
    }
    targets
}

/// Byte offset of the first case-insensitive occurrence of `word` in `text` that is not part
/// of a longer name (neighbours are not `[A-Za-z0-9_-]`).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let hay = text.to_ascii_lowercase();
    let needle = word.to_ascii_lowercase();
    let is_name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let bytes = hay.as_bytes();
    let mut from = 0;
    while let Some(pos) = hay[from..].find(&needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = start == 0 || !is_name_byte(bytes[start - 1]);
        let after_ok = end == bytes.len() || !is_name_byte(bytes[end]);
        if before_ok && after_ok {
            return Some(start);
        }
        from = start + 1;
        while !hay.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

/// `text` on one line, whitespace runs collapsed, at most 80 characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= 80 {
        joined
    } else {
        let cut: String = joined.chars().take(79).collect();
        format!("{cut}…")
    }
}
