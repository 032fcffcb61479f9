//! `toolgate tools approve-change NAME`: the operator's side of definition pinning (R-REG-5).
//! Shows how the quarantined definition differs from the pinned one (a unified diff of the
//! pretty JSON, plus any suspicious-description flags), asks on a terminal unless `--yes`,
//! then re-pins exactly the definition that was shown.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};
use serde_json::Value;
use toolgate_protocol::{Annotations, ToolSpec};
use toolgate_registry::pins::format_time;
use toolgate_registry::{PinRecord, SeenDefinition, description_flags};

use crate::diff;
use crate::output;
use crate::user::local_user;
use toolgate_app::Config;
use toolgate_app::stores::Stores;

pub async fn run(
    settings: &Config,
    name: &str,
    yes: bool,
    by: Option<String>,
) -> anyhow::Result<i32> {
    let pins = Stores::open(settings).await?.pins();
    let Some(record) = pins.get(name).await? else {
        bail!(
            "no definition of `{name}` is pinned: only tools of pinned sources (MCP servers) are \
             pinned, when first seen (see `toolgate tools list`)"
        );
    };
    let Some(seen) = &record.seen else {
        bail!(
            "`{name}` is not quarantined: its definition matches the one pinned {} (by {}), so \
             there is no change to approve",
            format_time(record.pinned_at_ms),
            record.pinned_by
        );
    };
    let others: Vec<String> = pins
        .list()
        .await?
        .into_iter()
        .map(|r| r.name)
        .filter(|n| n != name)
        .collect();
    show_change(&record, seen, &others)?;
    if !yes && !confirmed(name)? {
        output::line(&format!("not approved; `{name}` stays quarantined"));
        return Ok(1);
    }
    let by = by.unwrap_or_else(local_user);
    let pinned = pins
        .approve_change(name, &seen.hash, &by)
        .await
        .with_context(|| format!("re-pinning `{name}`"))?;
    output::line(&format!(
        "re-pinned `{name}` to sha256:{} (approved by {by}); it is callable again once its \
         source is reloaded",
        short(&pinned.pinned_hash)
    ));
    Ok(0)
}

fn show_change(record: &PinRecord, seen: &SeenDefinition, others: &[String]) -> anyhow::Result<()> {
    let parts: Vec<String> = record
        .changed_parts()
        .iter()
        .map(ToString::to_string)
        .collect();
    output::line(&format!(
        "`{}` changed since it was pinned: {}",
        record.name,
        parts.join(", ")
    ));
    let old_label = format!(
        "pinned {} by {} (sha256:{})",
        format_time(record.pinned_at_ms),
        record.pinned_by,
        short(&record.pinned_hash)
    );
    let new_label = format!(
        "seen {} (sha256:{})",
        format_time(seen.seen_at_ms),
        short(&seen.hash)
    );
    let old = serde_json::to_string_pretty(&record.pinned_definition)?;
    let new = serde_json::to_string_pretty(&seen.definition)?;
    output::line("");
    output::line(diff::unified(&old, &new, &old_label, &new_label).trim_end());
    if let Some(spec) = spec_of(&seen.definition) {
        let flags = description_flags(&spec, others);
        if !flags.is_empty() {
            output::line("");
            output::line("the new definition has suspicious text (review before approving):");
            for flag in flags {
                output::line(&format!("  - {flag}"));
            }
        }
    }
    output::line("");
    Ok(())
}

/// The spec a stored definition describes, for linting (risk and source do not matter).
fn spec_of(definition: &Value) -> Option<ToolSpec> {
    let text = |key: &str| definition.get(key).and_then(Value::as_str);
    let mut spec = ToolSpec::new(
        text("name")?,
        text("description")?,
        definition.get("input_schema")?.clone(),
    );
    spec.annotations = definition
        .get("annotations")
        .and_then(|a| serde_json::from_value::<Annotations>(a.clone()).ok())
        .unwrap_or_default();
    Some(spec)
}

/// Asks on the terminal; refuses to guess when there is none.
fn confirmed(name: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "not approved: stdin is not a terminal, so nobody can confirm; review the diff above \
             and run `toolgate tools approve-change {name} --yes`"
        );
    }
    eprint!("re-pin `{name}` to the new definition? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
