//! `toolgate tools list | show | export | approve-change`.

use anyhow::{Context, bail};
use serde_json::json;
use toolgate_protocol::ExportFormat;
use toolgate_registry::{Availability, Entry, description_flags};

use crate::app::{McpServers, open_gateway, start_mcp};
use crate::cli::ToolsCommand;
use crate::output;
use crate::settings::Settings;

fn availability(e: &Entry) -> String {
    match &e.availability {
        Availability::Available => "available".to_owned(),
        Availability::Unavailable(r) => format!("unavailable: {r}"),
        Availability::Quarantined(r) => format!("quarantined: {r}"),
    }
}

pub async fn run(settings: &Settings, cmd: ToolsCommand) -> anyhow::Result<i32> {
    if let ToolsCommand::ApproveChange { name, yes, by } = cmd {
        return crate::commands::approve_change::run(settings, &name, yes, by);
    }
    if let ToolsCommand::Search(args) = cmd {
        return crate::commands::tools_search::run(settings, args).await;
    }
    let gateway = open_gateway(settings, None)?;
    let hub = start_mcp(settings, gateway.catalog(), McpServers::All).await?;
    let shown = show(settings, &gateway, cmd);
    if let Some(hub) = hub {
        hub.shutdown().await;
    }
    shown
}

fn show(
    settings: &Settings,
    gateway: &toolgate_gateway::Gateway,
    cmd: ToolsCommand,
) -> anyhow::Result<i32> {
    let role = &settings.role;
    let visible: Vec<Entry> = gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| gateway.visible_to(role, e))
        .collect();
    match cmd {
        ToolsCommand::List { json } => {
            if json {
                let list: Vec<_> = visible
                    .iter()
                    .map(|e| {
                        let s = e.spec();
                        json!({"name": s.name, "risk": s.risk, "source": s.source,
                               "availability": e.availability, "description": s.description,
                               "tags": s.tags})
                    })
                    .collect();
                output::json(&list)?;
            } else {
                let rows: Vec<Vec<String>> = visible
                    .iter()
                    .map(|e| {
                        let s = e.spec();
                        vec![
                            s.name.clone(),
                            s.risk.to_string(),
                            s.source.clone(),
                            availability(e),
                            output::short(&s.description, 70),
                        ]
                    })
                    .collect();
                output::table(&["NAME", "RISK", "SOURCE", "STATUS", "DESCRIPTION"], &rows);
            }
        }
        ToolsCommand::Show { name, json } => {
            let Some(e) = visible.iter().find(|e| e.spec().name == name) else {
                bail!(
                    "no tool named `{name}` is visible to role `{role}` (see `toolgate tools list`)"
                );
            };
            let others: Vec<String> = gateway
                .catalog()
                .all()
                .iter()
                .map(|o| o.spec().name.clone())
                .filter(|n| *n != name)
                .collect();
            let flags = description_flags(e.spec(), &others);
            let mut doc = serde_json::to_value(e.spec()).context("serialising the tool")?;
            doc["availability"] = json!(e.availability);
            doc["description_flags"] = json!(flags);
            if json {
                output::json(&doc)?;
            } else {
                let s = e.spec();
                output::line(&format!(
                    "{}  ({} risk, {}, {})",
                    s.name,
                    s.risk,
                    s.source,
                    availability(e)
                ));
                output::line("");
                output::line(&s.description);
                output::line("");
                output::line("input schema:");
                output::line(&serde_json::to_string_pretty(&s.input_schema)?);
                if !s.annotations.is_empty() {
                    output::line("annotations:");
                    output::line(&serde_json::to_string_pretty(&s.annotations)?);
                }
                if !flags.is_empty() {
                    output::line("suspicious text (review before trusting this tool):");
                    for flag in &flags {
                        output::line(&format!("  - {flag}"));
                    }
                }
            }
        }
        ToolsCommand::ApproveChange { name, yes, by } => {
            return crate::commands::approve_change::run(settings, &name, yes, by);
        }
        // Answered by `run` before the catalog is listed.
        ToolsCommand::Search(_) => {}
        ToolsCommand::Export { format } => {
            let format: ExportFormat = format.parse().map_err(anyhow::Error::msg)?;
            let tools = gateway
                .catalog()
                .export(format, |e| gateway.visible_to(role, e));
            output::json(&tools)?;
        }
    }
    Ok(0)
}
