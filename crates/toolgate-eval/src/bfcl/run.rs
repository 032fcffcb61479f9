//! Scoring a model on BFCL: [`run_model`] asks a [`ModelClient`] every entry (one request
//! per entry, the functions as tools, no tool execution — BFCL judges the first answer),
//! [`score`] checks decoded outputs however they were obtained (a model run or an outputs
//! file), and [`Report`] sums them up per category with the failures listed, and with the
//! tokens each answer used and, given a [`Price`], what the run cost ([`super::cost`]).

use std::collections::{BTreeMap, HashMap};

use futures_util::StreamExt as _;
use serde::Serialize;
use toolgate_agent::{Message, ModelClient, ModelRequest, ToolChoice};

use super::category::Category;
use super::checker::{CheckOptions, check};
use super::cost::{CostFigures, Price, Tokens};
use super::data::Case;
use super::output::{Call, parse_output};
use super::prompt::tool_specs;
use super::value::PyValue;
use super::verdict::{ErrorKind, Failure, Verdict};

/// What a model (or an outputs file) produced for one entry.
#[derive(Debug, Clone)]
pub enum Produced {
    /// The decoded calls (possibly none).
    Calls(Vec<Call>),
    /// The answer could not be decoded into calls (arguments that are not JSON, a wrong
    /// shape); the message says why.
    Undecodable(String),
    /// The model could not be asked (a transport or API error).
    ModelError(String),
}

/// What was produced for one entry and the tokens the answer used (`None`: not reported,
/// or an outputs file without them).
#[derive(Debug, Clone)]
pub struct Answer {
    pub produced: Produced,
    pub tokens: Option<Tokens>,
}

impl From<Produced> for Answer {
    fn from(produced: Produced) -> Self {
        Answer {
            produced,
            tokens: None,
        }
    }
}

/// One judged entry.
#[derive(Debug, Clone, Serialize)]
pub struct EntryResult {
    /// The category.
    pub category: Category,
    /// The entry id.
    pub id: String,
    /// The decoded output, `[{"fn": {...}}]` (absent when there was none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<PyValue>,
    /// `None` when the output passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The tokens the answer used, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

/// Settings of a model run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Sampling temperature (BFCL uses 0.001).
    pub temperature: Option<f32>,
    /// Output token cap per request.
    pub max_tokens: Option<u32>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            concurrency: 4,
            temperature: Some(0.001),
            max_tokens: None,
        }
    }
}

/// The request for one entry: its system messages as the system prompt, its user (and
/// assistant) messages, its functions as tools, tool choice `auto`.
pub fn request_for(case: &Case, options: &RunOptions) -> ModelRequest {
    let mut system = Vec::new();
    let mut messages = Vec::new();
    for m in case.entry.question.iter().flatten() {
        match m.role.as_str() {
            "system" => system.push(m.content.clone()),
            _ => messages.push(Message::user(m.content.clone())),
        }
    }
    ModelRequest {
        system: (!system.is_empty()).then(|| system.join("\n")),
        messages,
        tools: tool_specs(&case.entry, case.category.language()),
        tool_choice: ToolChoice::Auto,
        parallel_tool_calls: None,
        max_tokens: options.max_tokens,
        temperature: options.temperature,
        trace: None,
    }
}

/// Asks the model every case, `options.concurrency` at a time; results in case order, each
/// with the tokens the provider reported (none for a request that failed).
pub async fn run_model(
    client: &dyn ModelClient,
    cases: &[Case],
    options: &RunOptions,
) -> Vec<Answer> {
    let mut out: Vec<(usize, Answer)> = futures_util::stream::iter(cases.iter().enumerate())
        .map(|(i, case)| async move {
            let request = request_for(case, options);
            let answer = match client.complete(&request).await {
                Ok(response) => Answer {
                    produced: decode_calls(
                        response
                            .turn
                            .tool_calls
                            .iter()
                            .map(|c| (c.name.as_str(), c.arguments.as_str())),
                    ),
                    tokens: Some(Tokens {
                        input_tokens: response.usage.input_tokens,
                        output_tokens: response.usage.output_tokens,
                    }),
                },
                Err(e) => Produced::ModelError(e.to_string()).into(),
            };
            (i, answer)
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect()
        .await;
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, p)| p).collect()
}

/// Tool calls as a model API returns them (name, JSON arguments text) → decoded calls.
pub fn decode_calls<'a>(calls: impl Iterator<Item = (&'a str, &'a str)>) -> Produced {
    let mut out = Vec::new();
    for (name, arguments) in calls {
        match Call::from_json_arguments(name, arguments) {
            Ok(c) => out.push(c),
            Err(e) => return Produced::Undecodable(e.to_string()),
        }
    }
    Produced::Calls(out)
}

