//! Who runs this command, for principals and approvers.

/// Who the local user is, for principals and approvers.
pub fn local_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "local".to_owned())
}
