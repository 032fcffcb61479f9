//! One reader of stdin for a whole conversation, and the approval prompt answered from it:
//! the next task and the answers to approval prompts come from the same source, so a prompt
//! abandoned by a cancelled turn leaves no reader behind to swallow the next line.

use std::io::{BufRead, Write};
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{Mutex, mpsc};
use toolgate_gateway::approve::{Approver, ApproverAnswer};
use toolgate_store::approvals::ApprovalRequest;

use crate::prompt::{Dialogue, Step};

/// The lines of stdin, read by one thread for the whole command.
pub struct Lines {
    rx: Mutex<mpsc::Receiver<String>>,
}

impl Lines {
    /// A plain thread, not a blocking task: a read still pending at exit must not hold up
    /// the runtime's shutdown.
    pub fn spawn() -> Arc<Lines> {
        let (tx, rx) = mpsc::channel(16);
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.blocking_send(line.trim().to_owned()).is_err() {
                    break;
                }
            }
        });
        Arc::new(Lines { rx: Mutex::new(rx) })
    }

    /// The next line, or `None` at the end of input or on Ctrl-C.
    pub async fn next_or_interrupt(&self) -> Option<String> {
        let mut rx = self.rx.lock().await;
        tokio::select! {
            line = rx.recv() => line,
            _ = tokio::signal::ctrl_c() => None,
        }
    }
}

/// Approval prompts inline in the conversation, answered from the chat's own input; parallel
/// calls ask one after another.
pub struct ChatApprover {
    pub lines: Arc<Lines>,
    pub who: String,
}

#[allow(clippy::print_stderr)]
pub fn ask_prompt(text: &str) {
    eprint!("{text}");
    let _ = std::io::stderr().flush();
}

#[async_trait]
impl Approver for ChatApprover {
    #[allow(clippy::print_stderr)]
    async fn ask(&self, r: &ApprovalRequest) -> Option<ApproverAnswer> {
        let mut lines = self.lines.rx.lock().await;
        eprintln!(
            "  approval needed: {} ({} risk)  [{}]",
            r.tool, r.risk, r.id
        );
        let args =
            serde_json::to_string_pretty(&toolgate_store::approvals::visible_value(&r.arguments))
                .unwrap_or_default();
        // Whitespace runs and invisible characters are shown as ⟨…⟩ markers (issue 12, item 2).
        for line in args.lines() {
            eprintln!("  │ {line}");
        }
        let mut dialogue = Dialogue::new(r, self.who.clone(), "denied in the chat");
        let mut prompt = dialogue.prompt();
        loop {
            ask_prompt(&prompt);
            match dialogue.answer(&lines.recv().await?) {
                Step::Ask(next) => prompt = next,
                Step::Done(answer) => return Some(answer),
            }
        }
    }
}
