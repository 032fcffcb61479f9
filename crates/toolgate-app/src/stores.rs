//! The stores in the data directory (`toolgate.db`, the audit log, results), each opened
//! with an error that names the file and what to do, and the audit key beside them.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::audit::{AuditKey, AuditLog, default_key_dir, resolved_path};
use toolgate_store::{CredentialStore, PinStore};

use crate::config::Config;

/// Creates the data directory, with an error that says what to do when it can't.
pub fn ensure_data_dir(config: &Config) -> anyhow::Result<()> {
    let logs = config.data_dir.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| {
        format!(
            "cannot create the data directory {} (choose a writable one with --data-dir or data_dir in toolgate.toml)",
            config.data_dir.display()
        )
    })?;
    let probe = config.data_dir.join(".write-test");
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "the data directory {} is not writable (choose a writable one with --data-dir or data_dir in toolgate.toml)",
            config.data_dir.display()
        )
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

pub fn open_approvals(config: &Config) -> anyhow::Result<ApprovalStore> {
    ensure_data_dir(config)?;
    ApprovalStore::open(&config.db_path()).with_context(|| {
        format!(
            "cannot open the approvals store {}",
            config.db_path().display()
        )
    })
}

/// The pinned tool definitions (R-REG-5), in the same database as the approvals.
pub fn open_pins(config: &Config) -> anyhow::Result<PinStore> {
    ensure_data_dir(config)?;
    PinStore::open(&config.db_path()).with_context(|| {
        format!(
            "cannot open the pinned tool definitions in {}",
            config.db_path().display()
        )
    })
}

pub fn open_audit(config: &Config) -> anyhow::Result<AuditLog> {
    ensure_data_dir(config)?;
    let key = open_key(config)?;
    AuditLog::open_keyed(
        &config.audit_path(),
        &config.db_path(),
        config.durability(),
        key,
    )
    .with_context(|| {
        format!(
            "cannot open the audit log {}",
            config.audit_path().display()
        )
    })
}

/// The OAuth tokens of MCP servers (`mcp_credentials` in the store; files 0600).
pub fn open_credentials(config: &Config) -> anyhow::Result<Arc<CredentialStore>> {
    ensure_data_dir(config)?;
    let store = CredentialStore::open(&config.db_path()).with_context(|| {
        format!(
            "cannot open the credential store in {}",
            config.db_path().display()
        )
    })?;
    Ok(Arc::new(store))
}

/// The audit key's directory: `$TOOLGATE_KEY_DIR`, else `$XDG_CONFIG_HOME/toolgate/keys`,
/// else `~/.config/toolgate/keys`. Not from the configuration file, which lives in the
/// workspace. Refused beneath the workspace, the data dir or a path the shell sandbox may
/// read or write: whoever can read the key can forge the log.
pub fn key_dir(config: &Config) -> anyhow::Result<PathBuf> {
    let var = |k: &str| std::env::var(k).ok();
    let dir = default_key_dir(
        var("TOOLGATE_KEY_DIR").as_deref(),
        var("XDG_CONFIG_HOME").as_deref(),
        var("HOME").as_deref(),
    )
    .context("no directory for the audit key: set TOOLGATE_KEY_DIR (or HOME)")?;
    let dir = resolved_path(&dir);
    let mut reachable = vec![
        ("the workspace", config.workspace.clone()),
        ("the data dir", config.data_dir.clone()),
    ];
    for p in &config.file.shell.extra_read_paths {
        reachable.push(("a [shell] extra_read_paths entry", p.clone()));
    }
    for (what, root) in reachable {
        let root = resolved_path(&root);
        if dir.starts_with(&root) || root.starts_with(&dir) {
            bail!(
                "the audit key directory {} overlaps {what} {}: tools could read the key and \
                 forge the audit log. Set TOOLGATE_KEY_DIR to a directory outside it",
                dir.display(),
                root.display()
            );
        }
    }
    Ok(dir)
}

/// The audit key, created on first use.
pub fn open_key(config: &Config) -> anyhow::Result<AuditKey> {
    let dir = key_dir(config)?;
    AuditKey::open_or_create(&dir)
        .with_context(|| format!("cannot use the audit key in {}", dir.display()))
}