/// A line of an outputs file that is not `{"id": …, "output": …}`.
#[derive(Debug, thiserror::Error)]
#[error("expected {{\"id\": …, \"output\": [{{\"function\": {{\"param\": value}}}}]}}: {0}")]
pub struct OutputLineError(serde_json::Error);

/// Reads one line of an outputs file: `{"id": …, "output": [{"fn": {…}}]}` (`result` is
/// accepted for `output`), with the answer's `usage: {input_tokens, output_tokens}` when the
/// line kept it (`--save` does).
pub fn parse_output_line(line: &str) -> Result<(String, Answer), OutputLineError> {
    #[derive(serde::Deserialize)]
    struct Line {
        id: String,
        #[serde(alias = "result")]
        output: PyValue,
        #[serde(default)]
        usage: Option<Tokens>,
    }
    let l: Line = serde_json::from_str(line).map_err(OutputLineError)?;
    let produced = match &l.output {
        PyValue::Str(text) => Produced::Undecodable(format!(
            "the output is text, not decoded calls: {}",
            text.chars().take(80).collect::<String>()
        )),
        other => match parse_output(other) {
            Ok(calls) => Produced::Calls(calls),
            Err(f) => Produced::Undecodable(f.message),
        },
    };
    Ok((
        l.id,
        Answer {
            produced,
            tokens: l.usage,
        },
    ))
}

/// Judges one produced output. Names sent to the model had dots replaced, so expected names
/// are compared in that form (BFCL's `underscore_to_dot`) unless `options` says otherwise.
pub fn judge(case: &Case, answer: &Answer, options: CheckOptions) -> EntryResult {
    let kind = case.category.check_kind();
    let (output, verdict): (Option<PyValue>, Verdict) = match &answer.produced {
        Produced::Calls(calls) => (
            Some(PyValue::List(calls.iter().map(Call::to_py).collect())),
            check(
                case.category,
                &case.entry.functions,
                calls,
                case.answer.as_deref(),
                options,
            ),
        ),
        // Undecodable output is "no call" to the relevance checks, as in BFCL.
        Produced::Undecodable(why) => (
            None,
            match kind {
                super::category::CheckKind::Irrelevance => Ok(()),
                super::category::CheckKind::Relevance => {
                    Err(Failure::new(ErrorKind::RelevanceNoCall, why.clone()))
                }
                _ => Err(Failure::new(ErrorKind::DecoderFailed, why.clone())),
            },
        ),
        Produced::ModelError(why) => (None, Err(Failure::new(ErrorKind::ModelError, why.clone()))),
    };
    EntryResult {
        category: case.category,
        id: case.entry.id.clone(),
        output,
        failure: verdict.err(),
        tokens: answer.tokens,
    }
}

/// Judges the answers of the cases they are given for; cases without one are counted as
/// missing.
pub fn score(cases: &[Case], produced: &HashMap<String, Answer>, options: CheckOptions) -> Report {
    let mut report = Report::default();
    for case in cases {
        match produced.get(&case.entry.id) {
            Some(p) => report.add(judge(case, p, options)),
            None => report.missing(case.category),
        }
    }
    report
}

/// Accuracy of one category and its failures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CategoryScore {
    /// Entries judged.
    pub total: usize,
    /// Entries that passed.
    pub passed: usize,
    /// `passed / total` (0 when nothing was judged).
    pub accuracy: f64,
    /// Entries of the category without an output (outputs file runs).
    pub missing: usize,
    /// Failures by error kind.
    pub by_kind: BTreeMap<String, usize>,
    /// Entries whose answer reported its tokens (in JSON: under `cost`).
    #[serde(skip)]
    pub metered: usize,
    /// The tokens of those answers, summed (in JSON: under `cost`).
    #[serde(skip)]
    pub tokens: Tokens,
    /// The failed entries.
    pub failures: Vec<EntryResult>,
}

/// Scores per category, in category order, and overall.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Per category.
    pub categories: BTreeMap<Category, CategoryScore>,
    /// The model's price, when `[model.prices]` has it: the cost columns use it.
    #[serde(skip)]
    pub price: Option<Price>,
}

impl Report {
    /// Adds one judged entry.
    pub fn add(&mut self, result: EntryResult) {
        let s = self.categories.entry(result.category).or_default();
        s.total += 1;
        if let Some(tokens) = result.tokens {
            s.metered += 1;
            s.tokens.add(tokens);
        }
        match &result.failure {
            None => s.passed += 1,
            Some(f) => {
                *s.by_kind.entry(f.kind.as_str().to_owned()).or_default() += 1;
                s.failures.push(result);
            }
        }
        s.accuracy = s.passed as f64 / s.total as f64;
    }

    fn missing(&mut self, category: Category) {
        self.categories.entry(category).or_default().missing += 1;
    }

