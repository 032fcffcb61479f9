//! Quota buckets: a burst admitted and then refused with the time to wait; under real
//! concurrency — many tasks, and on PostgreSQL two connections standing for two replicas —
//! exactly the burst is admitted, never more.

use std::sync::Arc;
use std::time::Duration;

use toolgate_store::quotas::{Admission, MemoryBuckets, QuotaBuckets, Rate};

use crate::suite::backends::Backend;

async fn buckets(b: &Backend) -> Arc<dyn QuotaBuckets> {
    match b {
        Backend::Sqlite(_) => Arc::new(MemoryBuckets::default()),
        Backend::Postgres(_) => b.quota_buckets().await,
    }
}

async fn a_burst_then_a_refusal_with_the_wait(b: Backend) {
    let buckets = buckets(&b).await;
    let rate = Rate::new(2, Duration::from_secs(3600), 2);
    assert_eq!(
        buckets.take("alice", rate).await.unwrap(),
        Admission::Admitted
    );
    assert_eq!(
        buckets.take("alice", rate).await.unwrap(),
        Admission::Admitted
    );
    match buckets.take("alice", rate).await.unwrap() {
        Admission::Refused { retry_after_us } => {
            // One emission (30 min) minus the moments since the burst.
            assert!(
                (1_700_000_000..=1_800_000_000).contains(&retry_after_us),
                "{retry_after_us}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        buckets.take("bob", rate).await.unwrap(),
        Admission::Admitted,
        "each key has its own bucket"
    );
    // A fast bucket refills.
    let fast = Rate::new(20, Duration::from_secs(1), 1);
    assert_eq!(buckets.take("c", fast).await.unwrap(), Admission::Admitted);
    assert!(matches!(
        buckets.take("c", fast).await.unwrap(),
        Admission::Refused { .. }
    ));
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(buckets.take("c", fast).await.unwrap(), Admission::Admitted);
}

async fn concurrent_takers_never_exceed_the_burst(b: Backend) {
    // Two handles: on PostgreSQL, two pools — two replicas on one bucket.
    let handles = [buckets(&b).await, buckets(&b).await];
    let shared = matches!(b, Backend::Postgres(_));
    let rate = Rate::new(5, Duration::from_secs(3600), 5);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let h = Arc::clone(&handles[if shared { i % 2 } else { 0 }]);
        tasks.push(tokio::spawn(async move {
            let mut admitted = 0;
            for _ in 0..10 {
                if h.take("shared-key", rate).await.unwrap() == Admission::Admitted {
                    admitted += 1;
                }
            }
            admitted
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    assert_eq!(total, 5, "80 attempts on a bucket of 5");
}

on_both_backends!(
    a_burst_then_a_refusal_with_the_wait,
    concurrent_takers_never_exceed_the_burst,
);
