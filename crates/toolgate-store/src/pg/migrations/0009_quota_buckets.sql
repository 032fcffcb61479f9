-- Schema 9: quota buckets (R-SRV-5), one row per key (a principal, a tool, or both): the
-- theoretical arrival time of the key's next call in microseconds of the database's clock.
-- Every replica takes calls from the same row, so a quota holds across the cluster.
CREATE TABLE quota_buckets (
    key    TEXT PRIMARY KEY,
    tat_us BIGINT NOT NULL
);
