//! THE order of the pipeline (R-EXE-1), declared once. Outermost first:
//!
//! ```text
//! telemetry    counts and times every call; with tracing on, the execute_tool span
//! audit        records the outcome of every attempt (fsynced before returning, durable mode)
//! admit        identifiers no store can hold (NUL) → invalid_arguments, recorded escaped
//! lookup       unknown_tool | unavailable | quarantined → policy_denied
//! authorize    role allowlist → forbidden
//! quota        calls per interval, calls in flight ([[quotas]]) → rate_limited
//! validate     JSON parse + size cap + JSON Schema 2020-12 → invalid_arguments
//! policy       first matching [[policy.rules]] CEL rule, else role × risk → allow | ask |
//!              deny (policy_denied); the tool's own check
//! idempotency  replay a write call already done under the same key
//! approve      grant | stored decision | new request → approval_required/denied/expired
//! intent       write/dangerous: the attempt record is fsynced before the tool runs
//! govern       oversized results → head + result_id (read_result)
//! execute      concurrency limit, timeout, cancellation, panic isolation → the tool
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toolgate_audit::{AuditLog, Durability};
use toolgate_protocol::Envelope;
use toolgate_registry::{Catalog, Entry};
use toolgate_store::StoreResult;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::quotas::{MemoryBuckets, QuotaBuckets};
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;

use crate::admit::AdmitLayer;
use crate::approve::{ApprovalDesk, ApproveLayer, Approver, Decisions, WaitMode};
use crate::audit::{AuditLayer, IntentLayer};
use crate::authorize::AuthorizeLayer;
use crate::call::{Call, CallRequest};
use crate::config::GatewayConfig;
use crate::execute::ExecuteLayer;
use crate::govern::{GovernLayer, READ_RESULT, ReadResultTool};
use crate::idempotency::IdempotencyLayer;
use crate::inflight::InFlight;
use crate::layer::{Layer, Next};
use crate::lookup::LookupLayer;
use crate::policy::{PolicyError, PolicyLayer, PolicyRules, Roles};
use crate::quota::{Quota, QuotaLayer};
use crate::telemetry::TelemetryLayer;
use crate::validate::ValidateLayer;

/// What the gateway is wired to.
#[derive(Clone)]
pub struct GatewayDeps {
    pub catalog: Arc<Catalog>,
    pub audit: Arc<AuditLog>,
    pub approvals: Arc<ApprovalStore>,
    pub results: Arc<ResultStore>,
    pub idempotency: Arc<IdempotencyStore>,
    pub redactor: Arc<Redactor>,
    /// A channel that can ask a human while the call waits (the terminal prompt).
    pub approver: Option<Arc<dyn Approver>>,
    /// Where `[[quotas]]` keep their buckets: this process's memory, or the cluster's store.
    pub quota_buckets: Arc<dyn QuotaBuckets>,
}

impl GatewayDeps {
    /// Stores in one directory, laid out like a data dir: `toolgate.db` (audit index,
    /// approvals, idempotency), `logs/tool-audit.jsonl`, `results/`. No pins, no approver,
    /// the default redactor — what tests, benchmarks and embeddings start from.
    pub fn open_dir(
        dir: &Path,
        catalog: Arc<Catalog>,
        durability: Durability,
    ) -> StoreResult<Self> {
        let db = dir.join("toolgate.db");
        let store = toolgate_store::Store::open_embedded(&db, &dir.join("results"))?;
        Ok(GatewayDeps {
            catalog,
            audit: Arc::new(AuditLog::open(
                &dir.join("logs/tool-audit.jsonl"),
                &db,
                durability,
            )?),
            approvals: Arc::new(store.approvals()),
            results: Arc::new(store.results()?),
            idempotency: Arc::new(store.idempotency()),
            redactor: Arc::new(Redactor::default()),
            approver: None,
            quota_buckets: Arc::new(MemoryBuckets::default()),
        })
    }
}

/// The one entry point for every call from every front end.
pub struct Gateway {
    layers: Vec<Arc<dyn Layer>>,
    /// `[[policy.rules]]`: whether a listing may hide what a role denies.
    rules: Arc<PolicyRules>,
    catalog: Arc<Catalog>,
    roles: Arc<Roles>,
    audit: Arc<AuditLog>,
    desk: Arc<ApprovalDesk>,
    decisions: Arc<Decisions>,
    in_flight: InFlight,
}

