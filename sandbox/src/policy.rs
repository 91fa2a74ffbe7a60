//! What a confined command may do.

use std::path::PathBuf;

/// The network a confined command gets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Network {
    /// No sockets but `socketpair` (and Unix sockets when
    /// [`Policy::unix_sockets`] allows them): no TCP, no UDP, no raw or
    /// netlink sockets.
    #[default]
    Denied,
    /// TCP streams, connecting only to these ports (a proxy on the host that
    /// decides per domain); UDP and other families refused. Landlock rules
    /// are per port, not per address: a command could reach another host on
    /// the same port, so a host that needs more pairs this with a network
    /// namespace. Binding is refused unless `bind` is set.
    ProxyPorts {
        /// The ports connections may go to (the host's proxy listeners).
        ports: Vec<u16>,
        /// Whether the command may also bind (listen on) sockets.
        bind: bool,
    },
    /// A network namespace of the command's own, with only loopback: for
    /// each port of `listen`, a socket listening on `127.0.0.1:PORT` inside
    /// it is handed to the parent ([`crate::Prepared::take_listeners`]),
    /// which serves it with a proxy. Nothing else is reachable. Needs user
    /// namespaces.
    Isolated {
        /// Ports listened on inside the namespace, one listener each.
        listen: Vec<u16>,
    },
    /// No network restriction at all.
    Unrestricted,
}

/// What a command may touch. Paths should be absolute; those that do not
/// exist are skipped (a rule needs an inode), which only ever removes
/// access.
///
/// The lists combine the way a user expects: a path is readable if it lies
/// in a `read` or `write` tree and not in a `deny_read` one; writable if it
/// lies in a `write` tree and not in a `deny_write` one. Carving a path out
/// of a tree grants its siblings one by one (Landlock only adds rights), so
/// an entry created next to a carved-out path after the command started is
/// not reachable by it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// Trees the command may read and execute from.
    pub read: Vec<PathBuf>,
    /// Trees the command may also create, change and remove files in.
    pub write: Vec<PathBuf>,
    /// Files and trees that stay unreadable (their names can still be
    /// listed in a readable directory; their contents cannot be read).
    pub deny_read: Vec<PathBuf>,
    /// Files and trees that stay unwritable inside `write` trees: bound
    /// read-only onto themselves in a mount namespace of the command's own
    /// (needs user namespaces), so that they can be neither changed nor
    /// unlinked and replaced. Only paths that exist when the command starts
    /// can be protected this way. Links on the way to a path are followed
    /// (once, when the policy is prepared); a path that is itself a link
    /// is skipped (a mount would follow it to its target).
    pub deny_write: Vec<PathBuf>,
    /// Entries found by the caller (with the identity it saw), to be kept
    /// where they are: see [`Pinned`]. Needs user namespaces, like
    /// `deny_write`.
    pub pinned: Vec<Pinned>,
    /// Single files granted reading and writing whatever the trees: the
    /// devices a command needs to work at all (`/dev/null`, `/dev/urandom`)
    /// and a host's own state files (the file a shell wrapper reports to).
    pub files: Vec<PathBuf>,
    /// Which network the command gets (default: none, [`Network::Denied`]).
    pub network: Network,
    /// Whether Unix-domain sockets may be created (to talk to a local
    /// daemon such as an SSH agent). Off by default: a Unix socket is a way
    /// out of any file-system rule (a Docker socket runs anything).
    pub unix_sockets: bool,
}

/// One entry kept in place for the command: bound onto itself in the
/// command's mount namespace, so that it cannot be renamed, removed or
/// replaced (`EBUSY`), and, when `read_only`, not written either (`EROFS`).
/// A writable pin keeps a directory in place while what is inside stays
/// writable (a repository's `.git`).
///
/// The child reaches `path` from the outermost `write` tree that holds it,
/// one component at a time without following links, and binds it only if
/// it is still the object `identity` names: an entry swapped in the
/// meantime fails the start rather than being protected in its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pinned {
    /// The entry to keep in place (absolute, as the caller found it).
    pub path: PathBuf,
    /// Whether the entry is also made read-only, rather than only kept from
    /// being renamed, removed or replaced.
    pub read_only: bool,
    /// `(st_dev, st_ino)` of the entry when the caller found it.
    pub identity: (u64, u64),
}

impl Policy {
    /// The floor for commands judged read-only: `read` trees readable,
    /// nothing writable but the usual devices, no network.
    pub fn read_only(read: impl IntoIterator<Item = PathBuf>) -> Policy {
        Policy {
            read: read.into_iter().collect(),
            files: default_devices(),
            ..Policy::default()
        }
    }

    /// The system's program, library and configuration directories that
    /// any command needs to start (those that exist on this machine).
    pub fn system_dirs() -> Vec<PathBuf> {
        [
            "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc",
        ]
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect()
    }
}

/// `/dev/null` and friends: written to and read from by ordinary programs
/// (`2>/dev/null`, random numbers for hashing), harmless to grant.
pub(crate) fn default_devices() -> Vec<PathBuf> {
    [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
    ]
    .iter()
    .map(PathBuf::from)
    .collect()
}
