//! Names of external tools (R-REG-4): `mcp__{server}__{tool}`, sanitised to the strictest
//! provider limit (64 chars of `[A-Za-z0-9_-]`), with a short hash suffix when sanitising
//! changed or truncated the name, so two raw names never map to one catalog name.

use sha2::{Digest, Sha256};

const MAX: usize = 64;
const SUFFIX_LEN: usize = 6;

fn sanitise(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The catalog name for `tool` of MCP server `server`. Deterministic: the same pair always
/// yields the same name.
pub fn external_tool_name(server: &str, tool: &str) -> String {
    let raw = format!("mcp__{server}__{tool}");
    let clean = format!("mcp__{}__{}", sanitise(server), sanitise(tool));
    if clean == raw && clean.len() <= MAX {
        return clean;
    }
    let digest = hex::encode(Sha256::digest(raw.as_bytes()));
    let suffix = &digest[..SUFFIX_LEN];
    let keep = MAX - SUFFIX_LEN - 1;
    let head: String = clean.chars().take(keep).collect();
    format!("{head}_{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_through() {
        assert_eq!(
            external_tool_name("github", "create_issue"),
            "mcp__github__create_issue"
        );
    }

    #[test]
    fn sanitised_and_truncated_names_get_a_stable_suffix() {
        let a = external_tool_name("my.server", "get weather");
        let b = external_tool_name("my_server", "get_weather");
        assert_eq!(b, "mcp__my_server__get_weather");
        assert_ne!(a, b, "sanitising must not create collisions");
        assert!(a.starts_with("mcp__my_server__get_weather_"));
        let long = external_tool_name("s", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_eq!(long, external_tool_name("s", &"x".repeat(100)));
        assert_ne!(long, external_tool_name("s", &"x".repeat(101)));
    }
}
