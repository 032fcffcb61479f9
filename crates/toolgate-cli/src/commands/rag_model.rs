//! `toolgate rag model pull [REPO] [--revision R]`: the embedding model into the cache,
//! verified (`toolgate_rag::hub`). Per file one line on stdout (size, SHA-256, how it was
//! checked, what was done), then where the model is and whether `[rag]` uses it. A progress
//! line goes to stderr only when stderr is a terminal; restarts are noted on stderr always.
//! Exit status 0 when every file is in place and verified, 1 otherwise (the error names the
//! file and both hashes on a mismatch).

#![allow(clippy::print_stderr)]

use std::io::{IsTerminal, Write};

use anyhow::Context;
use toolgate_app::Config;
use toolgate_app::rag::{EmbeddingSource, embedding_source};
use toolgate_rag::hub::{
    DEFAULT_REPO, DEFAULT_REVISION, FileStatus, ModelCache, ModelRef, PullEvent, PullRequest,
    Trust, endpoint_from_env, pull,
};

use crate::cli::{ModelCommand, PullArgs, RagCommand};
use crate::output;

pub async fn run(settings: &Config, cmd: RagCommand) -> anyhow::Result<i32> {
    match cmd {
        RagCommand::Model(ModelCommand::Pull(args)) => pull_model(settings, args).await,
    }
}

async fn pull_model(settings: &Config, args: PullArgs) -> anyhow::Result<i32> {
    let repo = args.repo.as_deref().unwrap_or(DEFAULT_REPO);
    let revision = args.revision.as_deref().unwrap_or(if repo == DEFAULT_REPO {
        DEFAULT_REVISION
    } else {
        "main"
    });
    let model = ModelRef::new(repo, revision)?;
    let req = PullRequest {
        endpoint: endpoint_from_env()?,
        cache: ModelCache::from_env()?,
        egress: settings.file.egress.clone(),
        model,
    };
    output::line(&format!(
        "pulling {} from {} into {}",
        req.model,
        req.endpoint.origin().ascii_serialization(),
        req.cache.root().display()
    ));
    let mut progress = Progress::new(std::io::stderr().is_terminal());
    let result = pull(&req, &mut |e| progress.show(&e)).await;
    progress.end_line();
    let report = result.with_context(|| format!("pulling {}", req.model))?;
    let how = match report.trust {
        Trust::Pinned => "verified (pinned)",
        Trust::Recorded => "verified (recorded)",
        Trust::FirstUse => "recorded (first use)",
    };
    let rows: Vec<Vec<String>> = report
        .files
        .iter()
        .map(|f| {
            vec![
                f.file.clone(),
                f.size.to_string(),
                f.sha256.clone(),
                how.to_owned(),
                match f.status {
                    FileStatus::Present => "already in the cache".to_owned(),
                    FileStatus::Downloaded => "downloaded".to_owned(),
                    FileStatus::Resumed { from } => format!("resumed at byte {from}"),
                },
            ]
        })
        .collect();
    output::table(&["FILE", "BYTES", "SHA-256", "CHECK", "DONE"], &rows);
    match report.trust {
        Trust::Pinned => output::line(&format!(
            "every file matches the SHA-256 pinned in toolgate's source for {}",
            req.model
        )),
        Trust::Recorded => output::line(&format!(
            "every file matches the SHA-256 recorded on the first pull in {}",
            report.manifest.display()
        )),
        Trust::FirstUse => output::line(&format!(
            "trust on first use: toolgate's source pins no hashes for {}; the SHA-256s above \
             are recorded in {} and a later pull of this revision must match them",
            req.model,
            report.manifest.display()
        )),
    }
    output::line(&format!("model at {}", report.dir.display()));
    let cfg = &settings.file.rag;
    let source = embedding_source(settings, cfg);
    output::line(&match source {
        EmbeddingSource::Pulled(dir) if dir == report.dir => {
            "Tool RAG uses it: retrieval is hybrid (BM25 + dense) with no configuration (`toolgate doctor` shows it)".to_owned()
        }
        EmbeddingSource::ModelDir(dir) => format!(
            "note: [rag] model_dir ({}) is set and takes precedence; remove it to use this model",
            dir.display()
        ),
        EmbeddingSource::Endpoint { url, .. } => format!(
            "note: [rag.endpoint] ({url}) is set and takes precedence; remove it to use this model"
        ),
        _ => format!(
            "to use it, set [rag] model_dir = {:?} in toolgate.toml",
            report.dir.display().to_string()
        ),
    });
    Ok(0)
}

/// The progress line on a terminal: `FILE  12.3 / 86.7 MiB  14%`, redrawn in place at most
/// once per percent. Restarts are noted whether or not stderr is a terminal.
struct Progress {
    terminal: bool,
    open: bool,
    last: Option<(String, u64)>,
}

impl Progress {
    fn new(terminal: bool) -> Self {
        Progress {
            terminal,
            open: false,
            last: None,
        }
    }

    fn show(&mut self, event: &PullEvent) {
        match event {
            PullEvent::Restarted { file, reason } => {
                self.end_line();
                eprintln!("note: {file}: {reason}");
            }
            PullEvent::Started { file, from, .. } if *from > 0 => {
                self.end_line();
                eprintln!("note: {file}: resuming at byte {from}");
            }
            PullEvent::Started { .. } => {}
            PullEvent::Progress {
                file,
                received,
                total,
            } if self.terminal => {
                let mib = |n: u64| n as f64 / 1_048_576.0;
                let (text, step) = match total {
                    Some(t) if *t > 0 => (
                        format!(
                            "{file}  {:.1} / {:.1} MiB  {}%",
                            mib(*received),
                            mib(*t),
                            received * 100 / t
                        ),
                        received * 100 / t,
                    ),
                    _ => (format!("{file}  {:.1} MiB", mib(*received)), received >> 20),
                };
                let key = (file.clone(), step);
                if self.last.as_ref() != Some(&key) {
                    self.last = Some(key);
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r\x1b[2K{text}");
                    let _ = err.flush();
                    self.open = true;
                }
            }
            PullEvent::Progress { .. } => {}
        }
    }

    fn end_line(&mut self) {
        if self.open {
            eprintln!();
            self.open = false;
        }
    }
}
