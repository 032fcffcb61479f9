//! The pipeline's own cost (issue 2): an `echo` tool called through a real [`Gateway`] with
//! every layer on — lookup, role, JSON Schema validation, policy, idempotency, approval,
//! intent, result governance, execution and the audit log with redaction — against the same
//! tool called directly. Prints one table; no timing is asserted, only correctness (every
//! call succeeds; the durable logs verify and hold one record per audited event).
//!
//! ```text
//! cargo bench -p toolgate-gateway --bench pipeline
//! TOOLGATE_BENCH_SCALE=0.1 cargo bench -p toolgate-gateway --bench pipeline   # quick look
//! ```
//!
//! Scenarios, each with 1 and 32 concurrent callers (tokio tasks on a 2-worker runtime):
//! `direct` (the tool alone), `buffered` and `durable` audit, and `durable write` (a
//! write-risk echo: attempt and outcome records, both fsynced). Latency is measured per call
//! by the caller, from building the request to holding the envelope; calls/s is calls over
//! the wall time of the measured phase; CPU/call is the CPU time of all the process's threads
//! (callers, audit writer and indexer, kernel time included) over the phase, per call. The data directory lives under cargo's target tmp
//! dir (a real disk, so fsync costs what it costs) unless `TOOLGATE_BENCH_DIR` says where.
//! `TOOLGATE_BENCH_ONLY=direct,buffered` runs only the named modes (for profiling).
//!
//! Policy rules (issue 16): `policy0`, `policy50` and `policy50late` are `buffered` with a
//! caller identity (issuer, subject, claims) and no `[[policy.rules]]`, 50 rules none of
//! which matches (all considered), and 50 rules of which the last matches; their p50s side by
//! side are the cost of the rules. They are not in the default run:
//! `TOOLGATE_BENCH_ONLY=policy0,policy50,policy50late`. `rules` times the same rules alone
//! (`PolicyRules::first_match` on the same call), without the pipeline around them.
//!
//! Telemetry (issue 17): `otel_metrics` (metrics only, as `serve` runs by default) and
//! `otel_traces` (every call traced and exported over OTLP/HTTP to a local collector) are
//! `buffered` with the SDK installed; one per process, after the rest:
//! `TOOLGATE_BENCH_ONLY=buffered,otel_traces`.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "pipeline/machine.rs"]
mod machine;
#[path = "pipeline/otel.rs"]
mod otel;
#[path = "pipeline/rules.rs"]
mod rules;
#[path = "pipeline/stats.rs"]
mod stats;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_audit::{AuditLog, Durability, verify};
use toolgate_core::{DynTool, Tool, ToolContext, ToolError};
use toolgate_gateway::policy::{
    DecisionName, PolicyConfig, PolicyInput, PolicyRuleConfig, PolicyRules, RoleConfig, RuleConfig,
};
use toolgate_gateway::{Arguments, CallRequest, Gateway, GatewayConfig, GatewayDeps, Identity};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};
use toolgate_registry::Catalog;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;

use stats::{Row, Stats};

/// The allocator the `toolgate` binary uses, so the pipeline costs what it costs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const READ_TOOL: &str = "echo";
const WRITE_TOOL: &str = "echo_write";

/// Returns its arguments; the cheapest honest tool.
struct Echo {
    spec: ToolSpec,
}

#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(args))
    }
}

/// Typed properties, a nested object and `additionalProperties: false` at both levels, so
/// validation walks every member.
fn echo_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 4096},
            "count": {"type": "integer", "minimum": 1, "maximum": 100},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
            "options": {
                "type": "object",
                "properties": {
                    "api_key": {"type": "string"},
                    "header": {"type": "string"},
                    "verbose": {"type": "boolean"},
                    "format": {"enum": ["text", "json"]}
                },
                "required": ["format"],
                "additionalProperties": false
            }
        },
        "required": ["text", "count"],
        "additionalProperties": false
    })
}

/// What a model might send: some prose, a secret under a sensitive key and a bearer token
/// inside a longer string, so redaction masks something in the arguments and the result.
fn echo_args() -> Value {
    json!({
        "text": "Summarise the last deploy of checkout-api and list the failing health checks",
        "count": 3,
        "tags": ["deploy", "prod", "eu-west-1"],
        "options": {
            "api_key": "sk-proj-4f9b2c7d1e8a6f3b5c9d2e7a1f4b8c6d",
            "header": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib3QifQ.c2lnbmF0dXJl",
            "verbose": false,
            "format": "text"
        }
    })
}

