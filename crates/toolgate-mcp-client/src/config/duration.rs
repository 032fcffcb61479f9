//! `"10s"`, `"1m 30s"`, `"250ms"` (humantime) or a number of seconds.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer, de::Error};

#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Seconds(u64),
    Text(String),
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    match Raw::deserialize(d)? {
        Raw::Seconds(s) => Ok(Duration::from_secs(s)),
        Raw::Text(t) => humantime::parse_duration(&t).map_err(|e| {
            D::Error::custom(format!(
                "`{t}` is not a duration ({e}); write it like \"10s\", \"2m\" or \"500ms\""
            ))
        }),
    }
}

pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&humantime::format_duration(*d).to_string())
}
