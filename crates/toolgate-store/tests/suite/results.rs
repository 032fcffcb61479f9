//! Offloaded results: storing, paging without splitting characters, hostile ids.

use toolgate_store::StoreError;
use toolgate_store::results::{ResultPage, ResultStore};

fn store() -> (tempfile::TempDir, ResultStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = ResultStore::open(&dir.path().join("results")).unwrap();
    (dir, store)
}

#[test]
fn round_trip_in_one_page() {
    let (_dir, store) = store();
    let id = store.put("call-1", "hello world").unwrap();
    assert!(id.starts_with("res_") && id.len() == 20, "{id}");
    assert_eq!(
        store.read(&id, 0, 1000).unwrap(),
        ResultPage {
            id: id.clone(),
            offset: 0,
            total_bytes: 11,
            text: "hello world".into(),
            next_offset: None,
            eof: true,
        }
    );
    assert_eq!(
        store.read(&id, 6, 3).unwrap(),
        ResultPage {
            id: id.clone(),
            offset: 6,
            total_bytes: 11,
            text: "wor".into(),
            next_offset: Some(9),
            eof: false,
        }
    );
    assert_ne!(store.put("call-1", "hello world").unwrap(), id);
}

#[test]
fn offset_at_or_past_the_end_is_an_empty_last_page() {
    let (_dir, store) = store();
    let id = store.put("call-1", "abc").unwrap();
    for offset in [3, 4, u64::MAX] {
        assert_eq!(
            store.read(&id, offset, 10).unwrap(),
            ResultPage {
                id: id.clone(),
                offset: 3,
                total_bytes: 3,
                text: String::new(),
                next_offset: None,
                eof: true,
            }
        );
    }
}

#[test]
fn paging_multibyte_text_yields_every_byte_once_in_order() {
    let (_dir, store) = store();
    let text = "aé漢🦀b".repeat(7) + "é";
    let id = store.put("call-1", &text).unwrap();
    for limit in [0, 1, 2, 3, 4, 5, 7, 64] {
        let mut pages = Vec::new();
        let mut offset = 0;
        loop {
            let page = store.read(&id, offset, limit).unwrap();
            assert_eq!(page.offset, offset, "limit {limit}");
            assert!(
                !page.text.is_empty(),
                "limit {limit}: every page makes progress"
            );
            pages.push(page.text.clone());
            match page.next_offset {
                Some(next) => offset = next,
                None => break,
            }
        }
        assert_eq!(pages.concat(), text, "limit {limit}");
    }
}

#[test]
fn an_offset_inside_a_character_snaps_forward() {
    let (_dir, store) = store();
    let id = store.put("call-1", "漢字").unwrap();
    assert_eq!(
        store.read(&id, 1, 1).unwrap(),
        ResultPage {
            id,
            offset: 3,
            total_bytes: 6,
            text: "字".into(),
            next_offset: None,
            eof: true,
        }
    );
}

#[test]
fn malformed_and_unknown_ids_are_not_found() {
    let (dir, store) = store();
    let real = store.put("call-1", "secret").unwrap();
    std::fs::write(dir.path().join("x"), "outside").unwrap();
    let hostile = [
        "../x".to_string(),
        "res_../../etc".into(),
        "res_../../../etc/passwd".into(),
        "res_0123456789abcdef/../x".into(),
        "res_0123456789ABCDEF".into(),
        "res_0123456789abcde".into(),
        format!("{real}.txt"),
        format!("{real}\0"),
        String::new(),
        "res_0123456789abcdef".into(),
    ];
    for id in hostile {
        assert!(
            matches!(store.read(&id, 0, 10), Err(StoreError::NotFound(_))),
            "{id:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn directory_and_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, store) = store();
    let id = store.put("call-1", "x").unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let results = dir.path().join("results");
    assert_eq!(mode(&results), 0o700);
    assert_eq!(mode(&results.join(format!("{id}.txt"))), 0o600);
    let names: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec![format!("{id}.txt")]);
}
