//! The crash test (R-EXE-5): two shell loops append to one audit log through `toolgate call`
//! (a read and a write per turn) and are killed together with SIGKILL at a pseudo-random
//! moment, round after round. Each round waits for at least one returned envelope before
//! the kill, so the test never depends on how fast the machine is.
//!
//! Afterwards: `audit verify` passes; every call whose envelope was printed in full has its
//! outcome record (in the file and through the index); every file a write created has its
//! attempt record (written and fsynced before the tool ran).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{BIN, Env, USER, call_id};

const ROUNDS: u64 = 15;
const LOOPS: [&str; 2] = ["a", "b"];

/// One turn: a read, then a write of a file named after the loop and turn.
const LOOP_SCRIPT: &str = r#"
i=0
while :; do
  i=$((i+1))
  "$TG" --role crash call read_file --args '{"path":"seed.txt"}' --no-prompt
  "$TG" --role crash call write_file --args "{\"path\":\"out/$LOOP-$i.txt\",\"content\":\"$LOOP $i\"}" --no-prompt
done
"#;

/// A small LCG (Knuth's MMIX constants), so the kill moments are the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next_in(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + (self.0 >> 33) % (hi - lo)
    }
}

/// Starts a loop; `group` 0 makes it the leader of a new process group.
fn spawn_loop(env: &Env, label: &str, group: i32, stderr: &std::fs::File) -> Child {
    use std::os::unix::process::CommandExt;
    Command::new("/bin/sh")
        .args(["-c", LOOP_SCRIPT])
        .env("TG", BIN)
        .env("LOOP", label)
        .env("TOOLGATE_WORKSPACE", &env.ws)
        .env("TOOLGATE_DATA_DIR", &env.data)
        .env("TOOLGATE_KEY_DIR", env.key_dir())
        .env_remove("TOOLGATE_CONFIG")
        .env_remove("TOOLGATE_ROLE")
        .env("USER", USER)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr.try_clone().expect("clone stderr file"))
        .process_group(group)
        .spawn()
        .expect("spawn loop")
}

/// The envelopes printed in full in `text`; a torn last one is not a returned call.
fn complete_envelopes(text: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .collect()
}

/// One round: start both loops, wait for a first returned envelope, let them run `delay`,
/// SIGKILL the group. Returns what each loop printed.
fn round(env: &Env, round: u64, delay: Duration, stderr: &std::fs::File) -> Vec<String> {
    let labels: Vec<String> = LOOPS.iter().map(|l| format!("r{round}{l}")).collect();
    let first = spawn_loop(env, &labels[0], 0, stderr);
    let pgid = i32::try_from(first.id()).expect("pid fits");
    assert!(pgid > 1, "a real process group");
    let second = spawn_loop(env, &labels[1], pgid, stderr);
    let mut children = [first, second];

    let (tx, rx) = mpsc::channel::<(usize, String)>();
    let readers: Vec<_> = children
        .iter_mut()
        .enumerate()
        .map(|(i, child)| {
            let out = child.stdout.take().expect("piped stdout");
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(out);
                let mut line = String::new();
                // Only whole lines count; a line cut by the kill has no newline.
                while reader.read_line(&mut line).unwrap_or(0) > 0 {
                    if line.ends_with('\n') && tx.send((i, line.clone())).is_err() {
                        break;
                    }
                    line.clear();
                }
            })
        })
        .collect();
    drop(tx);

    let mut printed = vec![String::new(); children.len()];
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let (i, line) = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("round {round}: no envelope returned ({e})"));
        let done = line == "}\n";
        printed[i].push_str(&line);
        if done {
            break;
        }
    }
    std::thread::sleep(delay);
    let group = rustix::process::Pid::from_raw(pgid).expect("pgid");
    rustix::process::kill_process_group(group, rustix::process::Signal::KILL)
        .expect("SIGKILL the loops");
    for child in &mut children {
        child.wait().expect("reap loop");
    }
    for reader in readers {
        reader.join().expect("reader thread");
    }
    for (i, line) in rx {
        printed[i].push_str(&line);
    }
    printed
}

