//! The vector cache: one SQLite file mapping (model id, tool-definition key) to a vector, so
//! a restart embeds only tools whose definition changed. The key is [`crate::ToolDoc::key`]
//! (the pinned definition hash plus source and tags); the model id keeps vectors of two
//! models apart.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, params};

use crate::error::RagError;

/// A vector cache file (WAL, safe to share between processes).
pub struct VectorCache {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl std::fmt::Debug for VectorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorCache")
            .field("path", &self.path)
            .finish()
    }
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl VectorCache {
    /// Opens or creates the cache at `path` (its directory must exist).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, RagError> {
        let path = path.as_ref().to_path_buf();
        let err = |e: rusqlite::Error| RagError::Cache {
            path: path.clone(),
            message: e.to_string(),
        };
        #[expect(
            clippy::disallowed_methods,
            reason = "the embedding cache is derived data rebuilt at will, not toolgate's state"
        )]
        let conn = Connection::open(&path).map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS rag_vectors (
                model TEXT NOT NULL,
                key TEXT NOT NULL,
                vec BLOB NOT NULL,
                PRIMARY KEY (model, key)
            ) WITHOUT ROWID;",
        )
        .map_err(err)?;
        Ok(VectorCache {
            conn: Mutex::new(conn),
            path,
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> RagError {
        RagError::Cache {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// The cached vectors among `keys` for `model`.
    pub fn get_many(
        &self,
        model: &str,
        keys: &[&str],
    ) -> Result<HashMap<String, Vec<f32>>, RagError> {
        let conn = self.conn.lock().map_err(|e| self.err(e))?;
        let mut stmt = conn
            .prepare_cached("SELECT vec FROM rag_vectors WHERE model = ?1 AND key = ?2")
            .map_err(|e| self.err(e))?;
        let mut out = HashMap::new();
        for &key in keys {
            let mut rows = stmt.query(params![model, key]).map_err(|e| self.err(e))?;
            if let Some(row) = rows.next().map_err(|e| self.err(e))? {
                let blob: Vec<u8> = row.get(0).map_err(|e| self.err(e))?;
                out.insert(key.to_owned(), from_blob(&blob));
            }
        }
        Ok(out)
    }

    /// Stores `vectors` for `model` in one transaction.
    pub fn put_many(&self, model: &str, vectors: &[(&str, &[f32])]) -> Result<(), RagError> {
        let mut conn = self.conn.lock().map_err(|e| self.err(e))?;
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO rag_vectors (model, key, vec) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| self.err(e))?;
            for (key, v) in vectors {
                stmt.execute(params![model, key, to_blob(v)])
                    .map_err(|e| self.err(e))?;
            }
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// How many vectors are cached for `model`.
    pub fn count(&self, model: &str) -> Result<usize, RagError> {
        let conn = self.conn.lock().map_err(|e| self.err(e))?;
        conn.query_row(
            "SELECT COUNT(*) FROM rag_vectors WHERE model = ?1",
            params![model],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| usize::try_from(n).unwrap_or(0))
        .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_by_model_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.db");
        let c = VectorCache::open(&path).unwrap();
        c.put_many("m1", &[("a", &[1.0, -2.5]), ("b", &[0.5, 0.25])])
            .unwrap();
        drop(c);
        let c = VectorCache::open(&path).unwrap();
        let got = c.get_many("m1", &["a", "zzz"]).unwrap();
        assert_eq!(got, HashMap::from([("a".to_owned(), vec![1.0, -2.5])]));
        assert!(c.get_many("m2", &["a"]).unwrap().is_empty());
        assert_eq!(c.count("m1").unwrap(), 2);
    }
}
