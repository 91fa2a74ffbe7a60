//! A [`Policy`] as a Landlock ruleset.
//!
//! Landlock only grants: a rule on a directory gives its rights to
//! everything beneath it, and nothing can take them back lower down. A
//! carve-out ("all of the workspace but `.env`") is therefore built by
//! granting the directories on the way to the carved path only what they
//! need to be walked (listing), and every *sibling* along that way the full
//! rights, one rule each. Entries are opened with `O_NOFOLLOW` and symbolic
//! links get no rule of their own: a link inside a readable tree must not
//! lend its target the tree's rights.

use std::collections::BTreeMap;
use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};

use crate::policy::{Network, Policy};
use crate::prepared::PrepareError;

/// Rights a file (not a directory) can hold.
fn file_rights(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_file(abi)
}

fn read_rights(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_read(abi)
}

/// Path → rights, merged (the union of every grant on that exact path).
type Grants = BTreeMap<PathBuf, BitFlags<AccessFs>>;

/// Builds the ruleset; returns its fd, ready for `landlock_restrict_self`.
pub(crate) fn build(policy: &Policy, abi: ABI) -> Result<OwnedFd, PrepareError> {
    let grants = grants(policy, abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(PrepareError::landlock)?;
    // Inside its own network namespace a command may use TCP freely: only
    // the proxy's listeners exist there.
    let own_namespace = matches!(
        policy.network,
        Network::Unrestricted | Network::Isolated { .. }
    );
    if !own_namespace && abi >= ABI::V4 {
        // Binding stays unhandled (so allowed) only where the policy says.
        let handled = match policy.network {
            Network::ProxyPorts { bind: true, .. } => AccessNet::ConnectTcp.into(),
            _ => AccessNet::from_all(abi),
        };
        ruleset = ruleset
            .handle_access(handled)
            .map_err(PrepareError::landlock)?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(PrepareError::landlock)?;
    }
    let mut created: RulesetCreated = ruleset.create().map_err(PrepareError::landlock)?;
    for (path, rights) in grants {
        let Some((fd, is_dir)) = open_path(&path) else {
            continue;
        };
        let rights = if is_dir {
            rights
        } else {
            rights & file_rights(abi)
        };
        if rights.is_empty() {
            continue;
        }
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(PrepareError::landlock)?;
    }
    if let Network::ProxyPorts { ports, .. } = &policy.network {
        if abi >= ABI::V4 {
            for &port in ports {
                created = created
                    .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                    .map_err(PrepareError::landlock)?;
            }
        }
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or(PrepareError::Unsupported(
        "the kernel does not enforce Landlock rulesets".into(),
    ))
}

/// Every path that gets a rule, with its rights.
pub(crate) fn grants(policy: &Policy, abi: ABI) -> Grants {
    let read = read_rights(abi);
    let all = AccessFs::from_all(abi);
    let write = all & !read;
    // Reading a carved path needs the file rights; listing the directories
    // on the way stays, so that walking the tree works.
    let unreadable = Carve {
        taken: all,
        from_parents: AccessFs::ReadFile | AccessFs::Execute | write & file_rights(abi),
    };
    let mut grants = Grants::new();
    for tree in &policy.read {
        carve(&mut grants, tree, read, &policy.deny_read, unreadable);
    }
    // Write protection is not Landlock's: see `mounts`.
    for tree in &policy.write {
        carve(&mut grants, tree, all, &policy.deny_read, unreadable);
    }
    for device in &policy.files {
        if open_path(device).is_some() {
            merge(&mut grants, device.clone(), file_rights(abi));
        }
    }
    grants
}

/// How a carve-out takes rights away.
#[derive(Clone, Copy)]
struct Carve {
    /// From the carved path and everything beneath it.
    taken: BitFlags<AccessFs>,
    /// From each directory on the way to it (its other entries get them
    /// back one by one).
    from_parents: BitFlags<AccessFs>,
}

/// Grants `rights` on `tree`, withholding what `how` takes from every path
/// in `carved`.
fn carve(
    grants: &mut Grants,
    tree: &Path,
    rights: BitFlags<AccessFs>,
    carved: &[PathBuf],
    how: Carve,
) {
    if carved.iter().any(|c| tree.starts_with(c)) {
        let kept = rights & !how.taken;
        if !kept.is_empty() {
            merge(grants, tree.to_path_buf(), kept);
        }
        return;
    }
    let below: Vec<PathBuf> = carved
        .iter()
        .filter(|c| c.starts_with(tree) && c.as_path() != tree)
        .cloned()
        .collect();
    if below.is_empty() {
        merge(grants, tree.to_path_buf(), rights);
        return;
    }
    merge(grants, tree.to_path_buf(), rights & !how.from_parents);
    let Ok(entries) = fs::read_dir(tree) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        carve(grants, &entry.path(), rights, &below, how);
    }
}

fn merge(grants: &mut Grants, path: PathBuf, rights: BitFlags<AccessFs>) {
    *grants.entry(path).or_insert_with(BitFlags::empty) |= rights;
}

/// An `O_PATH` descriptor of `path` itself and whether it is a directory
/// (`None` when it does not exist or is a symbolic link: a final link is
/// never followed, so a rule cannot land on whatever it points to).
fn open_path(path: &Path) -> Option<(OwnedFd, bool)> {
    let fd: OwnedFd = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()?
        .into();
    // The kind of what was opened, not of what the path names now.
    let meta = fs::File::from(fd.try_clone().ok()?).metadata().ok()?;
    if meta.file_type().is_symlink() {
        return None;
    }
    Some((fd, meta.is_dir()))
}