fn echo_tool(name: &str, risk: Risk) -> DynTool {
    let spec = ToolSpec::new(name, "Returns its arguments.", echo_schema()).with_risk(risk);
    Arc::new(Echo { spec })
}

/// A gateway on its own data directory, with the CLI's default configuration except that
/// the `default` role may run [`WRITE_TOOL`] without asking.
struct Bench {
    gateway: Arc<Gateway>,
    audit: Arc<AuditLog>,
    jsonl: PathBuf,
    db: PathBuf,
    /// Audited calls so far (warm-up included).
    calls: u64,
    _dir: tempfile::TempDir,
}

fn data_root() -> PathBuf {
    std::env::var_os("TOOLGATE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")))
}

fn open_bench(durability: Durability) -> Bench {
    open_bench_with(durability, PolicyConfig::default())
}

fn open_bench_with(durability: Durability, policy: PolicyConfig) -> Bench {
    let root = data_root();
    std::fs::create_dir_all(&root).expect("create the bench data root");
    let dir = tempfile::tempdir_in(&root).expect("create a temp data dir");
    let jsonl = dir.path().join("logs/tool-audit.jsonl");
    let db = dir.path().join("toolgate.db");
    let audit = Arc::new(AuditLog::open(&jsonl, &db, durability).expect("open audit log"));
    let catalog = Arc::new(Catalog::new());
    catalog
        .register_many(vec![
            echo_tool(READ_TOOL, Risk::Read),
            echo_tool(WRITE_TOOL, Risk::Write),
        ])
        .expect("register echo tools");
    let deps = GatewayDeps {
        catalog,
        audit: Arc::clone(&audit),
        approvals: Arc::new(ApprovalStore::open(&db).expect("open approvals")),
        results: Arc::new(ResultStore::open(&dir.path().join("results")).expect("open results")),
        idempotency: Arc::new(IdempotencyStore::open(&db).expect("open idempotency")),
        redactor: Arc::new(Redactor::default()),
        approver: None,
        quota_buckets: std::sync::Arc::new(toolgate_store::quotas::MemoryBuckets::default()),
    };
    let default_role = RoleConfig {
        rules: vec![RuleConfig {
            tool: WRITE_TOOL.to_owned(),
            decision: DecisionName::Allow,
            confirm: None,
        }],
        ..RoleConfig::default()
    };
    let cfg = GatewayConfig {
        roles: BTreeMap::from([("default".to_owned(), default_role)]),
        policy,
        ..GatewayConfig::default()
    };
    let gateway = Arc::new(Gateway::new(deps, &cfg).expect("assemble the gateway"));
    Bench {
        gateway,
        audit,
        jsonl,
        db,
        calls: 0,
        _dir: dir,
    }
}

/// What the callers call.
#[derive(Clone)]
enum Target {
    Direct(DynTool),
    Gateway(Arc<Gateway>, &'static str),
    /// A gateway call from an authenticated caller.
    GatewayAs(Arc<Gateway>, &'static str, Arc<Identity>),
}

impl Target {
    async fn call_once(&self, args: &Value) {
        match self {
            Target::Direct(tool) => {
                let ctx = ToolContext::for_test();
                let out = tool.call(args.clone(), ctx).await;
                assert!(out.is_ok(), "direct echo failed");
            }
            Target::Gateway(gateway, tool) => {
                let request = CallRequest::new(*tool, Arguments::Json(args.clone()));
                let envelope = gateway.call(request).await;
                assert!(envelope.ok, "gateway call failed: {:?}", envelope.error);
            }
            Target::GatewayAs(gateway, tool, identity) => {
                let mut request = CallRequest::new(*tool, Arguments::Json(args.clone()));
                request.identity = Some(Arc::clone(identity));
                let envelope = gateway.call(request).await;
                assert!(envelope.ok, "gateway call failed: {:?}", envelope.error);
            }
        }
    }
}

/// `calls` calls split over `callers` tasks; returns each call's latency (ns) and the wall
/// time of the whole phase.
async fn drive(target: &Target, callers: usize, calls: usize) -> Stats {
    let args = Arc::new(echo_args());
    let per_task = calls / callers;
    let cpu_before = machine::process_cpu_ns();
    let start = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let (target, args) = (target.clone(), Arc::clone(&args));
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(per_task);
                for _ in 0..per_task {
                    let t = Instant::now();
                    target.call_once(&args).await;
                    lat.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
                }
                lat
            })
        })
        .collect();
    let mut all = Vec::with_capacity(calls);
    for task in tasks {
        all.extend(task.await.expect("caller task"));
    }
    let wall = start.elapsed();
    let cpu = machine::process_cpu_ns().saturating_sub(cpu_before);
    Stats::new(all, wall, cpu)
}