#[test]
fn sigkill_at_random_moments_never_breaks_the_chain_or_loses_a_returned_call() {
    let env = Env::with_config("[roles.crash]\nwrite = \"allow\"\n");
    env.write("seed.txt", "seed\n");
    let log = env.root().join("loops.stderr");
    let stderr = std::fs::File::create(&log).expect("stderr file");
    let mut rng = Lcg(0x5eed);

    let mut returned: Vec<Value> = Vec::new();
    let mut last_per_round = Vec::new();
    for r in 0..ROUNDS {
        let delay = Duration::from_millis(rng.next_in(50, 400));
        let printed = round(&env, r, delay, &stderr);
        for text in printed {
            let envelopes = complete_envelopes(&text);
            if let Some(last) = envelopes.last() {
                last_per_round.push(call_id(last));
            }
            returned.extend(envelopes);
        }
    }
    let diagnostics = || std::fs::read_to_string(&log).unwrap_or_default();
    for e in &returned {
        assert_eq!(e["ok"], json!(true), "{e}\nloop stderr:\n{}", diagnostics());
    }

    // The chain verifies, straight after the last kill, with no recovery run in between.
    let run = env.run(&["audit", "verify", "--json"]);
    run.assert_code(0);
    let lines = super::harness::audit_lines(&env.audit_path());
    let records = env.audit_records();
    let report = run.json();
    assert_eq!(
        (
            &report["ok"],
            &report["records"],
            &report["head"],
            &report["first_bad"],
            &report["keyed"],
            &report["unkeyed"]
        ),
        (
            &json!(true),
            &json!(lines.len()),
            &json!(records.last().map(|r| r["hash"].clone())),
            &json!(null),
            &json!(true),
            &json!(0)
        ),
        "{report:#}"
    );

    // Every returned call has its outcome record in the file…
    let mut kinds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &records {
        kinds
            .entry(r["call_id"].as_str().unwrap_or_default().to_owned())
            .or_default()
            .push(r["kind"].as_str().unwrap_or_default().to_owned());
    }
    for e in &returned {
        let id = call_id(e);
        let expected = if e["data"]["bytes_written"].is_u64() {
            vec!["attempt", "outcome"]
        } else {
            vec!["outcome"]
        };
        assert_eq!(
            kinds.get(&id).cloned().unwrap_or_default(),
            expected,
            "{id}"
        );
    }
    // …and through the index, which catches up from the file.
    let indexed = env.run(&["audit", "query", "--json", "--limit", "1000000"]);
    indexed.assert_code(0);
    let indexed = indexed.json();
    assert_eq!(indexed.as_array().map(Vec::len), Some(records.len()));
    let outcomes: BTreeSet<String> = indexed
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["kind"] == "outcome" && r["outcome"] == "ok")
        .map(|r| r["call_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    for e in &returned {
        assert!(outcomes.contains(&call_id(e)), "{e} not in the index");
    }
    for id in &last_per_round {
        let q = env.run(&["audit", "query", "--call-id", id, "--json"]);
        q.assert_code(0);
        let found = q.json();
        let outcome: Vec<&Value> = found
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["kind"] == "outcome")
            .collect();
        assert_eq!(outcome.len(), 1, "{id}: {found}");
        assert_eq!(outcome[0]["outcome"], json!("ok"));
    }

    // Every file a write produced was announced by an attempt record before it was written.
    let attempted: BTreeSet<String> = records
        .iter()
        .filter(|r| r["kind"] == "attempt")
        .filter_map(|r| r["arguments"]["path"].as_str().map(str::to_owned))
        .collect();
    for entry in std::fs::read_dir(env.ws.join("out")).expect("out dir") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.starts_with('.') {
            continue; // a temp file of a write killed before its rename
        }
        assert!(
            attempted.contains(&format!("out/{name}")),
            "out/{name} has no attempt record"
        );
    }
    assert!(
        returned.len() >= ROUNDS as usize,
        "each round returned at least one call"
    );
}
