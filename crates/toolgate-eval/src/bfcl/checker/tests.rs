use super::*;

fn doc(json: &str) -> FunctionDoc {
    serde_json::from_str(json).unwrap()
}

fn call(json: &str) -> Vec<Call> {
    let v: PyValue = serde_json::from_str(json).unwrap();
    crate::bfcl::output::parse_output(&v).unwrap()
}

fn answer(json: &str) -> Vec<ExpectedCall> {
    let v: PyValue = serde_json::from_str(json).unwrap();
    let PyValue::List(calls) = v else { panic!() };
    calls
        .into_iter()
        .map(|c| {
            let PyValue::Dict(mut pairs) = c else {
                panic!()
            };
            let (name, params) = pairs.remove(0);
            let PyValue::Dict(params) = params else {
                panic!()
            };
            ExpectedCall {
                name,
                params: params
                    .into_iter()
                    .map(|(k, v)| match v {
                        PyValue::List(l) => (k, l),
                        _ => panic!(),
                    })
                    .collect(),
            }
        })
        .collect()
}

const AREA: &str = r#"{"name": "area", "description": "", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}, "height": {"type": "float"}, "unit": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}, "opts": {"type": "dict"}}, "required": ["base"]}}"#;
const AREA_ANSWER: &str = r#"[{"area": {"base": [10], "height": [5.0, ""], "unit": ["square meters", ""], "tags": [["A b"], ""], "opts": [{"x": [1], "y": ["", "z"]}, ""]}}]"#;

fn verdict(cat: Category, out: &str) -> Result<(), ErrorKind> {
    check(
        cat,
        &[doc(AREA)],
        &call(out),
        Some(&answer(AREA_ANSWER)),
        CheckOptions::default(),
    )
    .map_err(|f| f.kind)
}

#[test]
fn ground_truth_and_normalised_values_pass() {
    let ok = [
        r#"[{"area": {"base": 10}}]"#,
        r#"[{"area": {"base": 10, "height": 5}}]"#,
        r#"[{"area": {"base": 10, "unit": "Square-Meters"}}]"#,
        r#"[{"area": {"base": 10, "tags": ["a_B"]}}]"#,
        r#"[{"area": {"base": 10, "tags": []}}]"#,
        r#"[{"area": {"base": 10, "opts": {"x": 1}}}]"#,
        r#"[{"area": {"base": 10, "opts": {"x": 1.0, "y": "Z"}}}]"#,
    ];
    for out in ok {
        assert_eq!(verdict(Category::SimplePython, out), Ok(()), "{out}");
    }
}

#[test]
fn each_rule_has_its_error_kind() {
    let cases = [
        (r#"[]"#, ErrorKind::SimpleWrongCount),
        (r#"[{"volume": {"base": 10}}]"#, ErrorKind::WrongFuncName),
        (r#"[{"area": {"height": 5.0}}]"#, ErrorKind::MissingRequired),
        (
            r#"[{"area": {"base": 10, "depth": 1}}]"#,
            ErrorKind::UnexpectedParam,
        ),
        (r#"[{"area": {"base": 10.0}}]"#, ErrorKind::TypeSimple),
        (r#"[{"area": {"base": true}}]"#, ErrorKind::TypeSimple),
        (r#"[{"area": {"base": 11}}]"#, ErrorKind::ValueOthers),
        (
            r#"[{"area": {"base": 10, "unit": "feet"}}]"#,
            ErrorKind::ValueString,
        ),
        (
            r#"[{"area": {"base": 10, "tags": ["c"]}}]"#,
            ErrorKind::ValueList,
        ),
        // An optional list ("" accepted) skips the element type check: a value error.
        (
            r#"[{"area": {"base": 10, "tags": [1]}}]"#,
            ErrorKind::ValueList,
        ),
        (
            r#"[{"area": {"base": 10, "tags": "a"}}]"#,
            ErrorKind::TypeSimple,
        ),
        (
            r#"[{"area": {"base": 10, "opts": {"x": 2}}}]"#,
            ErrorKind::ValueDictValue,
        ),
        (
            r#"[{"area": {"base": 10, "opts": {"w": 1}}}]"#,
            ErrorKind::ValueDictKey,
        ),
        (
            r#"[{"area": {"base": 10, "opts": {}}}]"#,
            ErrorKind::ValueDictKey,
        ),
    ];
    for (out, kind) in cases {
        assert_eq!(verdict(Category::SimplePython, out), Err(kind), "{out}");
    }
}

#[test]
fn parallel_matches_in_any_order_and_multiple_picks_by_name() {
    let docs = [doc(AREA), doc(&AREA.replace("\"area\"", "\"vol\""))];
    let ans = answer(r#"[{"area": {"base": [1]}}, {"vol": {"base": [2]}}]"#);
    let run = |cat, out: &str| {
        check(cat, &docs, &call(out), Some(&ans), CheckOptions::default()).map_err(|f| f.kind)
    };
    assert_eq!(
        run(
            Category::Parallel,
            r#"[{"vol": {"base": 2}}, {"area": {"base": 1}}]"#
        ),
        Ok(())
    );
    assert_eq!(
        run(
            Category::Parallel,
            r#"[{"vol": {"base": 2}}, {"area": {"base": 2}}]"#
        ),
        Err(ErrorKind::ParallelNoMatch)
    );
    assert_eq!(
        run(Category::Parallel, r#"[{"vol": {"base": 2}}]"#),
        Err(ErrorKind::ParallelWrongCount)
    );
    let one = answer(r#"[{"vol": {"base": [2]}}]"#);
    let multiple = |out: &str| {
        check(
            Category::Multiple,
            &docs,
            &call(out),
            Some(&one),
            CheckOptions::default(),
        )
        .map_err(|f| f.kind)
    };
    assert_eq!(multiple(r#"[{"vol": {"base": 2}}]"#), Ok(()));
    assert_eq!(
        multiple(r#"[{"area": {"base": 2}}]"#),
        Err(ErrorKind::WrongFuncName)
    );
}

#[test]
fn irrelevance_passes_only_without_a_call() {
    let none = CheckOptions::default();
    assert_eq!(check(Category::Irrelevance, &[], &[], None, none), Ok(()));
    let out = call(r#"[{"area": {"base": 1}}]"#);
    assert_eq!(
        check(Category::LiveIrrelevance, &[], &out, None, none).map_err(|f| f.kind),
        Err(ErrorKind::IrrelevanceCall)
    );
    assert_eq!(
        check(Category::LiveRelevance, &[], &out, None, none),
        Ok(())
    );
}

#[test]
fn dotted_names_can_be_compared_in_underscore_form() {
    let d = doc(&AREA.replace("\"area\"", "\"math.area\""));
    let ans = answer(&AREA_ANSWER.replace("\"area\"", "\"math.area\""));
    let out = call(r#"[{"math_area": {"base": 10}}]"#);
    let opts = CheckOptions {
        underscore_to_dot: true,
    };
    assert_eq!(
        check(
            Category::SimplePython,
            std::slice::from_ref(&d),
            &out,
            Some(&ans),
            opts
        ),
        Ok(())
    );
    assert!(
        check(
            Category::SimplePython,
            &[d],
            &out,
            Some(&ans),
            CheckOptions::default()
        )
        .is_err()
    );
}
