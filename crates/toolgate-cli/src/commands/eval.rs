//! `toolgate eval bfcl`: scores the configured model on BFCL categories with the
//! BFCL-compatible AST checker (toolgate-eval), or scores a file of decoded outputs.
//! Prints accuracy per category — beside it the tokens the answers used and, with the model
//! in `[model.prices]`, the run's cost and pass@1 per dollar — and the failures (id, error
//! kind, why). Exit status: 0 the evaluation ran (whatever the accuracy); 1 it could not (no
//! data, no `[model]`, bad flags).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use toolgate_agent::ModelClient;
use toolgate_eval::bfcl::run::{
    Answer, Produced, Report, RunOptions, parse_output_line, run_model, score,
};
use toolgate_eval::bfcl::{BfclData, Case, Category, CheckOptions, CostFigures, Price};

use crate::cli::{BfclArgs, EvalCommand};
use crate::output;
use toolgate_app::Config;

pub async fn run(settings: &Config, cmd: EvalCommand) -> anyhow::Result<i32> {
    match cmd {
        EvalCommand::Bfcl(args) => bfcl(settings, args).await,
        EvalCommand::Retrieval(args) => {
            crate::commands::eval_retrieval::run_retrieval(settings, args)
        }
    }
}

async fn bfcl(settings: &Config, args: BfclArgs) -> anyhow::Result<i32> {
    let categories = Category::parse_list(&args.category)?;
    if args.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let data = BfclData::locate(args.data.as_deref())?;
    let mut cases: Vec<Case> = Vec::new();
    for &category in &categories {
        let mut loaded = data.load(category)?;
        if let Some(n) = args.limit {
            loaded.truncate(n);
        }
        cases.extend(loaded);
    }

    let (produced, options) = match &args.outputs {
        Some(path) => (
            read_outputs(path)?,
            CheckOptions {
                underscore_to_dot: args.underscore_names,
            },
        ),
        None => {
            let produced = ask_model(settings, &args, &cases).await?;
            (
                produced,
                CheckOptions {
                    underscore_to_dot: true,
                },
            )
        }
    };
    let mut report = score(&cases, &produced, options);
    report.price = price(settings, &args);
    if args.json {
        output::json(&report.to_json())?;
    } else {
        print_report(&report, args.show_failures);
    }
    Ok(0)
}

/// The evaluated model's price from `[model.prices]`.
fn price(settings: &Config, args: &BfclArgs) -> Option<Price> {
    let model = settings.file.model.clone();
    let name = args.model.as_deref().unwrap_or(&model.model);
    model.price_of(name).map(|p| Price {
        input_usd_per_mtok: p.input_usd_per_mtok,
        output_usd_per_mtok: p.output_usd_per_mtok,
    })
}

async fn ask_model(
    settings: &Config,
    args: &BfclArgs,
    cases: &[Case],
) -> anyhow::Result<HashMap<String, Answer>> {
    let mut model = settings.file.model.clone();
    if let Some(m) = &args.model {
        model.model.clone_from(m);
    }
    let client: Arc<dyn ModelClient> =
        toolgate_agent::connect(&model, &settings.file.egress).context("[model]")?;
    eprintln!(
        "asking {} ({}) about {} entries, {} at a time…",
        client.model(),
        client.provider(),
        cases.len(),
        args.concurrency
    );
    let options = RunOptions {
        concurrency: args.concurrency,
        max_tokens: Some(model.max_tokens),
        temperature: model.temperature.or(RunOptions::default().temperature),
    };
    let produced = run_model(client.as_ref(), cases, &options).await;
    if let Some(path) = &args.save {
        save_outputs(path, cases, &produced)?;
    }
    Ok(cases
        .iter()
        .map(|c| c.entry.id.clone())
        .zip(produced)
        .collect())
}

fn read_outputs(path: &PathBuf) -> anyhow::Result<HashMap<String, Answer>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --outputs {}", path.display()))?;
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (id, produced) = parse_output_line(line)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{}:{}", path.display(), i + 1))?;
        out.insert(id, produced);
    }
    Ok(out)
}

fn save_outputs(path: &PathBuf, cases: &[Case], answers: &[Answer]) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    for (case, a) in cases.iter().zip(answers) {
        let mut line = match &a.produced {
            Produced::Calls(calls) => {
                let output: Vec<_> = calls.iter().map(|c| c.to_py()).collect();
                serde_json::json!({"id": case.entry.id, "output": output})
            }
            Produced::Undecodable(why) | Produced::ModelError(why) => {
                serde_json::json!({"id": case.entry.id, "output": why})
            }
        };
        if let Some(tokens) = a.tokens {
            line["usage"] = serde_json::to_value(tokens)?;
        }
        writeln!(file, "{line}")?;
    }
    file.flush()?;
    Ok(())
}

fn percent(passed: usize, total: usize) -> String {
    if total == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * passed as f64 / total as f64)
    }
}

/// The cost columns of a row: tokens in, out, per solved entry; cost; pass@1 per dollar.
fn cost_cells(cost: &CostFigures) -> Vec<String> {
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    vec![
        cost.input_tokens.to_string(),
        cost.output_tokens.to_string(),
        or_dash(cost.tokens_per_solved.map(|t| format!("{t:.0}"))),
        or_dash(cost.cost_usd.map(|c| format!("${c:.4}"))),
        or_dash(cost.pass_at_1_per_usd.map(|r| format!("{r:.2}"))),
    ]
}

fn print_report(report: &Report, show: usize) {
    // The cost columns appear once any answer reported its tokens.
    let metered = report.overall_tokens().0 > 0;
    let row = |name: &str, total: usize, passed: usize, cost: CostFigures, note: String| {
        let mut cells = vec![
            name.to_owned(),
            total.to_string(),
            passed.to_string(),
            percent(passed, total),
        ];
        if metered {
            cells.extend(cost_cells(&cost));
        }
        cells.push(note);
        cells
    };
    let mut rows: Vec<Vec<String>> = report
        .categories
        .iter()
        .map(|(c, s)| {
            let note = if s.missing > 0 {
                format!("{} without output", s.missing)
            } else {
                String::new()
            };
            row(c.name(), s.total, s.passed, report.cost(s), note)
        })
        .collect();
    let (passed, total) = report.overall();
    rows.push(row(
        "overall",
        total,
        passed,
        report.overall_cost(),
        String::new(),
    ));
    let mut header = vec!["category", "total", "passed", "accuracy"];
    if metered {
        header.extend([
            "tokens in",
            "tokens out",
            "tokens/solved",
            "cost",
            "pass@1/$",
        ]);
    }
    header.push("");
    output::table(&header, &rows);
    for (category, s) in &report.categories {
        if s.failures.is_empty() {
            continue;
        }
        output::line("");
        let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        output::line(&format!(
            "failures in {category} ({}): {}",
            s.failures.len(),
            kinds.join(", ")
        ));
        let rows: Vec<Vec<String>> = s
            .failures
            .iter()
            .take(show)
            .filter_map(|f| {
                let failure = f.failure.as_ref()?;
                Some(vec![
                    f.id.clone(),
                    failure.kind.as_str().to_owned(),
                    output::short(&failure.message, 160),
                ])
            })
            .collect();
        output::table(&["id", "kind", "why"], &rows);
        if s.failures.len() > show {
            output::line(&format!(
                "… and {} more (--show-failures N, or --json)",
                s.failures.len() - show
            ));
        }
    }
}
