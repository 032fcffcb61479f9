//! A unified line diff (`diff -u` style, 3 lines of context), to show an operator how a
//! pinned tool definition changed. The common head and tail are trimmed, the middle is
//! matched by longest common subsequence; past [`MAX_CELLS`] the middle is shown as replaced
//! whole (still a correct diff, only not a minimal one).

use std::fmt::Write as _;

const CONTEXT: usize = 3;
/// Largest LCS table (lines × lines) computed; definitions are far smaller.
const MAX_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// `--- old_label`, `+++ new_label`, then the hunks turning `old` into `new`.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = ops(&a, &b);
    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    let changes: Vec<usize> = (0..ops.len())
        .filter(|&i| !matches!(ops[i], Op::Same(..)))
        .collect();
    let mut k = 0;
    while k < changes.len() {
        let start = changes[k].saturating_sub(CONTEXT);
        let mut last = changes[k];
        while k + 1 < changes.len() && changes[k + 1] - last <= 2 * CONTEXT {
            k += 1;
            last = changes[k];
        }
        let end = (last + CONTEXT + 1).min(ops.len());
        write_hunk(&mut out, &ops[start..end], &ops[..start], &a, &b);
        k += 1;
    }
    out
}

fn write_hunk(out: &mut String, hunk: &[Op], before: &[Op], a: &[&str], b: &[&str]) {
    let a_before = before
        .iter()
        .filter(|o| !matches!(o, Op::Insert(_)))
        .count();
    let b_before = before
        .iter()
        .filter(|o| !matches!(o, Op::Delete(_)))
        .count();
    let a_len = hunk.iter().filter(|o| !matches!(o, Op::Insert(_))).count();
    let b_len = hunk.iter().filter(|o| !matches!(o, Op::Delete(_))).count();
    let start = |before: usize, len: usize| if len == 0 { before } else { before + 1 };
    let _ = writeln!(
        out,
        "@@ -{},{a_len} +{},{b_len} @@",
        start(a_before, a_len),
        start(b_before, b_len)
    );
    for op in hunk {
        let _ = match *op {
            Op::Same(i, _) => writeln!(out, " {}", a[i]),
            Op::Delete(i) => writeln!(out, "-{}", a[i]),
            Op::Insert(j) => writeln!(out, "+{}", b[j]),
        };
    }
}

fn ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut ops: Vec<Op> = (0..head).map(|i| Op::Same(i, i)).collect();
    let cells = (a_mid.len() + 1).saturating_mul(b_mid.len() + 1);
    if cells <= MAX_CELLS {
        ops.extend(lcs_ops(a_mid, b_mid).into_iter().map(|op| match op {
            Op::Same(i, j) => Op::Same(i + head, j + head),
            Op::Delete(i) => Op::Delete(i + head),
            Op::Insert(j) => Op::Insert(j + head),
        }));
    } else {
        ops.extend((0..a_mid.len()).map(|i| Op::Delete(i + head)));
        ops.extend((0..b_mid.len()).map(|j| Op::Insert(j + head)));
    }
    let (a_tail, b_tail) = (a.len() - tail, b.len() - tail);
    ops.extend((0..tail).map(|k| Op::Same(a_tail + k, b_tail + k)));
    ops
}

/// Edit script from a longest-common-subsequence table; deletions before insertions.
fn lcs_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    // len[i][j] = LCS length of a[i..] and b[j..].
    let mut len = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            len[at(i, j)] = if a[i] == b[j] {
                len[at(i + 1, j + 1)] + 1
            } else {
                len[at(i + 1, j)].max(len[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || len[at(i + 1, j)] >= len[at(i, j + 1)]) {
            ops.push(Op::Delete(i));
            i += 1;
        } else {
            ops.push(Op::Insert(j));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_texts_have_no_hunks() {
        assert_eq!(
            unified("a\nb\n", "a\nb\n", "old", "new"),
            "--- old\n+++ new\n"
        );
    }

    #[test]
    fn a_changed_line_has_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
        assert_eq!(
            unified(old, new, "a", "b"),
            "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn distant_changes_make_separate_hunks_and_near_ones_merge() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let mut new: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        new[1] = "two".into();
        new.remove(4);
        new.insert(17, "new".into());
        let new = new.join("\n") + "\n";
        assert_eq!(
            unified(&old, &new, "a", "b"),
            "--- a\n+++ b\n\
             @@ -1,8 +1,7 @@\n 1\n-2\n+two\n 3\n 4\n-5\n 6\n 7\n 8\n\
             @@ -16,5 +15,6 @@\n 16\n 17\n 18\n+new\n 19\n 20\n"
        );
    }

    #[test]
    fn insertion_into_an_empty_text() {
        assert_eq!(
            unified("", "x\ny\n", "a", "b"),
            "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n"
        );
    }
}
