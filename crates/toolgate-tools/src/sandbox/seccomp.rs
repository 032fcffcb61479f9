//! The seccomp filters of a sandboxed command: no network sockets unless allowed, no
//! set-user-id or set-group-id bits, no
//! debugging other processes, no mounts or namespaces, no kernel modules, keyrings, BPF,
//! io_uring (which would bypass the socket rules) or other administration calls, and no
//! signals to the helper that supervises it or to the gateway. A denied call fails with
//! `EPERM`; the process lives on.
//!
//! Two programs: a small hand-written one first (wrong architecture → kill; x32 system
//! calls and `clone3`, whose flags a filter cannot see, → `ENOSYS`, so libc falls back to
//! `clone`), then the rule list compiled by seccompiler.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::error::SandboxError;

#[cfg(target_arch = "x86_64")]
const ARCH: (TargetArch, u32) = (TargetArch::x86_64, 0xc000_003e);
#[cfg(target_arch = "aarch64")]
const ARCH: (TargetArch, u32) = (TargetArch::aarch64, 0xc000_00b7);

/// Denied whatever their arguments.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// `clone` flags that would create a namespace.
const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// The two programs, in installation order. `protected` are process ids the command must
/// not signal (the helper, the gateway).
pub(crate) fn programs(
    allow_network: bool,
    protected: &[i32],
) -> Result<Vec<BpfProgram>, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
    rules.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|&flag| rule(&[(0, SeccompCmpOp::MaskedEq(flag), flag)]))
            .collect::<Result<_, _>>()?,
    );
    // No set-user-id or set-group-id bit: a program left in the workspace must not run
    // with the sandbox's owner's rights once someone outside executes it.
    for (nr, mode_arg) in [
        (libc::SYS_chmod, 1),
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (SYS_FCHMODAT2, 2),
    ] {
        rules.insert(nr, set_id_rules(mode_arg)?);
    }
    rules.insert(libc::SYS_kill, signal_rules(protected, true)?);
    for nr in [
        libc::SYS_tkill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
        libc::SYS_pidfd_open,
    ] {
        rules.insert(nr, signal_rules(protected, false)?);
    }
    let socket_type = SeccompCmpOp::MaskedEq(0xf);
    let unix = libc::AF_UNIX as u64;
    if allow_network {
        let ne = |family: i32| (0, SeccompCmpOp::Ne, family as u64);
        rules.insert(
            libc::SYS_socket,
            vec![
                rule(&[
                    ne(libc::AF_UNIX),
                    ne(libc::AF_INET),
                    ne(libc::AF_INET6),
                    ne(libc::AF_NETLINK),
                ])?,
                rule(&[(1, socket_type, libc::SOCK_RAW as u64)])?,
            ],
        );
    } else {
        // Only Unix stream sockets, and no connect(): a command can listen in its
        // workspace, but reach neither the network nor local daemons.
        rules.insert(
            libc::SYS_socket,
            vec![
                rule(&[(0, SeccompCmpOp::Ne, unix)])?,
                rule(&[(1, socket_type.clone(), libc::SOCK_DGRAM as u64)])?,
                rule(&[(1, socket_type.clone(), libc::SOCK_SEQPACKET as u64)])?,
                rule(&[(1, socket_type, libc::SOCK_RAW as u64)])?,
            ],
        );
        rules.insert(libc::SYS_connect, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH.0,
    )
    .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    let compiled: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string()))?;
    Ok(vec![prelude(), compiled])
}

/// Installs the programs (after `no_new_privs`, which seccompiler sets).
pub(crate) fn install(programs: &[BpfProgram]) -> std::io::Result<()> {
    for program in programs {
        seccompiler::apply_filter(program).map_err(|e| match e {
            seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => io,
            other => std::io::Error::other(other.to_string()),
        })?;
    }
    Ok(())
}

/// `fchmodat2` (Linux 6.6), the same number on every architecture.
const SYS_FCHMODAT2: libc::c_long = 452;

/// Rules matching a mode argument with `S_ISUID` or `S_ISGID` set.
fn set_id_rules(mode_arg: u8) -> Result<Vec<SeccompRule>, SandboxError> {
    [libc::S_ISUID, libc::S_ISGID]
        .into_iter()
        .map(|bit| {
            let bit = u64::from(bit);
            rule(&[(mode_arg, SeccompCmpOp::MaskedEq(bit), bit)])
        })
        .collect()
}

/// Rules matching a first argument that names a protected process (also as a negative
/// process-group id and, for `kill`, -1: every process the caller may signal).
fn signal_rules(protected: &[i32], kill: bool) -> Result<Vec<SeccompRule>, SandboxError> {
    let mut targets: Vec<i32> = protected.to_vec();
    if kill {
        targets.extend(protected.iter().map(|p| -p));
        targets.push(-1);
    }
    targets
        .into_iter()
        .map(|pid| rule(&[(0, SeccompCmpOp::Eq, u64::from(pid as u32))]))
        .collect()
}

/// One rule: all of `(argument index, operator, value)` on 32-bit arguments.
fn rule(conditions: &[(u8, SeccompCmpOp, u64)]) -> Result<SeccompRule, SandboxError> {
    let conditions = conditions
        .iter()
        .map(|(arg, op, value)| {
            SeccompCondition::new(*arg, SeccompCmpArgLen::Dword, op.clone(), *value)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    SeccompRule::new(conditions).map_err(|e| SandboxError::Seccomp(e.to_string()))
}

/// Architecture check, x32 system calls and `clone3` → `ENOSYS`, everything else on to the
/// next program.
fn prelude() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JGE_K: u16 = 0x35;
    const RET_K: u16 = 0x06;
    const NR: u32 = 0;
    const ARCH_OFFSET: u32 = 4;
    const X32_BIT: u32 = 0x4000_0000;
    let stmt = |code, k| sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code, k, jt, jf| sock_filter { code, jt, jf, k };
    let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    vec![
        stmt(LD_W_ABS, ARCH_OFFSET),
        jump(JEQ_K, ARCH.1, 1, 0),
        stmt(RET_K, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(LD_W_ABS, NR),
        jump(JGE_K, X32_BIT, 1, 0),
        jump(JEQ_K, libc::SYS_clone3 as u32, 0, 1),
        stmt(RET_K, enosys),
        stmt(RET_K, libc::SECCOMP_RET_ALLOW),
    ]
}
