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
pub mod policy;
pub mod rag_model;
pub mod run;
pub mod serve;
pub mod store;
pub mod token;
pub mod tools;
pub mod tools_lint;
pub mod tools_search;
