//! The terminal approval channel: when `toolgate call` runs on a terminal, a call that needs
//! approval asks right there. Dangerous tools need the tool name typed back.

use std::io::{BufRead, Write};

use async_trait::async_trait;
use toolgate_gateway::approve::{Approver, ApproverAnswer};
use toolgate_store::approvals::{ApprovalRequest, DecisionScope};

pub struct TerminalApprover {
    pub who: String,
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn ask(&self, request: &ApprovalRequest) -> Option<ApproverAnswer> {
        let request = request.clone();
        let who = self.who.clone();
        tokio::task::spawn_blocking(move || ask_blocking(&request, who))
            .await
            .ok()
            .flatten()
    }
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

#[allow(clippy::print_stderr)]
fn ask_blocking(r: &ApprovalRequest, who: String) -> Option<ApproverAnswer> {
    let args = serde_json::to_string_pretty(&r.arguments).unwrap_or_default();
    eprintln!();
    eprintln!(
        "  approval needed: {} ({} risk)  [{}]",
        r.tool, r.risk, r.id
    );
    eprintln!(
        "  principal {} · session {} · role {}",
        r.principal, r.session, r.role
    );
    for line in args.lines() {
        eprintln!("  │ {line}");
    }
    loop {
        eprint!("  approve [o]nce, for this [s]ession, [a]lways for these arguments, or [d]eny? ");
        let _ = std::io::stderr().flush();
        let answer = read_line()?;
        let scope = match answer.to_ascii_lowercase().as_str() {
            "o" | "once" | "y" | "yes" => DecisionScope::Once,
            "s" | "session" => DecisionScope::Session,
            "a" | "always" => DecisionScope::Always,
            "d" | "deny" | "n" | "no" => {
                return Some(ApproverAnswer {
                    approve: false,
                    scope: DecisionScope::Once,
                    confirm: None,
                    approver: who,
                    reason: Some("denied at the terminal".to_owned()),
                });
            }
            _ => continue,
        };
        let confirm = if r.requires_confirmation {
            eprint!("  {} is dangerous: type its name to confirm: ", r.tool);
            let _ = std::io::stderr().flush();
            let typed = read_line()?;
            if typed != r.tool {
                eprintln!("  confirmation did not match; not approved");
                continue;
            }
            Some(typed)
        } else {
            None
        };
        return Some(ApproverAnswer {
            approve: true,
            scope,
            confirm,
            approver: who,
            reason: None,
        });
    }
}
