//! Offloaded results: storing, paging without splitting characters, hostile ids.

use toolgate_store::StoreError;
use toolgate_store::results::{ResultPage, ResultRetention, ResultStore};

use crate::suite::backends::Backend;

async fn round_trip_in_one_page(b: Backend) {
    let store = b.results().await;
    let id = store.put("call-1", "hello world").await.unwrap();
    assert!(id.starts_with("res_") && id.len() == 20, "{id}");
    assert_eq!(
        store.read(&id, 0, 1000).await.unwrap(),
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
        store.read(&id, 6, 3).await.unwrap(),
        ResultPage {
            id: id.clone(),
            offset: 6,
            total_bytes: 11,
            text: "wor".into(),
            next_offset: Some(9),
            eof: false,
        }
    );
    assert_ne!(store.put("call-1", "hello world").await.unwrap(), id);
}

async fn offset_at_or_past_the_end_is_an_empty_last_page(b: Backend) {
    let store = b.results().await;
    let id = store.put("call-1", "abc").await.unwrap();
    for offset in [3, 4, u64::MAX] {
        assert_eq!(
            store.read(&id, offset, 10).await.unwrap(),
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

async fn paging_multibyte_text_yields_every_byte_once_in_order(b: Backend) {
    let store = b.results().await;
    let text = "aé漢🦀b".repeat(7) + "é";
    let id = store.put("call-1", &text).await.unwrap();
    for limit in [0, 1, 2, 3, 4, 5, 7, 64] {
        let mut pages = Vec::new();
        let mut offset = 0;
        loop {
            let page = store.read(&id, offset, limit).await.unwrap();
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

async fn an_offset_inside_a_character_snaps_forward(b: Backend) {
    let store = b.results().await;
    let id = store.put("call-1", "漢字").await.unwrap();
    assert_eq!(
        store.read(&id, 1, 1).await.unwrap(),
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

async fn malformed_and_unknown_ids_are_not_found(b: Backend) {
    let store = b.results().await;
    let real = store.put("call-1", "secret").await.unwrap();
    if let Some(dir) = b.dir() {
        std::fs::write(dir.join("x"), "outside").unwrap();
    }
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
            matches!(store.read(&id, 0, 10).await, Err(StoreError::NotFound(_))),
            "{id:?}"
        );
    }
}

#[cfg(unix)]
#[tokio::test]
async fn directory_and_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = ResultStore::open(&dir.path().join("results")).unwrap();
    let id = store.put("call-1", "x").await.unwrap();
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

/// The result files in the store's directory, by id.
fn stored_ids(dir: &std::path::Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".txt").map(str::to_owned)
        })
        .collect();
    ids.sort();
    ids
}

/// Sets a result's modification time `secs_ago` seconds in the past, so the order of
/// eviction does not depend on the file system's timestamp resolution.
fn age(dir: &std::path::Path, id: &str, secs_ago: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(dir.join(format!("{id}.txt")))
        .unwrap();
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
    file.set_modified(when).unwrap();
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

/// Offloaded results used to grow without bound (a server could fill the disk ~15 MB per
/// call). The oldest go first once a limit is passed; the newest is always kept.
#[tokio::test]
async fn retention_evicts_the_oldest_by_count_bytes_and_age() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    let retention = ResultRetention {
        max_total_bytes: 100,
        max_count: 3,
        max_age: std::time::Duration::from_secs(3600),
    };
    let store = ResultStore::open(&dir).unwrap().with_retention(retention);
    assert_eq!(store.retention(), retention);

    // Count: the fourth result evicts the oldest.
    let mut ids: Vec<String> = Vec::new();
    for i in 0..4 {
        let id = store.put(&format!("call-{i}"), "0123456789").await.unwrap();
        age(&dir, &id, 100 - i);
        ids.push(id);
    }
    assert_eq!(stored_ids(&dir), sorted(ids[1..].to_vec()));
    let err = store.read(&ids[0], 0, 10).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound(m) if m.contains("evicted by the result retention limits")
            && m.contains("100 bytes, 3 results, 3600 seconds")),
        "{err}"
    );

    // Bytes: 60 more (90 in 4 results) evicts one for the count; 60 more again (140) evicts
    // the oldest until what is left fits in 100 bytes: only the newest.
    let big = "x".repeat(60);
    let a = store.put("call-a", &big).await.unwrap();
    age(&dir, &a, 50);
    assert_eq!(
        stored_ids(&dir),
        sorted(vec![ids[2].clone(), ids[3].clone(), a.clone()])
    );
    let b = store.put("call-b", &big).await.unwrap();
    age(&dir, &b, 40);
    assert_eq!(stored_ids(&dir), vec![b.clone()]);
    assert_eq!(store.read(&b, 0, 100).await.unwrap().text, big);

    // Age: anything older than max_age goes, whatever the other limits say.
    age(&dir, &b, 7200);
    let c = store.put("call-c", "new").await.unwrap();
    assert_eq!(stored_ids(&dir), vec![c]);

    // One result larger than the whole store is refused, and nothing is evicted for it.
    let before = stored_ids(&dir);
    let err = store.put("call-huge", &"y".repeat(101)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("it is 101 bytes; the result store keeps at most 100 bytes"),
        "{err}"
    );
    assert_eq!(stored_ids(&dir), before);
}

#[test]
fn default_retention_is_bounded() {
    let r = ResultRetention::default();
    assert_eq!(
        (r.max_total_bytes, r.max_count, r.max_age.as_secs()),
        (256 << 20, 1000, 7 * 24 * 3600)
    );
    let dir = tempfile::tempdir().unwrap();
    let store = ResultStore::open(&dir.path().join("results")).unwrap();
    assert_eq!(store.retention(), r);
}

/// Retention by count and total size, on either backend (age is the files' test above).
async fn retention_keeps_the_newest_within_count_and_bytes(b: Backend) {
    let count = b.results().await.with_retention(ResultRetention {
        max_total_bytes: 1 << 20,
        max_count: 2,
        max_age: std::time::Duration::ZERO,
    });
    let mut ids = Vec::new();
    for n in 0..4 {
        ids.push(count.put("c", &format!("result {n}")).await.unwrap());
        // Distinct times: the order is by age.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let kept = |store: ResultStore, ids: Vec<String>| async move {
        let mut kept = Vec::new();
        for id in ids {
            if store.read(&id, 0, 100).await.is_ok() {
                kept.push(id);
            }
        }
        kept
    };
    assert_eq!(kept(count.clone(), ids.clone()).await, ids[2..].to_vec());
    let bytes = b.results().await.with_retention(ResultRetention {
        max_total_bytes: 25,
        max_count: 0,
        max_age: std::time::Duration::ZERO,
    });
    let big = bytes.put("c", &"x".repeat(20)).await.unwrap();
    // Over the total with everything kept so far: the oldest go, the new one stays.
    assert!(matches!(
        bytes.read(&ids[3], 0, 10).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(bytes.read(&big, 0, 10).await.is_ok());
    assert!(matches!(
        bytes.put("c", &"y".repeat(26)).await,
        Err(StoreError::Io { .. })
    ));
}

on_both_backends!(
    round_trip_in_one_page,
    offset_at_or_past_the_end_is_an_empty_last_page,
    paging_multibyte_text_yields_every_byte_once_in_order,
    an_offset_inside_a_character_snaps_forward,
    malformed_and_unknown_ids_are_not_found,
    retention_keeps_the_newest_within_count_and_bytes,
);