fn layers(
    deps: &GatewayDeps,
    cfg: &GatewayConfig,
    roles: &Arc<Roles>,
    rules: &Arc<PolicyRules>,
    quotas: Vec<Quota>,
    desk: &Arc<ApprovalDesk>,
    decisions: &Arc<Decisions>,
) -> Vec<Arc<dyn Layer>> {
    let limits = &cfg.limits;
    let mode = if cfg.approvals.wait {
        WaitMode::Wait {
            poll: Duration::from_millis(cfg.approvals.poll_millis.max(10)),
        }
    } else {
        WaitMode::Return
    };
    let mut approve = ApproveLayer::new(Arc::clone(desk), Arc::clone(decisions), mode);
    if let Some(a) = &deps.approver {
        approve = approve.with_approver(Arc::clone(a));
    }
    vec![
        Arc::new(TelemetryLayer::new(Arc::clone(&deps.redactor))),
        Arc::new(AuditLayer::new(Arc::clone(&deps.audit))),
        Arc::new(AdmitLayer::new()),
        Arc::new(LookupLayer::new(
            Arc::clone(&deps.catalog),
            Arc::clone(roles),
        )),
        Arc::new(AuthorizeLayer::new(Arc::clone(roles))),
        Arc::new(QuotaLayer::new(quotas, Arc::clone(&deps.quota_buckets))),
        Arc::new(ValidateLayer::new(limits.max_argument_bytes)),
        Arc::new(PolicyLayer::new(Arc::clone(roles), Arc::clone(rules))),
        Arc::new(IdempotencyLayer::new(
            Arc::clone(&deps.idempotency),
            Arc::clone(&deps.redactor),
        )),
        Arc::new(approve),
        Arc::new(IntentLayer::new(Arc::clone(&deps.audit))),
        Arc::new(GovernLayer::new(
            Arc::clone(&deps.results),
            limits.result_budget_bytes,
            limits.result_hard_limit_bytes,
        )),
        Arc::new(ExecuteLayer::new(
            limits.max_concurrent,
            Duration::from_secs(limits.call_timeout_secs.max(1)),
        )),
    ]
}

impl Gateway {
    /// Assembles the pipeline and registers `read_result` in the catalog.
    pub fn new(deps: GatewayDeps, cfg: &GatewayConfig) -> Result<Self, PolicyError> {
        let roles = Arc::new(Roles::compile(&cfg.roles)?);
        let rules = Arc::new(PolicyRules::compile(&cfg.policy)?);
        let quotas = crate::quota::compile_all(&cfg.quotas)?;
        if !deps.catalog.has(READ_RESULT) {
            let page = u64::try_from(cfg.limits.result_budget_bytes).unwrap_or(u64::MAX);
            // Cannot collide: checked just above, and names are validated constants.
            let _ = deps.catalog.register(Arc::new(ReadResultTool::new(
                Arc::clone(&deps.results),
                page,
            )));
        }
        let desk = Arc::new(ApprovalDesk::new(
            Arc::clone(&deps.approvals),
            Arc::clone(&deps.redactor),
            cfg.approvals.ttl(),
        ));
        let decisions = Arc::new(Decisions::new(
            Arc::clone(&deps.approvals),
            Arc::clone(&deps.audit),
        ));
        Ok(Gateway {
            layers: layers(&deps, cfg, &roles, &rules, quotas, &desk, &decisions),
            catalog: deps.catalog,
            roles,
            rules,
            audit: deps.audit,
            desk,
            decisions,
            in_flight: InFlight::default(),
        })
    }

    /// Runs one call through every layer and returns its envelope. Never panics.
    pub async fn call(&self, request: CallRequest) -> Envelope {
        let _entered = self.in_flight.enter();
        let mut call = Call::new(request);
        let outcome = Next::new(&self.layers).run(&mut call).await;
        let id = call.request.call_id.clone();
        match outcome {
            Ok(out) => Envelope::success(id, out, call.governance.take()),
            Err(e) => Envelope::failure(id, e),
        }
    }

    /// The layer names in pipeline order.
    pub fn layer_names(&self) -> Vec<&'static str> {
        self.layers.iter().map(|l| l.name()).collect()
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn roles(&self) -> &Roles {
        &self.roles
    }

    pub fn audit(&self) -> &Arc<AuditLog> {
        &self.audit
    }

    /// The calls running now ([`InFlight::idle`] waits for them to end).
    pub fn in_flight(&self) -> &InFlight {
        &self.in_flight
    }

    /// Where approval requests are opened and awaited: the approve layer's, shared with
    /// anything else that must ask a human (MCP elicitation).
    pub fn desk(&self) -> &Arc<ApprovalDesk> {
        &self.desk
    }

    /// Where every front end decides approval requests, each decision and refusal audited.
    pub fn decisions(&self) -> &Arc<Decisions> {
        &self.decisions
    }

    /// Whether `role` may see `entry` (for listings and model-facing exports): the role's
    /// allowlist names it, and a call of it would not be denied outright — the role's
    /// decision for its risk is not `deny`, unless `[[policy.rules]]` exist (a rule may allow
    /// what the role denies, depending on the call, so the tool stays listed then).
    pub fn visible_to(&self, role: &str, entry: &Entry) -> bool {
        let spec = entry.spec();
        self.roles.get(role).is_some_and(|r| {
            r.allows(&spec.name)
                && (!self.rules.is_empty()
                    || r.decide(&spec.name, spec.risk) != crate::policy::Decision::Deny)
        })
    }
}
