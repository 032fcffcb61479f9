use toolgate_eval::bfcl::{BfclData, Category, CheckKind};

pub fn data() -> BfclData {
    BfclData::locate(None).expect(
        "the BFCL data must be installed for these tests (scripts/test.sh installs bfcl-eval \
         into .venv)",
    )
}

#[test]
fn every_category_loads_with_its_ground_truth() {
    let data = data();
    let expected = [
        (Category::SimplePython, 400),
        (Category::SimpleJava, 100),
        (Category::SimpleJavascript, 50),
        (Category::Multiple, 200),
        (Category::Parallel, 200),
        (Category::ParallelMultiple, 200),
        (Category::Irrelevance, 240),
        (Category::LiveSimple, 258),
        (Category::LiveMultiple, 1053),
        (Category::LiveParallel, 16),
        (Category::LiveParallelMultiple, 24),
        (Category::LiveIrrelevance, 884),
        (Category::LiveRelevance, 16),
    ];
    for (category, count) in expected {
        let cases = data.load(category).unwrap();
        assert_eq!(cases.len(), count, "{category}");
        for case in &cases {
            assert!(
                case.entry.id.starts_with(category.name()),
                "{}",
                case.entry.id
            );
            if category.has_answers() {
                assert!(!case.entry.functions.is_empty(), "{}", case.entry.id);
            }
            assert!(!case.entry.user_text().is_empty(), "{}", case.entry.id);
            match category.check_kind() {
                CheckKind::Irrelevance | CheckKind::Relevance => assert!(case.answer.is_none()),
                _ => assert!(
                    !case.answer.as_ref().unwrap().is_empty(),
                    "{}",
                    case.entry.id
                ),
            }
        }
    }
}
