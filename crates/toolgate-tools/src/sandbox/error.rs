//! Why a sandbox could not be set up.

/// A failure to build or enforce the sandbox; the command never ran.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("Landlock: {0}")]
    Landlock(String),
    #[error("seccomp: {0}")]
    Seccomp(String),
    /// Landlock was required but the kernel enforced none of the ruleset.
    #[error("Landlock is required but was not enforced: {0}")]
    NotEnforced(String),
    #[error("cannot {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The helper was started with arguments it does not understand.
    #[error("bad helper invocation: {0}")]
    Usage(String),
}

impl SandboxError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SandboxError {
        let what = what.into();
        move |source| SandboxError::Io { what, source }
    }
}
