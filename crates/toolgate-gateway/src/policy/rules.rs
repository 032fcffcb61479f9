//! `[[policy.rules]]`: allow / ask / deny by a condition over what a call does, written in
//! CEL (the Common Expression Language of Kubernetes and agentgateway), e.g.
//! `tool == "shell" && args.command.matches("rm\\s+-rf")`.
//!
//! Invariants:
//! - Rules compile when the configuration is loaded; a syntax error or an unknown variable
//!   names the rule (and the line and column), so a bad rule never reaches a call.
//! - Rules are evaluated in order; the first whose condition holds decides the call.
//! - Evaluation fails closed: a condition that errors (a missing key, a type mismatch, a
//!   result that is not a bool) counts as true for a `deny` or `ask` rule and as false for an
//!   `allow` rule, so a broken rule can only make a call harder, never easier.
//! - With no rules nothing is evaluated and nothing is converted; a rule whose guard settles
//!   it (`tool == "shell" && …` for another tool, `has(args.path) && …` without `path`) is
//!   decided without the interpreter, with the verdict the interpreter would give
//!   ([`super::guard`] argues why).

use std::sync::Arc;

use cel::{Context, Env, Program, Value};
use serde::{Deserialize, Serialize};
use toolgate_protocol::Risk;

use super::guard::Guard;
use super::patterns::Patterns;
use super::role::{Decision, DecisionName};
use super::vars::{CallVars, PolicyInput, VARIABLES, unknown_identifiers};

/// `[policy]` in toolgate.toml.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// Evaluated in order; the first that matches decides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<PolicyRuleConfig>,
}

/// One `[[policy.rules]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRuleConfig {
    /// Unique, non-empty; recorded in the audit and in a denial's details.
    pub id: String,
    /// A CEL expression that evaluates to a bool.
    pub when: String,
    pub decision: DecisionName,
    /// For `ask`: require the typed confirmation (default: only for dangerous tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<bool>,
    /// A sentence for the caller when the rule denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A rule that does not compile: `[[policy.rules]] "ID": MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[policy.rules]] {rule}: {message}")]
pub struct PolicyRuleError {
    /// The rule's id, quoted, or its number when the id is the problem.
    pub rule: String,
    pub message: String,
}

/// A compiled rule.
#[derive(Debug)]
pub struct PolicyRule {
    config: PolicyRuleConfig,
    program: Program,
    /// What Rust can tell about the condition before evaluating it.
    guard: Option<Guard>,
}

/// What one rule's condition said about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    True,
    False,
    /// The condition could not be evaluated (or was not a bool); see the module invariants.
    Failed(String),
}

/// The rule that decided a call.
#[derive(Debug, Clone)]
pub struct RuleMatch<'r> {
    /// Index among the rules, from 0.
    pub index: usize,
    pub rule: &'r PolicyRule,
    /// Set when the rule decided by failing closed: why its condition failed.
    pub error: Option<String>,
}

impl PolicyRule {
    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// The condition as written.
    pub fn when(&self) -> &str {
        &self.config.when
    }

    pub fn reason(&self) -> Option<&str> {
        self.config.reason.as_deref()
    }

    pub fn decision_name(&self) -> DecisionName {
        self.config.decision
    }

    /// The rule's decision for a call of `risk`.
    pub fn decision(&self, risk: Risk) -> Decision {
        match self.config.decision {
            DecisionName::Allow => Decision::Allow,
            DecisionName::Deny => Decision::Deny,
            DecisionName::Ask => Decision::Ask {
                confirm: self.config.confirm.unwrap_or(risk == Risk::Dangerous),
            },
        }
    }

    /// The verdict when the guard settles it, without evaluating.
    pub(super) fn known_verdict(&self, input: &PolicyInput<'_>) -> Option<Verdict> {
        match self.guard.as_ref()?.value(input)? {
            true => Some(Verdict::True),
            false => Some(Verdict::False),
        }
    }

    /// The verdict of evaluating the condition with CEL.
    fn evaluate(&self, ctx: &Context<'_, '_>) -> Verdict {
        match self.program.execute(ctx) {
            Ok(Value::Bool(true)) => Verdict::True,
            Ok(Value::Bool(false)) => Verdict::False,
            Ok(other) => Verdict::Failed(format!(
                "the condition is a {}, not a bool",
                other.type_of()
            )),
            Err(e) => Verdict::Failed(e.to_string()),
        }
    }

    /// Whether `verdict` makes this rule decide: true decides, and a failure decides for a
    /// `deny` or `ask` rule (fail closed).
    pub fn decides(&self, verdict: &Verdict) -> bool {
        match verdict {
            Verdict::True => true,
            Verdict::False => false,
            Verdict::Failed(_) => self.config.decision != DecisionName::Allow,
        }
    }
}

/// All compiled rules, in order, with the CEL environment they run in.
pub struct PolicyRules {
    rules: Vec<PolicyRule>,
    env: Arc<Env>,
    patterns: Arc<Patterns>,
    /// Whether any rule calls `matches` (only then is it installed in the context).
    uses_matches: bool,
    /// Whether any rule reads `facts`, decided when the rules compile.
    reads_facts: bool,
}

