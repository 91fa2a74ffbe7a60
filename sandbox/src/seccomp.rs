//! The system calls a confined command may not make, as seccomp programs.
//!
//! Landlock covers files and TCP; what it does not see is refused here:
//! - every socket the policy does not allow, by allow-list, and TCP Fast
//!   Open (see [`crate::sockets`]);
//! - `io_uring`, whose operations bypass both seccomp and Landlock checks
//!   on the equivalent calls;
//! - calls that change namespaces, mounts or another process's memory.
//!
//! A refused call fails with `EPERM` (programs handle it as a missing
//! permission), except `clone3`, which fails with `ENOSYS` so that libc
//! falls back to `clone`, whose flags can be checked. A second, hand-built
//! program refuses the x32 system-call numbers, which share the x86-64
//! architecture tag and would otherwise slip past every rule above.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::policy::{Network, Policy};
use crate::prepared::PrepareError;
use crate::sockets;

/// Namespaces a new process must not get: a fresh user namespace would
/// hand the command capabilities over its own mounts.
const NAMESPACE_FLAGS: u64 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u64;

/// Calls refused whatever their arguments.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_fsconfig,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
];

/// Calls that change a file's metadata (mode, owner, times, extended
/// attributes): Landlock does not see them, so a command that may write
/// nowhere is refused them all. (A command with write trees keeps them:
/// seccomp cannot tell paths apart, and `chmod +x` in the workspace is
/// ordinary work.)
const METADATA: &[libc::c_long] = &[
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_chown,
    libc::SYS_fchown,
    libc::SYS_lchown,
    libc::SYS_fchownat,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_utimensat,
    libc::SYS_futimesat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
];

/// `fchmodat2` (Linux 6.6), `setxattrat` and `removexattrat` (6.13), by
/// number: older C libraries do not name them.
const METADATA_NEW: &[libc::c_long] = &[452, 463, 466];

pub(crate) fn cond(
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, PrepareError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(PrepareError::seccomp)
}

pub(crate) fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, PrepareError> {
    SeccompRule::new(conditions).map_err(PrepareError::seccomp)
}

/// Every program a command under `policy` enters: the main one, the
/// `clone3` one and (on x86-64) the x32 one. They depend only on the kind
/// of network, Unix sockets and whether anything is writable, so each
/// combination is compiled once and shared (a command's programs are only
/// read, by the kernel, when it enters them).
pub(crate) fn programs(policy: &Policy) -> Result<Arc<Vec<BpfProgram>>, PrepareError> {
    type Key = (u8, bool, bool);
    static COMPILED: Mutex<Vec<(Key, Arc<Vec<BpfProgram>>)>> = Mutex::new(Vec::new());
    let network = match policy.network {
        Network::Denied => 0,
        Network::ProxyPorts { .. } => 1,
        Network::Isolated { .. } => 2,
        Network::Unrestricted => 3,
    };
    let key = (network, policy.unix_sockets, policy.write.is_empty());
    let mut compiled = COMPILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, programs)) = compiled.iter().find(|(k, _)| *k == key) {
        return Ok(programs.clone());
    }
    let mut programs = vec![program(policy)?, clone3_program()?];
    let x32 = x32_program();
    if !x32.is_empty() {
        programs.push(x32);
    }
    let programs = Arc::new(programs);
    compiled.push((key, programs.clone()));
    Ok(programs)
}

/// The main program: refuses what the policy does not allow.
fn program(policy: &Policy) -> Result<BpfProgram, PrepareError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &nr in REFUSED {
        rules.insert(nr, Vec::new());
    }
    if policy.write.is_empty() {
        for &nr in METADATA.iter().chain(METADATA_NEW) {
            rules.insert(nr, Vec::new());
        }
    }
    sockets::add_rules(policy, &mut rules)?;
    // Any namespace flag refuses the call.
    let clone_rules = namespace_bits()
        .map(|bit| rule(vec![cond(0, SeccompCmpOp::MaskedEq(bit), bit)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch()?,
    )
    .map_err(PrepareError::seccomp)?;
    filter.try_into().map_err(PrepareError::seccomp)
}

fn namespace_bits() -> impl Iterator<Item = u64> {
    (0..64)
        .map(|i| 1u64 << i)
        .filter(|bit| NAMESPACE_FLAGS & bit != 0)
}

/// `clone3` passes its flags in memory, out of a filter's reach: it fails
/// with `ENOSYS`, and libc falls back to `clone`.
fn clone3_program() -> Result<BpfProgram, PrepareError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_clone3, Vec::new());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch()?,
    )
    .map_err(PrepareError::seccomp)?;
    filter.try_into().map_err(PrepareError::seccomp)
}

fn arch() -> Result<TargetArch, PrepareError> {
    std::env::consts::ARCH.try_into().map_err(|_| {
        PrepareError::Unsupported("seccomp filters are not built for this architecture".into())
    })
}

/// On x86-64, refuses the x32 numbers (bit 30 set), which carry the same
/// architecture tag as native calls. Elsewhere, an empty program.
fn x32_program() -> BpfProgram {
    if cfg!(not(target_arch = "x86_64")) {
        return Vec::new();
    }
    const X32_BIT: u32 = 0x4000_0000;
    vec![
        // A = seccomp_data.nr
        seccompiler::sock_filter {
            code: 0x20,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if (A & X32_BIT) goto refuse else allow
        seccompiler::sock_filter {
            code: 0x45,
            jt: 0,
            jf: 1,
            k: X32_BIT,
        },
        seccompiler::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        },
        seccompiler::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ]
}
