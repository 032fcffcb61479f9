//! Which walls a shell command gets, decided once when the tool is built from the mode, the
//! launcher and what the kernel offers.

use std::sync::Once;

use crate::sandbox::{SandboxLauncher, SandboxMode, SandboxSupport};

/// How every call of one shell tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SandboxPlan {
    /// `/bin/sh` started directly in a process group (sandbox off or not possible).
    Direct,
    /// Through the sandbox helper; `view`: inside the namespace view, `landlock`: with
    /// Landlock (each `false` only when the kernel lacks it and the mode allows that).
    Helper {
        launcher: SandboxLauncher,
        landlock: bool,
        view: bool,
    },
    /// `SandboxMode::Required` without a complete sandbox: every call is refused with this.
    Refuse(String),
}

impl SandboxPlan {
    /// The plan, and a warning when `IfAvailable` had to settle for less than the full
    /// sandbox.
    pub(super) fn decide(
        mode: SandboxMode,
        launcher: Option<&SandboxLauncher>,
        support: &SandboxSupport,
    ) -> (SandboxPlan, Option<String>) {
        let missing = support
            .reason
            .clone()
            .unwrap_or_else(|| "the kernel lacks Landlock or seccomp".to_owned());
        match (mode, launcher) {
            (SandboxMode::Off, _) => (SandboxPlan::Direct, None),
            (SandboxMode::Required, None) => (
                SandboxPlan::Refuse(
                    "the shell sandbox is required but no sandbox helper is configured".to_owned(),
                ),
                None,
            ),
            (SandboxMode::IfAvailable, None) => (
                SandboxPlan::Direct,
                Some(
                    "no sandbox helper is configured: shell commands run WITHOUT a sandbox"
                        .to_owned(),
                ),
            ),
            (_, Some(launcher)) if support.is_complete() => (
                SandboxPlan::Helper {
                    launcher: launcher.clone(),
                    landlock: true,
                    view: true,
                },
                None,
            ),
            (SandboxMode::Required, Some(_)) => (
                SandboxPlan::Refuse(format!(
                    "the shell sandbox is required but unavailable: {missing} \
                     (`toolgate doctor` explains; set [shell] sandbox = \"if-available\" to run \
                     with less)"
                )),
                None,
            ),
            (_, Some(launcher)) if support.seccomp => (
                SandboxPlan::Helper {
                    launcher: launcher.clone(),
                    landlock: support.landlock_abi.is_some(),
                    view: support.namespaces.is_some(),
                },
                Some(format!(
                    "{missing}: shell commands run with LESS than the full sandbox (sandbox = \
                     \"if-available\"); set [shell] sandbox = \"required\" to refuse them"
                )),
            ),
            (_, Some(_)) => (
                SandboxPlan::Direct,
                Some(format!(
                    "{missing}: shell commands run WITHOUT a sandbox; set [shell] sandbox = \
                     \"required\" to refuse them"
                )),
            ),
        }
    }

    /// The `sandbox` field of a result: `namespaces+landlock+seccomp` (the whole
    /// sandbox), or the walls there are (`landlock+seccomp`, `namespaces+seccomp`,
    /// `seccomp`), or `none`.
    pub(super) fn label(&self) -> &'static str {
        match self {
            SandboxPlan::Helper { landlock, view, .. } => match (view, landlock) {
                (true, true) => "namespaces+landlock+seccomp",
                (false, true) => "landlock+seccomp",
                (true, false) => "namespaces+seccomp",
                (false, false) => "seccomp",
            },
            SandboxPlan::Direct | SandboxPlan::Refuse(_) => "none",
        }
    }
}

/// Logs a degraded sandbox once per process, however many shell tools are built.
pub(super) fn warn_once(warning: &str) {
    static WARNED: Once = Once::new();
    WARNED.call_once(|| tracing::warn!("shell sandbox: {warning}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::ProcessLimit;

    fn support(landlock: Option<u32>, seccomp: bool) -> SandboxSupport {
        SandboxSupport {
            landlock_abi: landlock,
            seccomp,
            process_limit: ProcessLimit::CgroupPids,
            hides_protected_paths: true,
            namespaces: Some("bubblewrap 0.8.0".to_owned()),
            reason: landlock.is_none().then(|| "no Landlock".to_owned()),
        }
    }

    #[test]
    fn each_mode_meets_each_kernel() {
        let l = SandboxLauncher::program("/h");
        let helper = |landlock| SandboxPlan::Helper {
            launcher: l.clone(),
            landlock,
            view: true,
        };
        let full = support(Some(6), true);
        let bare = support(None, true);
        let none = support(None, false);
        use SandboxMode::*;
        let plan = |mode, launcher, s: &SandboxSupport| SandboxPlan::decide(mode, launcher, s).0;
        assert_eq!(plan(Required, Some(&l), &full), helper(true));
        assert_eq!(plan(IfAvailable, Some(&l), &full), helper(true));
        assert_eq!(plan(IfAvailable, Some(&l), &bare), helper(false));
        assert_eq!(plan(IfAvailable, Some(&l), &none), SandboxPlan::Direct);
        assert_eq!(plan(Off, Some(&l), &full), SandboxPlan::Direct);
        assert_eq!(plan(IfAvailable, None, &full), SandboxPlan::Direct);
        assert!(
            matches!(plan(Required, Some(&l), &bare), SandboxPlan::Refuse(m) if m.contains("no Landlock"))
        );
        assert!(matches!(
            plan(Required, None, &full),
            SandboxPlan::Refuse(_)
        ));
        assert_eq!(SandboxPlan::decide(IfAvailable, Some(&l), &full).1, None);
        assert!(
            SandboxPlan::decide(IfAvailable, Some(&l), &bare)
                .1
                .is_some()
        );
    }
}