/// Call counts, scaled by `TOOLGATE_BENCH_SCALE` (default 1), and the modes to run.
struct Plan {
    scale: f64,
    only: Option<Vec<String>>,
}

impl Plan {
    fn from_env() -> Self {
        let scale = std::env::var("TOOLGATE_BENCH_SCALE")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .unwrap_or(1.0);
        let only = std::env::var("TOOLGATE_BENCH_ONLY")
            .ok()
            .map(|s| s.split(',').map(|m| m.trim().to_owned()).collect());
        Plan { scale, only }
    }

    fn runs(&self, mode: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|m| m == mode))
    }

    /// Modes outside the default run: only when named.
    fn runs_named(&self, mode: &str) -> bool {
        self.only
            .as_ref()
            .is_some_and(|only| only.iter().any(|m| m == mode))
    }

    /// Rounded to a multiple of 32 so every caller makes the same number of calls.
    fn n(&self, calls: usize) -> usize {
        let scaled = (calls as f64 * self.scale) as usize;
        (scaled / 32).max(1) * 32
    }
}

/// Warms up, then measures, one (target, callers) scenario.
async fn scenario(
    label: &str,
    target: &Target,
    callers: usize,
    calls: usize,
    warmup: usize,
) -> Row {
    drive(target, callers, warmup).await;
    let stats = drive(target, callers, calls).await;
    Row::new(label, callers, stats)
}

async fn run_mode(plan: &Plan, mode: &str, durability: Durability, rows: &mut Vec<Row>) {
    let mut bench = open_bench(durability);
    let target = Target::Gateway(Arc::clone(&bench.gateway), READ_TOOL);
    measure(plan, mode, &mut bench, &target, rows).await;
}

/// One caller, then 32, on `bench` (fewer calls for one durable caller: each waits for an
/// fsync); then the log is checked to hold one record per call.
async fn measure(plan: &Plan, mode: &str, bench: &mut Bench, target: &Target, rows: &mut Vec<Row>) {
    let (n1, w1) = match bench.audit.durability() {
        Durability::Buffered => (plan.n(20_000), plan.n(2_000)),
        Durability::Durable => (plan.n(5_000), plan.n(500)),
    };
    rows.push(scenario(mode, target, 1, n1, w1).await);
    let (n32, w32) = (plan.n(100_000), plan.n(5_000));
    rows.push(scenario(mode, target, 32, n32, w32).await);
    bench.calls = (n1 + w1 + n32 + w32) as u64;
    check_log(bench, mode, 1).await;
}

/// The caller of the policy modes: an access token's worth of claims.
fn bench_identity() -> Identity {
    Identity {
        issuer: "https://idp.example".to_owned(),
        subject: "svc-checkout-bot".to_owned(),
        claims: json!({
            "iss": "https://idp.example", "sub": "svc-checkout-bot", "aud": "toolgate",
            "exp": 1_900_000_000, "email": "checkout-bot@example.com",
            "groups": ["engineers", "checkout", "oncall"], "scope": "tools:call tools:list"
        }),
    }
}

/// `buffered` with an authenticated caller and `policy` in force.
async fn run_policy(plan: &Plan, mode: &str, policy: PolicyConfig, rows: &mut Vec<Row>) {
    let mut bench = open_bench_with(Durability::Buffered, policy);
    let identity = Arc::new(bench_identity());
    let target = Target::GatewayAs(Arc::clone(&bench.gateway), READ_TOOL, identity);
    measure(plan, mode, &mut bench, &target, rows).await;
}

