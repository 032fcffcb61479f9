//! One module per command group; each takes resolved settings and returns an exit code.

pub mod approvals;
pub mod approve_change;
pub mod audit;
pub mod call;
pub mod chat;
pub mod config;
pub mod doctor;
pub mod eval;
pub mod eval_retrieval;
pub mod mcp;
pub mod mcp_login;
pub mod run;
pub mod serve;
pub mod token;
pub mod tools;
pub mod tools_search;

/// Who the local user is, for principals and approvers.
pub fn local_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "local".to_owned())
}
