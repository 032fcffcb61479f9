//! [`MemoryBuckets`]: the buckets of one process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use async_trait::async_trait;

use super::{Admission, QuotaBuckets, Rate, gcra};
use crate::{StoreError, StoreResult};

/// Buckets in this process's memory, timed by its monotonic clock.
#[derive(Debug)]
pub struct MemoryBuckets {
    origin: Instant,
    tats: Mutex<HashMap<String, u64>>,
}

impl Default for MemoryBuckets {
    fn default() -> Self {
        MemoryBuckets {
            origin: Instant::now(),
            tats: Mutex::new(HashMap::new()),
        }
    }
}

#[async_trait]
impl QuotaBuckets for MemoryBuckets {
    async fn take(&self, key: &str, rate: Rate) -> StoreResult<Admission> {
        let now = u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX);
        let mut tats = self
            .tats
            .lock()
            .map_err(|_| StoreError::Conflict("the quota buckets' lock is poisoned".into()))?;
        let tat = tats.get(key).copied().unwrap_or(0);
        Ok(match gcra(tat, now, rate) {
            Ok(next) => {
                tats.insert(key.to_owned(), next);
                Admission::Admitted
            }
            Err(wait) => Admission::Refused {
                retry_after_us: wait,
            },
        })
    }
}