/// The rules alone, without the pipeline's noise: `PolicyRules::first_match` on the bench's
/// call (echo, its arguments, the identity's claims), timed call by call on one thread.
fn rules_alone(plan: &Plan) {
    let args = echo_args();
    let identity = bench_identity();
    let input = PolicyInput {
        tool: READ_TOOL,
        target: toolgate_gateway::TargetKind::Tool,
        args: &args,
        claims: Some(&identity.claims),
        principal: "local",
        role: "default",
        risk: Risk::Read,
        source: "builtin",
        issuer: &identity.issuer,
        subject: &identity.subject,
        paths: None,
    };
    for (label, config) in [
        ("0 rules", PolicyConfig::default()),
        ("50, none match", rules::fifty(false)),
        ("50, the last matches", rules::fifty(true)),
    ] {
        let rules = PolicyRules::compile(&config).expect("compile the bench rules");
        let n = plan.n(100_000);
        let mut lat = Vec::with_capacity(n);
        let start = Instant::now();
        for _ in 0..n {
            let t = Instant::now();
            let m = std::hint::black_box(rules.first_match(std::hint::black_box(input)));
            lat.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
            drop(m);
        }
        let stats = Stats::new(lat, start.elapsed(), 0);
        println!(
            "rules alone, {label:<21} p50 {:>6.2} µs   p90 {:>6.2} µs   p99 {:>6.2} µs",
            stats.percentile_us(50.0),
            stats.percentile_us(90.0),
            stats.percentile_us(99.0),
        );
    }
}

async fn run_write(plan: &Plan, rows: &mut Vec<Row>) {
    let mut bench = open_bench(Durability::Durable);
    let target = Target::Gateway(Arc::clone(&bench.gateway), WRITE_TOOL);
    let (n, w) = (plan.n(50_000), plan.n(2_000));
    rows.push(scenario("durable write", &target, 32, n, w).await);
    bench.calls = (n + w) as u64;
    check_log(&bench, "durable write", 2).await;
}

/// Flushes, verifies the chain against the index, and checks one record per audited event.
async fn check_log(bench: &Bench, mode: &str, records_per_call: u64) {
    let t = Instant::now();
    bench.audit.flush().await.expect("flush the audit log");
    let flushed = t.elapsed();
    let t = Instant::now();
    let report = verify(&bench.jsonl, Some(&bench.db)).expect("verify the audit log");
    let expected = bench.calls * records_per_call;
    println!(
        "check {mode:<14} verify ok={} records={} expected={expected} (flush {:.1} ms, verify {:.0} ms)",
        report.ok(),
        report.records,
        flushed.as_secs_f64() * 1e3,
        t.elapsed().as_secs_f64() * 1e3,
    );
    assert!(
        report.ok(),
        "audit log of {mode} does not verify: {report:?}"
    );
    assert_eq!(report.records, expected, "records in the {mode} log");
}

fn main() {
    let plan = Plan::from_env();
    machine::print_header(&data_root(), plan.scale);
    if plan.runs_named("rules") {
        rules_alone(&plan);
        println!();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("build the tokio runtime");
    let rows = runtime.block_on(async {
        let mut rows = Vec::new();
        if plan.runs("direct") {
            let direct = Target::Direct(echo_tool(READ_TOOL, Risk::Read));
            rows.push(scenario("direct", &direct, 1, plan.n(20_000), plan.n(2_000)).await);
            rows.push(scenario("direct", &direct, 32, plan.n(100_000), plan.n(5_000)).await);
        }
        if plan.runs("buffered") {
            run_mode(&plan, "buffered", Durability::Buffered, &mut rows).await;
        }
        if plan.runs("durable") {
            run_mode(&plan, "durable", Durability::Durable, &mut rows).await;
        }
        if plan.runs("write") {
            run_write(&plan, &mut rows).await;
        }
        if plan.runs_named("policy0") {
            run_policy(&plan, "policy0", PolicyConfig::default(), &mut rows).await;
        }
        if plan.runs_named("policy50") {
            run_policy(&plan, "policy50", rules::fifty(false), &mut rows).await;
        }
        if plan.runs_named("policy50late") {
            run_policy(&plan, "policy50late", rules::fifty(true), &mut rows).await;
        }
        // Last: the SDK stays installed for the rest of the process.
        match (
            plan.runs_named("otel_metrics"),
            plan.runs_named("otel_traces"),
        ) {
            (true, true) => panic!("otel_metrics and otel_traces need a process each"),
            (true, false) => otel::run(&plan, "otel_metrics", &mut rows).await,
            (false, true) => otel::run(&plan, "otel_traces", &mut rows).await,
            (false, false) => {}
        }
        rows
    });
    stats::print_table(&rows);
}
