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
    let args =
        serde_json::to_string_pretty(&toolgate_store::approvals::visible_value(&r.arguments))
            .unwrap_or_default();
    // Whitespace runs and invisible characters are shown as ⟨…⟩ markers (issue 12, item 2).
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
    let mut dialogue = Dialogue::new(r, who, "denied at the terminal");
    let mut prompt = dialogue.prompt();
    loop {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
        match dialogue.answer(&read_line()?) {
            Step::Ask(next) => prompt = next,
            Step::Done(answer) => return Some(answer),
        }
    }
}

/// The approval dialogue, whatever the lines come from (a blocking read here, the chat's
/// reader thread in `toolgate chat`): choose once / session / always / deny; a dangerous
/// tool's name must then be typed back. Unknown answers ask again; a mistyped name starts
/// over.
pub struct Dialogue<'a> {
    request: &'a ApprovalRequest,
    who: String,
    denied: &'static str,
    /// The chosen scope, waiting for the typed confirmation.
    confirming: Option<DecisionScope>,
}

/// What the dialogue wants next.
pub enum Step {
    /// Show this prompt and read another line.
    Ask(String),
    Done(ApproverAnswer),
}

const CHOICES: &str =
    "  approve [o]nce, for this [s]ession, [a]lways for these arguments, or [d]eny? ";

impl<'a> Dialogue<'a> {
    /// `denied` is the reason recorded when the human denies ("denied at the terminal").
    pub fn new(request: &'a ApprovalRequest, who: String, denied: &'static str) -> Self {
        Dialogue {
            request,
            who,
            denied,
            confirming: None,
        }
    }

    /// The first prompt.
    pub fn prompt(&self) -> String {
        CHOICES.to_owned()
    }

    #[allow(clippy::print_stderr)]
    pub fn answer(&mut self, line: &str) -> Step {
        if let Some(scope) = self.confirming.take() {
            if line != self.request.tool {
                eprintln!("  confirmation did not match; not approved");
                return Step::Ask(CHOICES.to_owned());
            }
            return Step::Done(self.approve(scope, Some(line.to_owned())));
        }
        let scope = match line.to_ascii_lowercase().as_str() {
            "o" | "once" | "y" | "yes" => DecisionScope::Once,
            "s" | "session" => DecisionScope::Session,
            "a" | "always" => DecisionScope::Always,
            "d" | "deny" | "n" | "no" => {
                return Step::Done(ApproverAnswer {
                    approve: false,
                    scope: DecisionScope::Once,
                    confirm: None,
                    approver: self.who.clone(),
                    reason: Some(self.denied.to_owned()),
                });
            }
            _ => return Step::Ask(CHOICES.to_owned()),
        };
        if self.request.requires_confirmation {
            self.confirming = Some(scope);
            return Step::Ask(format!(
                "  {} is dangerous: type its name to confirm: ",
                self.request.tool
            ));
        }
        Step::Done(self.approve(scope, None))
    }

    fn approve(&self, scope: DecisionScope, confirm: Option<String>) -> ApproverAnswer {
        ApproverAnswer {
            approve: true,
            scope,
            confirm,
            approver: self.who.clone(),
            reason: None,
        }
    }
}