    /// `(passed, total)` over every category.
    pub fn overall(&self) -> (usize, usize) {
        self.categories
            .values()
            .fold((0, 0), |(p, t), s| (p + s.passed, t + s.total))
    }

    /// `(metered, tokens)` over every category.
    pub fn overall_tokens(&self) -> (usize, Tokens) {
        self.categories
            .values()
            .fold((0, Tokens::default()), |(m, mut t), s| {
                t.add(s.tokens);
                (m + s.metered, t)
            })
    }

    /// The cost columns of one category.
    pub fn cost(&self, s: &CategoryScore) -> CostFigures {
        CostFigures::of(s.passed, s.total, s.metered, s.tokens, self.price)
    }

    /// The cost columns of the whole run.
    pub fn overall_cost(&self) -> CostFigures {
        let (passed, total) = self.overall();
        let (metered, tokens) = self.overall_tokens();
        CostFigures::of(passed, total, metered, tokens, self.price)
    }

    /// The report as JSON: per category, then `overall`; each with its `cost` figures when
    /// any answer reported tokens.
    pub fn to_json(&self) -> serde_json::Value {
        let (passed, total) = self.overall();
        let with_cost = |mut row: serde_json::Value, cost: CostFigures| {
            if cost.metered > 0
                && let Some(obj) = row.as_object_mut()
            {
                obj.insert(
                    "cost".to_owned(),
                    serde_json::to_value(cost).unwrap_or_default(),
                );
            }
            row
        };
        let categories: serde_json::Map<String, serde_json::Value> = self
            .categories
            .iter()
            .map(|(c, s)| {
                let row = serde_json::to_value(s).unwrap_or_default();
                (c.name().to_owned(), with_cost(row, self.cost(s)))
            })
            .collect();
        let overall = serde_json::json!({
            "total": total,
            "passed": passed,
            "accuracy": if total == 0 { 0.0 } else { passed as f64 / total as f64 },
        });
        serde_json::json!({
            "categories": categories,
            "overall": with_cost(overall, self.overall_cost()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lines_decode_or_say_why() {
        let (id, p) = parse_output_line(r#"{"id": "x_1", "output": [{"f": {"a": 1}}]}"#).unwrap();
        assert_eq!(id, "x_1");
        assert!(matches!(p.produced, Produced::Calls(c) if c[0].name == "f"));
        let (_, p) = parse_output_line(r#"{"id": "x_1", "result": "[f(a=1)]"}"#).unwrap();
        assert!(matches!(p.produced, Produced::Undecodable(m) if m.contains("text")));
        let err = parse_output_line("{\"id\": 1}").unwrap_err().to_string();
        assert!(err.starts_with("expected {\"id\": …, \"output\""), "{err}");
        assert!(matches!(
            decode_calls([("f", "{oops")].into_iter()),
            Produced::Undecodable(_)
        ));
    }

    #[test]
    fn saved_usage_is_read_back() {
        let (_, a) = parse_output_line(
            r#"{"id": "x", "output": [], "usage": {"input_tokens": 7, "output_tokens": 2}}"#,
        )
        .unwrap();
        assert_eq!(
            a.tokens,
            Some(Tokens {
                input_tokens: 7,
                output_tokens: 2
            })
        );
    }

    fn entry(category: Category, passed: bool, tokens: Option<(u64, u64)>) -> EntryResult {
        EntryResult {
            category,
            id: "e".to_owned(),
            output: None,
            failure: (!passed).then(|| Failure::new(ErrorKind::ModelError, "x".to_owned())),
            tokens: tokens.map(|(input_tokens, output_tokens)| Tokens {
                input_tokens,
                output_tokens,
            }),
        }
    }

    #[test]
    fn the_json_report_carries_cost_per_category_and_overall() {
        let mut report = Report {
            price: Some(Price {
                input_usd_per_mtok: 2.0,
                output_usd_per_mtok: 8.0,
            }),
            ..Report::default()
        };
        report.add(entry(Category::SimplePython, true, Some((1000, 40))));
        report.add(entry(Category::SimplePython, false, Some((2000, 60))));
        report.add(entry(Category::Irrelevance, false, None));
        let json = report.to_json();
        assert_eq!(
            json["categories"]["simple_python"]["cost"],
            serde_json::json!({
                "metered": 2, "input_tokens": 3000, "output_tokens": 100,
                "tokens_per_solved": 3100.0, "cost_usd": 0.0068,
                "pass_at_1_per_usd": 0.5 / 0.0068,
            })
        );
        assert_eq!(json["categories"]["irrelevance"].get("cost"), None);
        assert_eq!(
            json["overall"]["cost"],
            serde_json::json!({
                "metered": 2, "input_tokens": 3000, "output_tokens": 100,
                "tokens_per_solved": 3100.0, "cost_usd": 0.0068,
                "pass_at_1_per_usd": (1.0 / 3.0) / 0.0068,
            })
        );
    }
}
