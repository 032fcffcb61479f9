//! CEL's `matches` with the rules' regexes compiled once, when the rules are.
//!
//! The CEL crate's own `matches` (its `regex` feature, off here) compiles the pattern on
//! every evaluation, tens of microseconds per call for a guard like `rm\s+-rf|mkfs`. Here a
//! pattern written as a literal is compiled with its rule — so an invalid regex is a
//! configuration error naming the rule and the position — and evaluation only runs it. A
//! pattern computed at run time (`args.a.matches(args.b)`) is compiled when it is used, and
//! an invalid one is an evaluation error (which fails closed).

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue};
use cel::extractors::This;
use cel::{Context, ExecutionError, Program};
use regex::Regex;

/// The literal patterns of every rule's `matches` calls, compiled.
#[derive(Debug, Default)]
pub(crate) struct Patterns(HashMap<String, Regex>);

impl Patterns {
    /// Compiles the literal patterns of `program`; the error says where the bad one is.
    pub(crate) fn add(&mut self, program: &Program) -> Result<(), String> {
        let mut found = Vec::new();
        literal_patterns(program.expression(), &mut found);
        for (id, pattern) in found {
            if self.0.contains_key(pattern) {
                continue;
            }
            let re = Regex::new(pattern).map_err(|e| {
                let (line, column) = position(program, id);
                let why = e.to_string();
                let why = why.lines().last().unwrap_or_default();
                format!("line {line}, column {column}: invalid regex {pattern:?}: {why}")
            })?;
            self.0.insert(pattern.to_owned(), re);
        }
        Ok(())
    }

    /// Makes `matches` (as a method and as a function) available in `ctx`.
    pub(crate) fn install(self: &Arc<Self>, ctx: &mut Context<'_, '_>) {
        let patterns = Arc::clone(self);
        // Cannot fail: the environment declares no `matches` of its own (the crate's
        // `regex` feature is off).
        let _ = ctx.add_function(
            "matches",
            move |This(text): This<Arc<String>>, pattern: Arc<String>| {
                patterns.is_match(&text, &pattern)
            },
        );
    }

    fn is_match(&self, text: &str, pattern: &str) -> Result<bool, ExecutionError> {
        match self.0.get(pattern) {
            Some(re) => Ok(re.is_match(text)),
            None => Regex::new(pattern)
                .map(|re| re.is_match(text))
                .map_err(|e| {
                    ExecutionError::function_error(
                        "matches",
                        format!("{pattern:?} is not a valid regex: {e}"),
                    )
                }),
        }
    }
}

/// `(expression id, pattern)` of every `matches` call whose pattern is a string literal.
fn literal_patterns<'e>(expr: &'e IdedExpr, out: &mut Vec<(u64, &'e str)>) {
    if let Expr::Call(call) = &expr.expr
        && call.func_name == "matches"
    {
        let pattern = if call.target.is_some() {
            call.args.first()
        } else {
            call.args.get(1)
        };
        if let Some(IdedExpr {
            id,
            expr: Expr::Literal(LiteralValue::String(s)),
        }) = pattern
        {
            out.push((*id, s.inner()));
        }
    }
    for child in children(expr) {
        literal_patterns(child, out);
    }
}

/// The direct subexpressions of `expr`.
fn children(expr: &IdedExpr) -> Vec<&IdedExpr> {
    match &expr.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(call.args.iter())
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(m) => entries(&m.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Select(select) => vec![&select.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

fn entries(entries: &[IdedEntryExpr]) -> Vec<&IdedExpr> {
    entries
        .iter()
        .flat_map(|e| match &e.expr {
            EntryExpr::StructField(f) => vec![&f.value],
            EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
        })
        .collect()
}

/// Line and column (from 1) of expression `id` in the condition.
fn position(program: &Program, id: u64) -> (usize, usize) {
    let info = program.source_info();
    let start = info.offset_for(id).map_or(0, |(start, _)| start as usize);
    let before: String = info.source.chars().take(start).collect();
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
