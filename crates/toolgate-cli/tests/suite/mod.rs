//! End-to-end tests of the `toolgate` binary, one module per topic.

mod agent;
mod approvals;
mod audit_cli;
mod bad_input;
mod crash;
mod defaults;
mod doctor;
mod error_codes;
mod eval;
mod exports;
mod harness;
mod hidden_tools;
mod mcp;
mod mcp_chain;
mod mcp_conformance;
mod mcp_elicit;
mod mcp_federated;
mod mcp_login;
mod pins;
mod pipes;
mod prompt;
mod rag;
mod rag_export;
mod redaction;
mod tamper;
mod web;