impl std::fmt::Debug for PolicyRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.rules.iter().map(PolicyRule::id))
            .finish()
    }
}

impl Default for PolicyRules {
    fn default() -> Self {
        PolicyRules {
            rules: Vec::new(),
            env: Arc::new(Env::stdlib()),
            patterns: Arc::default(),
            uses_matches: false,
            reads_facts: false,
        }
    }
}

impl PolicyRules {
    /// Compiles every rule; the first bad one is the error.
    pub fn compile(config: &PolicyConfig) -> Result<Self, PolicyRuleError> {
        let mut out = PolicyRules::default();
        let mut patterns = Patterns::default();
        for (i, rule) in config.rules.iter().enumerate() {
            let compiled = compile_rule(&out.env, i, rule)?;
            patterns
                .add(&compiled.program)
                .map_err(|message| PolicyRuleError {
                    rule: format!("{:?}", rule.id),
                    message,
                })?;
            if out.rules.iter().any(|r| r.id() == rule.id) {
                return Err(PolicyRuleError {
                    rule: format!("{:?}", rule.id),
                    message: format!("the id is already used by an earlier rule (rule {})", i + 1),
                });
            }
            out.uses_matches |= compiled.program.references().has_function("matches");
            out.reads_facts |= compiled.program.references().has_variable("facts");
            out.rules.push(compiled);
        }
        out.patterns = Arc::new(patterns);
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether any rule reads `facts` (only then does a call resolve its paths for them).
    pub fn reads_facts(&self) -> bool {
        self.reads_facts
    }

    pub fn rules(&self) -> &[PolicyRule] {
        &self.rules
    }

    /// The first rule that decides the call described by `input`, if any.
    pub fn first_match(&self, input: PolicyInput<'_>) -> Option<RuleMatch<'_>> {
        if self.rules.is_empty() {
            return None;
        }
        self.each_verdict(input, |index, rule, verdict| {
            if !rule.decides(&verdict) {
                return None;
            }
            let error = match verdict {
                Verdict::Failed(e) => Some(e),
                Verdict::True | Verdict::False => None,
            };
            Some(RuleMatch { index, rule, error })
        })
    }

    /// Every rule's verdict on the call, in order (`toolgate policy test` shows them).
    pub fn verdicts(&self, input: PolicyInput<'_>) -> Vec<Verdict> {
        let mut all = Vec::with_capacity(self.rules.len());
        self.each_verdict(input, |_, _, verdict| {
            all.push(verdict);
            None::<()>
        });
        all
    }

    /// Evaluates the rules in order against one set of variables until `f` returns `Some`.
    /// The CEL context is built when the first rule needs the interpreter, so a call every
    /// rule's guard settles costs no allocation.
    fn each_verdict<'r, T>(
        &'r self,
        input: PolicyInput<'_>,
        mut f: impl FnMut(usize, &'r PolicyRule, Verdict) -> Option<T>,
    ) -> Option<T> {
        let vars = CallVars::new(input);
        let mut ctx = None;
        for (i, rule) in self.rules.iter().enumerate() {
            let verdict = match rule.known_verdict(&input) {
                Some(verdict) => verdict,
                None => rule.evaluate(ctx.get_or_insert_with(|| self.context(&vars))),
            };
            if let Some(out) = f(i, rule, verdict) {
                return Some(out);
            }
        }
        None
    }

    fn context<'p, 'v>(&self, vars: &'v CallVars<'_>) -> Context<'p, 'v> {
        let mut ctx = Context::with_env(Arc::clone(&self.env));
        ctx.set_variable_resolver(vars);
        if self.uses_matches {
            self.patterns.install(&mut ctx);
        }
        ctx
    }

    /// Every rule's verdict from the interpreter alone, no guard consulted: what
    /// [`PolicyRules::verdicts`] must equal.
    #[cfg(test)]
    pub(crate) fn evaluated_verdicts(&self, input: PolicyInput<'_>) -> Vec<Verdict> {
        let vars = CallVars::new(input);
        let ctx = self.context(&vars);
        self.rules.iter().map(|r| r.evaluate(&ctx)).collect()
    }
}

fn compile_rule(
    env: &Env,
    index: usize,
    config: &PolicyRuleConfig,
) -> Result<PolicyRule, PolicyRuleError> {
    if config.id.trim().is_empty() {
        return Err(PolicyRuleError {
            rule: format!("number {}", index + 1),
            message: "`id` must not be empty".to_owned(),
        });
    }
    let err = |message: String| PolicyRuleError {
        rule: format!("{:?}", config.id),
        message,
    };
    let program = env.compile(&config.when).map_err(|errors| {
        let first = errors.errors.first();
        err(first.map_or_else(
            || "the condition does not parse".to_owned(),
            |e| format!("line {}, column {}: {}", e.pos.0, e.pos.1, e.msg),
        ))
    })?;
    let unknown = unknown_identifiers(program.expression());
    if let Some(name) = unknown.first() {
        return Err(err(format!(
            "unknown variable `{name}` (a condition may read {})",
            VARIABLES.join(", ")
        )));
    }
    Ok(PolicyRule {
        config: config.clone(),
        guard: Guard::of_condition(program.expression()),
        program,
    })
}
