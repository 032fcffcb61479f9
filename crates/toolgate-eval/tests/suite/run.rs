//! Scoring outputs (model runs against the fake model server are tested end to end in
//! toolgate-cli's suite/eval.rs, which has the `fake` feature).

use std::collections::HashMap;

use toolgate_eval::bfcl::run::{parse_output_line, score};
use toolgate_eval::bfcl::{Category, CheckOptions};

use super::data::data;

#[test]
fn outputs_files_are_scored_and_missing_entries_counted() {
    let cases = data().load(Category::SimplePython).unwrap();
    let lines = [
        r#"{"id": "simple_python_0", "output": [{"calculate_triangle_area": {"base": 10, "height": 5}}]}"#,
        r#"{"id": "simple_python_1", "output": [{"math.factorial": {"number": 5}}]}"#,
        r#"{"id": "simple_python_2", "output": []}"#,
    ];
    let produced: HashMap<_, _> = lines
        .iter()
        .map(|l| parse_output_line(l).unwrap())
        .collect();
    let report = score(&cases, &produced, CheckOptions::default());
    let s = &report.categories[&Category::SimplePython];
    assert_eq!((s.total, s.passed, s.missing), (3, 2, 397));
    let json = report.to_json();
    assert_eq!(json["overall"]["total"], 3);
    assert_eq!(
        json["categories"]["simple_python"]["by_kind"]["simple_function_checker:wrong_count"],
        1
    );
}
