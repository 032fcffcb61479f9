//! The attack of issue 12, item 1: a thread exchanges the real directory `race/` with a
//! symlink to a directory outside the workspace (`renameat2(RENAME_EXCHANGE)`) while every
//! file tool runs in a loop through `Tool::call`. The check has already passed; the tree
//! changes under the call. Nothing outside may be read, listed or written.
//!
//! Bounded by rounds, not by time: each round calls all five tools once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::{Value, json};
use toolgate_core::ToolContext;

use crate::suite::fixture::Fixture;

const ROUNDS: usize = 500;
/// A ceiling for the swapper should the tool loop never stop it.
const MAX_SWAPS: u64 = 50_000_000;
const SECRET: &str = "OUTSIDE SECRET";
const EDIT_ORIGINAL: &str = "OUTSIDE END\n";

/// Exchanges `race` and `swap` (a symlink to the outside directory) until stopped.
struct Swapper {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<u64>,
    race: PathBuf,
    swap: PathBuf,
}

impl Swapper {
    fn start(root: &Path) -> Self {
        let (race, swap) = (root.join("race"), root.join("swap"));
        let stop = Arc::new(AtomicBool::new(false));
        let handle = std::thread::spawn({
            let (stop, race, swap) = (Arc::clone(&stop), race.clone(), swap.clone());
            move || {
                let mut swaps = 0;
                while !stop.load(Ordering::Relaxed) && swaps < MAX_SWAPS {
                    renameat_with(CWD, &race, CWD, &swap, RenameFlags::EXCHANGE).unwrap();
                    swaps += 1;
                }
                swaps
            }
        });
        Swapper {
            stop,
            handle,
            race,
            swap,
        }
    }

    /// Stops swapping and leaves the real directory at `race`; returns the swap count.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let swaps = self.handle.join().unwrap();
        if self.race.symlink_metadata().unwrap().is_symlink() {
            renameat_with(CWD, &self.race, CWD, &self.swap, RenameFlags::EXCHANGE).unwrap();
        }
        swaps
    }
}

fn setup() -> Fixture {
    let fx = Fixture::new();
    fx.put("race/secret.txt", "inside\n");
    fx.put("race/edit.txt", "inside END\n");
    let outside = fx.outside();
    std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(outside.join("edit.txt"), EDIT_ORIGINAL).unwrap();
    std::fs::write(outside.join("outside-only-name.txt"), format!("{SECRET}\n")).unwrap();
    fx.symlink(&outside, "swap");
    fx
}

async fn call(fx: &Fixture, tool: &str, args: Value) -> Option<Value> {
    fx.tool(tool)
        .call(args, ToolContext::for_test())
        .await
        .ok()
        .map(|out| out.data)
}

fn mentions_outside(data: &Option<Value>) -> bool {
    data.as_ref().is_some_and(|v| {
        let text = v.to_string();
        text.contains("OUTSIDE") || text.contains("outside-only")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
#[allow(clippy::print_stderr)] // the counts, for runs with --no-capture
async fn swapping_a_parent_directory_for_a_symlink_never_leads_outside() {
    let fx = setup();
    let outside = fx.outside();
    let mut escapes: BTreeMap<&str, usize> = BTreeMap::new();
    // Calls that succeeded (the rest were refused or failed mid-swap).
    let mut answered: BTreeMap<&str, usize> = BTreeMap::new();
    let swapper = Swapper::start(fx.root());
    for round in 0..ROUNDS {
        let from = if round % 2 == 0 { "race" } else { "." };
        let calls = [
            ("read_file", json!({"path": "race/secret.txt"})),
            ("list_dir", json!({"path": from, "recursive": true})),
            ("search_files", json!({"path": from, "pattern": "OUTSIDE"})),
            (
                "search_files",
                json!({"path": from, "glob": "**/outside-only*"}),
            ),
            (
                "edit_file",
                json!({"path": "race/edit.txt", "old_string": "END", "new_string": "+END"}),
            ),
        ];
        for (tool, args) in calls {
            let data = call(&fx, tool, args).await;
            *answered.entry(tool).or_default() += usize::from(data.is_some());
            if mentions_outside(&data) {
                *escapes.entry(tool).or_default() += 1;
            }
        }
        let path = format!("race/w{round}.txt");
        let data = call(&fx, "write_file", json!({"path": path, "content": "w"})).await;
        *answered.entry("write_file").or_default() += usize::from(data.is_some());
        if std::fs::read_to_string(outside.join("edit.txt")).unwrap() != EDIT_ORIGINAL {
            *escapes.entry("edit_file (wrote outside)").or_default() += 1;
            std::fs::write(outside.join("edit.txt"), EDIT_ORIGINAL).unwrap();
        }
    }
    let swaps = swapper.stop();

    let written_outside = std::fs::read_dir(&outside)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('w')
        })
        .count();
    if written_outside > 0 {
        escapes.insert("write_file", written_outside);
    }
    if fx.get("race/edit.txt").contains("OUTSIDE") {
        escapes.insert("edit_file (read outside)", 1);
    }
    let total: usize = escapes.values().sum();
    assert_eq!(answered.len(), 5, "a tool never succeeded: {answered:?}");
    eprintln!("{swaps} swaps, {ROUNDS} rounds, escapes: {escapes:?}, answered: {answered:?}");
    assert_eq!(
        total, 0,
        "escapes over {ROUNDS} rounds ({swaps} swaps): {escapes:?}"
    );
}
