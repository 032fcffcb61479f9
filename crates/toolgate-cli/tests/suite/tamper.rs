//! Tamper detection through `toolgate audit verify`: ten real calls, then each kind of
//! tampering applied to its own copy of the data dir. Every tampered copy exits 4 and names
//! the first bad line; the untouched copy exits 0.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::harness::{Env, Run, audit_lines, copy_dir};

/// A copy of a data dir is not the log the head anchor names.
const NO_ANCHOR: &str = "note: no head anchor for this log (a copy, or never opened keyed): \
                         records cut from its end cannot be detected";

const PREV: &str =
    "prev does not match the previous record (record deleted, inserted or reordered)";

/// Ten calls, ten records (reads write only an outcome record).
fn ten_calls() -> Env {
    let env = Env::new();
    for i in 0..10 {
        env.write(&format!("f{i}.txt"), format!("{i}\n"));
        env.call("read_file", &json!({"path": format!("f{i}.txt")}))
            .assert_code(0);
    }
    env
}

/// What is done to the ten-line log (line 5 is the middle record).
#[derive(Debug, Clone, Copy)]
enum Tamper {
    /// One character of line 5's arguments changed.
    EditChar,
    DeleteLine,
    /// Line 5 appears twice (an insertion).
    DuplicateLine,
    /// Lines 4 and 5 change places.
    SwapLines,
    /// The last record cut in half, without its newline.
    TearLast,
    /// The last record removed whole.
    CutLast,
}

impl Tamper {
    /// Rewrites `lines`; returns whether the file still ends with a newline.
    fn apply(self, lines: &mut Vec<String>) -> bool {
        match self {
            Tamper::EditChar => {
                assert!(lines[4].contains("\"f4.txt\""));
                lines[4] = lines[4].replacen("\"f4.txt\"", "\"f9.txt\"", 1);
            }
            Tamper::DeleteLine => {
                lines.remove(4);
            }
            Tamper::DuplicateLine => {
                let dup = lines[4].clone();
                lines.insert(5, dup);
            }
            Tamper::SwapLines => lines.swap(3, 4),
            Tamper::TearLast => {
                let last = lines.pop().expect("a last line");
                lines.push(last[..last.len() / 2].to_owned());
                return false;
            }
            Tamper::CutLast => {
                lines.pop();
            }
        }
        true
    }
}

fn hash(line: &str) -> String {
    let v: Value = serde_json::from_str(line).expect("record");
    v["hash"].as_str().expect("hash").to_owned()
}

/// A copy of the data dir whose audit lines `edit` rewrites (`None`: no trailing newline).
fn tampered(env: &Env, name: &str, edit: impl FnOnce(&mut Vec<String>) -> bool) -> PathBuf {
    let copy = env.root().join(name);
    copy_dir(&env.data, &copy);
    let log = copy.join("logs").join("tool-audit.jsonl");
    let mut lines = audit_lines(&log);
    let newline_at_end = edit(&mut lines);
    let mut text = lines.join("\n");
    if newline_at_end {
        text.push('\n');
    }
    std::fs::write(&log, text).expect("write tampered log");
    copy
}

fn verify(env: &Env, data: &Path, json: bool) -> Run {
    let mut args = vec!["audit", "verify"];
    if json {
        args.push("--json");
    }
    let out = env
        .command_for(data)
        .args(&args)
        .output()
        .expect("spawn toolgate");
    Run::from_output(out)
}

fn bad(records: u64, head: &str, line: u64, seq: Option<u64>, reason: &str) -> Value {
    json!({"ok": false, "records": records, "head": head,
           "first_bad": {"line": line, "seq": seq, "reason": reason},
           "keyed": true, "unkeyed": 0, "anchored": null, "evidence": []})
}

#[test]
fn every_kind_of_tampering_is_detected_and_named() {
    let env = ten_calls();
    let lines = audit_lines(&env.audit_path());
    assert_eq!(lines.len(), 10);
    let h: Vec<String> = lines.iter().map(|l| hash(l)).collect();

    let untouched = tampered(&env, "untouched", |_| true);
    let run = verify(&env, &untouched, false);
    run.assert_code(0);
    assert_eq!(
        run.stdout,
        format!("ok: 10 records, chain intact, head {}\n{NO_ANCHOR}\n", h[9])
    );
    let run = verify(&env, &untouched, true);
    run.assert_code(0);
    assert_eq!(
        run.json(),
        json!({"ok": true, "records": 10, "head": h[9], "first_bad": null,
               "keyed": true, "unkeyed": 0, "anchored": null, "evidence": []})
    );

    let cases = [
        (
            Tamper::EditChar,
            bad(4, &h[3], 5, Some(5), "hash mismatch (record edited)"),
        ),
        (Tamper::DeleteLine, bad(4, &h[3], 5, Some(6), PREV)),
        (Tamper::DuplicateLine, bad(5, &h[4], 6, Some(5), PREV)),
        (Tamper::SwapLines, bad(3, &h[2], 4, Some(5), PREV)),
        (
            Tamper::TearLast,
            bad(9, &h[8], 10, None, "torn record at end of file"),
        ),
        (
            Tamper::CutLast,
            bad(
                9,
                &h[8],
                10,
                Some(10),
                "the index knows records up to seq 10 but the file ends at seq 9 \
                 (records removed from the end)",
            ),
        ),
    ];
    for (tamper, expected) in cases {
        let name = format!("{tamper:?}");
        let copy = tampered(&env, &name, |lines| tamper.apply(lines));
        let run = verify(&env, &copy, true);
        run.assert_code(4);
        assert_eq!(run.json(), expected, "{name}");

        let first = &expected["first_bad"];
        let seq = first["seq"]
            .as_u64()
            .map(|s| format!(" (seq {s})"))
            .unwrap_or_default();
        let run = verify(&env, &copy, false);
        run.assert_code(4);
        assert_eq!(
            run.stdout,
            format!(
                "FAILED: {}: line {}{seq}: {} — {} records before it verified\n",
                copy.join("logs").join("tool-audit.jsonl").display(),
                first["line"],
                first["reason"].as_str().unwrap_or_default(),
                expected["records"],
            ),
            "{name}"
        );
    }
    // The original was never touched.
    verify(&env, &env.data, false).assert_code(0);
}
