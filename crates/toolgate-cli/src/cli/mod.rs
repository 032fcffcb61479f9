//! The command line, as clap sees it. Global flags come before the subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod agent;
mod eval;

pub use agent::{AgentArgs, ChatArgs, RunArgs};
pub use eval::{BfclArgs, EvalCommand, RetrievalArgs};

#[derive(Debug, Parser)]
#[command(
    name = "toolgate",
    version,
    about = "The tool-and-action layer of an LLM agent: \
    one gateway that validates, authorises, approves, runs and audits every tool call."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Directory the file and shell tools are confined to [default: current directory].
    #[arg(long, global = true, env = "TOOLGATE_WORKSPACE")]
    pub workspace: Option<PathBuf>,
    /// Where the audit log, approvals and offloaded results live [default: <workspace>/.toolgate].
    #[arg(long, global = true, env = "TOOLGATE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Configuration file [default: <workspace>/toolgate.toml if it exists].
    #[arg(long, global = true, env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Role to act in (see `[roles]` in the configuration) [default: default].
    #[arg(long, global = true, env = "TOOLGATE_ROLE")]
    pub role: Option<String>,
    /// Log lines on stderr as `text` (for people; coloured only at a terminal) or `json`
    /// (one object per line, for log shippers). `TOOLGATE_LOG` sets the level.
    #[arg(long, global = true, env = "TOOLGATE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl GlobalArgs {
    /// What the flags (and their environment variables) say over the configuration file.
    pub fn overrides(&self) -> toolgate_app::Overrides {
        toolgate_app::Overrides {
            workspace: self.workspace.clone(),
            data_dir: self.data_dir.clone(),
            config: self.config.clone(),
            role: self.role.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect and export the tool catalog.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Run one tool call through the gateway and print its result envelope as JSON.
    Call(CallArgs),
    /// List and decide pending approvals.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Read, search and verify the audit log.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Check or print the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Try `[[policy.rules]]` on a call without making it.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Run the gateway as a server: MCP at /mcp, the HTTP API at /v1, the web console at /.
    Serve(ServeArgs),
    /// Check what this machine offers: Landlock, seccomp, the shell sandbox, paths, chromium.
    Doctor(DoctorArgs),
    /// Make bearer tokens for `toolgate serve`.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Run one task with the configured model; every tool call goes through the gateway.
    Run(RunArgs),
    /// A conversation with the configured model on the terminal (history kept per session).
    Chat(ChatArgs),
    /// Configure and inspect the MCP servers whose tools join the catalog.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Score the configured model on benchmarks: BFCL categories, BFCL-compatible checker.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Tool RAG: fetch the embedding model that makes retrieval hybrid.
    #[command(subcommand)]
    Rag(RagCommand),
    /// The shared store (`[store] url`): its schema version and migrations.
    #[command(subcommand)]
    Store(StoreCommand),
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Where state is kept and, for PostgreSQL, the schema version: applied, known, pending.
    /// Exit 0 when up to date, 3 when steps are pending, 2 when the schema is newer than this
    /// toolgate.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Apply the pending schema steps (under an advisory lock: replicas starting together
    /// migrate once). `toolgate serve` does this at start too.
    Migrate {
        /// Print what would be applied; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum RagCommand {
    /// The sentence-transformers embedding model.
    #[command(subcommand)]
    Model(ModelCommand),
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download a model (default: all-MiniLM-L6-v2 at a pinned revision) from the Hugging Face
    /// Hub (`HF_ENDPOINT` for a mirror) through [egress] into the model cache
    /// (`TOOLGATE_MODEL_CACHE`, else ~/.cache/toolgate/models), verify every file's SHA-256 and
    /// resume a broken download. `[rag]` then uses the default model with no configuration.
    Pull(PullArgs),
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// A Hub repository `owner/name` [default: sentence-transformers/all-MiniLM-L6-v2].
    pub repo: Option<String>,
    /// A commit id, tag or branch [default: the pinned commit for the default repository,
    /// else main].
    #[arg(long)]
    pub revision: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Add a server to toolgate.toml: `add NAME -- COMMAND ARGS…` (stdio) or
    /// `add NAME --url URL` (Streamable HTTP). Comments and layout of the file are kept.
    Add(McpAddArgs),
    /// Remove a server from toolgate.toml.
    Remove { name: String },
    /// The configured servers (env and header values are not shown).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Connect to every configured server and report its state, negotiated protocol
    /// version, tool count and last error. Exits 2 when an enabled server is not ready.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// The servers' tools (one server's with NAME): risk, availability, pin state and
    /// suspicious-description warnings.
    Tools {
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Sign in to an HTTP server with `auth = { type = "oauth" }`: authorization code + PKCE
    /// in a browser, redirect to a loopback listener; the tokens go to the store.
    Login {
        name: String,
        /// A scope to ask for besides the configured ones (repeatable; step-up).
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// Only print the authorization URL; do not try to open a browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the tokens stored for a server (the next start needs a new login).
    Logout { name: String },
}

#[derive(Debug, Args)]
pub struct McpAddArgs {
    /// The server's name: the `{server}` in its tools' names `mcp__{server}__{tool}`.
    pub name: String,
    /// Endpoint of a Streamable HTTP server (reached under [egress]).
    #[arg(long, conflicts_with_all = ["env", "cwd", "command"])]
    pub url: Option<String>,
    /// An HTTP header sent with every request, `NAME=VALUE` (repeatable); write secrets as
    /// `${VAR}` to read them from the environment at start.
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// An environment variable for a stdio server, `KEY=VALUE` (repeatable); `${VAR}` in the
    /// value is read from toolgate's environment.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Working directory of a stdio server.
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// auto | 2026-07-28 | 2025-11-25 [default: auto].
    #[arg(long)]
    pub protocol: Option<String>,
    /// Let the server's annotations set its tools' risk (otherwise: write unless labelled).
    #[arg(long)]
    pub trusted: bool,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue a bearer token for `serve`: stored (its SHA-256 only) where [store] keeps state,
    /// admitted by running servers within a second; the token is printed once, on stdout.
    Create {
        /// Who calls with this token (recorded in the audit and as approver).
        #[arg(long)]
        principal: String,
        /// The role its calls act in.
        #[arg(long)]
        role: String,
        /// May decide approvals and read the audit.
        #[arg(long)]
        operator: bool,
        /// Expires after this long (`30d`, `12h`); never by default.
        #[arg(long, value_name = "DURATION")]
        expires: Option<humantime::Duration>,
        /// What the token is for (shown by `list` and the console).
        #[arg(long)]
        note: Option<String>,
        /// Store nothing: print the `[[server.tokens]]` entry for toolgate.toml instead (on
        /// stderr), for a token that lives in the configuration file.
        #[arg(long)]
        config_entry: bool,
    },
    /// The issued tokens: id, principal, role, state, expiry, last use (never a token).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token: running servers refuse it within a second.
    Revoke {
        /// The token's id (`tok_…`, from `list`).
        id: String,
    },
    /// Issue a replacement for a token (same principal, role and expiry); the old one keeps
    /// working for `--grace`, then stops. The new token is printed once, on stdout.
    Rotate {
        id: String,
        /// How long the old token keeps working (`0s`: it stops now).
        #[arg(long, default_value = "0s", value_name = "DURATION")]
        grace: humantime::Duration,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on [default: [server] listen, else 127.0.0.1:8765]. Port 0 picks one.
    #[arg(long)]
    pub listen: Option<String>,
    /// Speak MCP on stdin/stdout instead (for hosts that spawn their servers).
    #[arg(long)]
    pub stdio: bool,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Tool RAG: the tools best matching a task, among those the role may see.
    Search(SearchArgs),
    /// The tools the role can see.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One tool's full definition.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// The role's tools in a model API's `tools` format. Over `[rag] threshold`, `--query`
    /// exports the top K for a request plus `search_tools`, and `--deferred` the API's
    /// deferred-loading form (docs/rag.md).
    Export {
        /// openai-chat | openai-responses | anthropic | mcp | gemini
        #[arg(long)]
        format: String,
        /// The user's request: export the K tools that fit it best plus `search_tools`
        /// (when the role sees more than `[rag] threshold` tools).
        #[arg(long)]
        query: Option<String>,
        /// How many tools `--query` keeps [default: [rag] k].
        #[arg(short = 'k', long = "top")]
        k: Option<usize>,
        /// The API's deferred-loading form: every tool `defer_loading` plus the provider's
        /// tool search (anthropic, openai-responses); with `--query` its top K stay loaded.
        /// Other formats have none and fall back to `--query`'s top K + `search_tools`.
        #[arg(long)]
        deferred: bool,
    },
    /// Show how a quarantined tool's definition changed since it was pinned, and re-pin it.
    ApproveChange {
        name: String,
        /// Re-pin without asking (after reviewing the diff); needed when stdin is not a terminal.
        #[arg(long)]
        yes: bool,
        /// Recorded as who approved the change [default: $USER].
        #[arg(long)]
        by: Option<String>,
    },
    /// Check every tool definition in the catalog (built-ins and each MCP server's) against
    /// the schema-design rules and find confusable pairs; each finding with a fix.
    Lint(LintArgs),
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Only the tools of this MCP server (`builtin` for toolgate's own).
    #[arg(long)]
    pub server: Option<String>,
    /// text | json | sarif
    #[arg(long, default_value = "text")]
    pub format: String,
    /// BM25 similarity (0–1) from which two tools are reported as confusable.
    #[arg(long, default_value_t = 0.8)]
    pub confusable_threshold: f32,
    /// The encoder's cosine (0–1) from which two tools are reported as confusable, when an
    /// embedding model is configured or pulled (`[rag]`; BM25 alone otherwise).
    #[arg(long, default_value_t = 0.9)]
    pub encoder_threshold: f32,
    /// Exit 2 when a finding is at least this severe: error | warning | note | never.
    #[arg(long, default_value = "error")]
    pub fail_on: String,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// Tool name.
    pub name: String,
    /// Arguments as a JSON object; `@FILE` reads them from a file, `-` from stdin.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// Session the call belongs to (session-scoped approvals apply within it).
    #[arg(long, default_value = "cli")]
    pub session: String,
    /// Who is calling [default: cli:$USER].
    #[arg(long)]
    pub principal: Option<String>,
    /// Makes a retried write call act only once.
    #[arg(long)]
    pub idempotency_key: Option<String>,
    /// Never prompt, even on a terminal: return approval_required instead.
    #[arg(long)]
    pub no_prompt: bool,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// Pending approvals (all recent ones with --all).
    List {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// One approval request.
    Show { id: String },
    /// Approve a pending request.
    Approve {
        id: String,
        /// For dangerous tools: type the tool name.
        #[arg(long)]
        confirm: Option<String>,
        /// once | session | always
        #[arg(long, default_value = "once")]
        scope: String,
        /// For --scope always: a JSON object of argument globs, e.g. '{"path":"src/*"}'
        /// [default: exactly these arguments].
        #[arg(long)]
        pattern: Option<String>,
        #[arg(long)]
        reason: Option<String>,
        /// Recorded as the approver [default: $USER].
        #[arg(long)]
        by: Option<String>,
    },
    /// Deny a pending request.
    Deny {
        id: String,
        #[arg(long)]
        reason: Option<String>,
        #[arg(long)]
        by: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// The newest records.
    Tail {
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: usize,
        #[arg(long)]
        json: bool,
    },
    /// Records matching filters (all filters combine).
    Query(QueryArgs),
    /// Check the hash chain; exits non-zero and names the first bad record. With `[store]
    /// url`, every replica's chain in PostgreSQL.
    Verify {
        #[arg(long)]
        json: bool,
        /// Verify this file instead: an export (`audit export`) of the embedded or the
        /// cluster's log. With the audit key, only an export that key vouched for passes.
        #[arg(long)]
        file: Option<std::path::PathBuf>,
        /// Mark the torn tails the head anchor recorded as looked at (they stay as evidence:
        /// deleting or editing one still fails), then verify.
        #[arg(long, conflicts_with = "file")]
        accept_evidence: bool,
    },
    /// Write the whole audit log as JSONL to `--out` or stdout, ending with what the audit
    /// key vouches for (the embedded log: a MACed export head after its records, refused if
    /// the log does not verify; the cluster's: every chain, then each chain's MACed head);
    /// `audit verify --file` checks it.
    Export {
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// A duration ago (`10m`, `2h`) or an RFC 3339 time.
    #[arg(long)]
    pub since: Option<String>,
    #[arg(long)]
    pub until: Option<String>,
    #[arg(long)]
    pub tool: Option<String>,
    #[arg(long)]
    pub principal: Option<String>,
    #[arg(long)]
    pub session: Option<String>,
    /// ok, or an error code such as policy_denied.
    #[arg(long)]
    pub outcome: Option<toolgate_audit::AuditOutcome>,
    #[arg(long)]
    pub call_id: Option<String>,
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Which `[[policy.rules]]` rule decides a call of TOOL (acting as --role) and why, or
    /// the role's decision when no rule does. Nothing runs and no MCP server starts: a tool
    /// that is not built in needs --risk. Exit 0 allow, 3 ask, 2 deny, 1 bad input.
    Test(PolicyTestArgs),
}

#[derive(Debug, Args)]
pub struct PolicyTestArgs {
    /// Tool name.
    #[arg(long)]
    pub tool: String,
    /// The call's arguments as a JSON object; `@FILE` reads them from a file, `-` from stdin.
    /// Not checked against the tool's schema.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The caller's claims as a JSON object, as an access token would carry them (`@FILE`,
    /// `-` as for --args) [default: no identity: `claims` is `{}`].
    #[arg(long)]
    pub claims: Option<String>,
    /// Who is calling [default: cli:$USER].
    #[arg(long)]
    pub principal: Option<String>,
    /// read | write | dangerous [default: the built-in tool's; required for other tools].
    #[arg(long)]
    pub risk: Option<toolgate_protocol::Risk>,
    /// The tool's source [default: the built-in tool's, `mcp:SERVER` for a configured
    /// server's `mcp__SERVER__…` tool].
    #[arg(long)]
    pub source: Option<String>,
    /// The identity's issuer (`iss`) [default: none].
    #[arg(long)]
    pub issuer: Option<String>,
    /// The identity's subject (`sub`) [default: none].
    #[arg(long)]
    pub subject: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate the configuration file and print what is in effect.
    Check,
    /// Print the effective configuration as TOML.
    Show,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What the tool should do, in plain words.
    pub query: String,
    /// Search as this role [default: the global --role].
    #[arg(long)]
    pub role: Option<String>,
    /// How many tools [default: [rag] k, 5].
    #[arg(short = 'k', long = "top")]
    pub k: Option<usize>,
    /// bm25 | dense | hybrid [default: [rag] mode; hybrid falls back to bm25 without a model].
    #[arg(long)]
    pub mode: Option<String>,
    /// Also show each retriever's rank and score, and how many tools each filter removed.
    #[arg(long)]
    pub explain: bool,
    /// A JSON list of {name, score, bm25, dense, rerank, risk, description}, best first.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print one JSON document: `{ok, checks: [{name, status, detail}]}`.
    #[arg(long)]
    pub json: bool,
}
