//! Each table is written once per dialect: SQLite beside its store (created by
//! `schema::create_all` when the embedded pool opens), PostgreSQL in `pg/migrations`. This
//! test keeps the two the same table: every table the embedded database has exists in
//! PostgreSQL with the same columns, apart from the differences named here.

use std::collections::{BTreeMap, BTreeSet};

use tokio_util::sync::CancellationToken;
use toolgate_store::pg::PgUrl;
use toolgate_store::{PgBackend, Store, StoreLocation};
use toolgate_testkit::pg::Scratch;

/// Columns only PostgreSQL has, by table, and why.
const PG_ONLY: &[(&str, &str)] = &[
    // Orders requests created in the same millisecond, as SQLite's rowid does.
    ("approvals", "seq"),
];

async fn sqlite_tables(db: &std::path::Path) -> BTreeMap<String, BTreeSet<String>> {
    let location = StoreLocation::Embedded {
        db: db.to_path_buf(),
        results: db.with_file_name("results"),
    };
    drop(
        Store::open(&location, CancellationToken::new())
            .await
            .unwrap(),
    );
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut tables = BTreeMap::new();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for name in names {
        let columns = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{name}')"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        tables.insert(name, columns);
    }
    tables
}

async fn pg_tables(scratch: &Scratch) -> BTreeMap<String, BTreeSet<String>> {
    let url: PgUrl = scratch.url().parse().unwrap();
    let backend = PgBackend::open(&url, CancellationToken::new())
        .await
        .unwrap();
    let client = backend.pool.get().await.unwrap();
    let rows = client
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema()",
            &[],
        )
        .await
        .unwrap();
    let mut tables: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in rows {
        tables.entry(row.get(0)).or_default().insert(row.get(1));
    }
    tables
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_embedded_table_has_the_same_columns_in_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = sqlite_tables(&dir.path().join("toolgate.db")).await;
    let scratch = Scratch::new().await;
    let pg = pg_tables(&scratch).await;
    assert!(sqlite.len() >= 9, "the embedded schema: {sqlite:?}");
    for (table, columns) in &sqlite {
        let Some(pg_columns) = pg.get(table) else {
            panic!("table `{table}` is embedded only; add it to a migration in pg/migrations");
        };
        let pg_columns: BTreeSet<String> = pg_columns
            .iter()
            .filter(|c| !PG_ONLY.contains(&(table.as_str(), c.as_str())))
            .cloned()
            .collect();
        assert_eq!(
            columns, &pg_columns,
            "`{table}`: SQLite's columns (left) and PostgreSQL's (right) differ"
        );
    }
}
