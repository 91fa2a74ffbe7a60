//! What Landlock does not see, tried by real processes: sockets outside
//! the allow-list, TCP Fast Open past the port rules, the capabilities a
//! root host would pass on, and the host's own `/proc` entries. Each probe
//! runs unconfined first where it can, to show that it works at all here.

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use baton_sandbox::{support, Network, Policy};
use confined::{run, run_unconfined, stdout, usable, Scene};

use crate::support::confined;

const PYTHON: &str = "/usr/bin/python3";

fn scene() -> Scene {
    let scene = confined::workspace();
    std::fs::write(scene.work.join("kept.txt"), "kept\n").expect("write");
    scene
}

fn floor(work: &Path) -> Policy {
    let mut read = Policy::system_dirs();
    read.push(work.to_path_buf());
    Policy::read_only(read)
}

fn proxy_ports(work: &Path, port: u16) -> Policy {
    let mut policy = floor(work);
    policy.network = Network::ProxyPorts {
        ports: vec![port],
        bind: false,
    };
    policy
}

fn python(code: &str) -> Option<String> {
    if !Path::new(PYTHON).exists() {
        eprintln!("skipping: no {PYTHON}");
        return None;
    }
    Some(format!("{PYTHON} -c '{code}'"))
}

/// Tries to create each socket; prints `NAME created` or `NAME refused`.
const SOCKETS: &str = r#"
import socket
S = socket
def probe(name, make):
    try:
        make()
        print(name, "created")
    except OSError as e:
        print(name, "refused", e.errno)
probe("packet", lambda: S.socket(S.AF_INET, 10, 0))
probe("packet_all", lambda: S.socket(S.AF_INET, 10, S.htons(3)))
probe("raw", lambda: S.socket(S.AF_INET, S.SOCK_RAW, S.IPPROTO_ICMP))
probe("udp", lambda: S.socket(S.AF_INET, S.SOCK_DGRAM))
probe("udp6", lambda: S.socket(S.AF_INET6, S.SOCK_DGRAM | S.SOCK_CLOEXEC))
probe("af_packet", lambda: S.socket(S.AF_PACKET, S.SOCK_RAW, S.htons(3)))
probe("netlink", lambda: S.socket(S.AF_NETLINK, S.SOCK_RAW, 0))
probe("mptcp", lambda: S.socket(S.AF_INET, S.SOCK_STREAM, 262))
probe("unix", lambda: S.socket(S.AF_UNIX, S.SOCK_STREAM))
probe("unixpair", lambda: S.socketpair(S.AF_UNIX, S.SOCK_STREAM))
probe("tcp", lambda: S.socket(S.AF_INET, S.SOCK_STREAM))
probe("tcp6", lambda: S.socket(S.AF_INET6, S.SOCK_STREAM | S.SOCK_NONBLOCK | S.SOCK_CLOEXEC, S.IPPROTO_TCP))
"#;

fn verdicts(out: &str) -> Vec<(String, bool)> {
    out.lines()
        .filter_map(|l| {
            let mut words = l.split(' ');
            let name = words.next()?.to_string();
            Some((name, words.next()? == "created"))
        })
        .collect()
}

fn created(verdicts: &[(String, bool)], name: &str) -> bool {
    verdicts
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no verdict for {name}: {verdicts:?}"))
        .1
}

#[test]
fn with_proxy_ports_only_tcp_streams_can_be_created() {
    if !usable() || support().landlock_abi < 4 {
        return;
    }
    let Some(probe) = python(SOCKETS) else {
        return;
    };
    let s = scene();
    let unconfined = verdicts(&stdout(&run_unconfined(&s.work, &probe)));
    if !created(&unconfined, "packet") {
        eprintln!("note: packet sockets need CAP_NET_RAW, which this test lacks");
    }
    let out = run(&proxy_ports(&s.work, 9), &s.work, &probe);
    eprintln!("DEBUG {out:?}");
    let confined = verdicts(&stdout(&out));
    for name in [
        "packet",
        "packet_all",
        "raw",
        "udp",
        "udp6",
        "af_packet",
        "netlink",
        "mptcp",
        "unix",
    ] {
        assert!(!created(&confined, name), "{name} was created: {out:?}");
    }
    for name in ["unixpair", "tcp", "tcp6"] {
        assert!(created(&confined, name), "{name} was refused: {out:?}");
    }
    // With Unix sockets allowed, those too.
    let mut policy = proxy_ports(&s.work, 9);
    policy.unix_sockets = true;
    let confined = verdicts(&stdout(&run(&policy, &s.work, &probe)));
    assert!(created(&confined, "unix") && !created(&confined, "packet"));
}

#[test]
fn an_isolated_network_allows_only_tcp_streams_too() {
    if !usable() || !support().user_namespaces {
        return;
    }
    let Some(probe) = python(SOCKETS) else {
        return;
    };
    let s = scene();
    let mut policy = floor(&s.work);
    policy.network = Network::Isolated { listen: Vec::new() };
    let out = run(&policy, &s.work, &probe);
    let confined = verdicts(&stdout(&out));
    for name in ["packet", "raw", "udp", "af_packet", "netlink"] {
        assert!(!created(&confined, name), "{name} was created: {out:?}");
    }
    assert!(created(&confined, "tcp"), "{out:?}");
}

/// Sends one byte to `port` with `MSG_FASTOPEN` (which connects without
/// `connect()`), then tries `TCP_FASTOPEN_CONNECT`.
fn fast_open(port: u16) -> String {
    format!(
        r#"
import socket
S = socket
s = S.socket(S.AF_INET, S.SOCK_STREAM)
try:
    s.sendto(b"x", S.MSG_FASTOPEN, ("127.0.0.1", {port}))
    print("sent")
except OSError as e:
    print("send refused", e.errno)
t = S.socket(S.AF_INET, S.SOCK_STREAM)
try:
    t.setsockopt(S.IPPROTO_TCP, 30, 1)
    print("option set")
except OSError as e:
    print("option refused", e.errno)
"#
    )
}

#[test]
fn fast_open_does_not_pass_the_port_rules() {
    if !usable() || support().landlock_abi < 4 {
        return;
    }
    let s = scene();
    let open = TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    closed.set_nonblocking(true).expect("nonblocking");
    let open_port = open.local_addr().expect("addr").port();
    let closed_port = closed.local_addr().expect("addr").port();
    let Some(probe) = python(&fast_open(closed_port)) else {
        return;
    };
    // Unconfined, the probe reaches the listener (unless this kernel has
    // client-side Fast Open turned off).
    let control = stdout(&run_unconfined(&s.work, &probe));
    let reached = control.contains("sent") && accepted(&closed);
    if !reached {
        eprintln!("note: MSG_FASTOPEN does not connect here: {control}");
    }
    let out = run(&proxy_ports(&s.work, open_port), &s.work, &probe);
    let text = stdout(&out);
    assert!(text.contains("send refused"), "{out:?}");
    assert!(text.contains("option refused"), "{out:?}");
    assert!(!accepted(&closed), "the refused port saw a connection");
    // An ordinary connection to the allowed port still works.
    let out = run(
        &proxy_ports(&s.work, open_port),
        &s.work,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{open_port} && echo connected"),
    );
    assert_eq!(stdout(&out), "connected\n", "{out:?}");
}

/// Whether a connection is waiting on `listener` (after a moment).
fn accepted(listener: &TcpListener) -> bool {
    for _ in 0..20 {
        if listener.accept().is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// The `Cap*` lines of the command's `/proc/self/status`, and
/// `NoNewPrivs`.
fn capabilities(policy: &Policy, work: &Path) -> Vec<(String, String)> {
    let out = run(
        policy,
        work,
        "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status",
    );
    assert!(out.status.success(), "{out:?}");
    stdout(&out)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

fn assert_no_capabilities(sets: &[(String, String)], bounding_too: bool) {
    assert_eq!(sets.len(), 6, "{sets:?}");
    for (name, value) in sets {
        match name.as_str() {
            "NoNewPrivs" => assert_eq!(value, "1", "{sets:?}"),
            "CapBnd" if !bounding_too => {}
            _ => assert_eq!(value, "0000000000000000", "{name}: {sets:?}"),
        }
    }
}

#[test]
fn the_command_has_no_capabilities() {
    if !usable() {
        return;
    }
    let s = scene();
    // SAFETY: a plain getter.
    let root = unsafe { libc::geteuid() } == 0;
    // Without namespaces: a root host's capabilities are all gone, the
    // bounding set included (only a process with CAP_SETPCAP can shrink
    // it; one without has no capability to regain).
    assert_no_capabilities(&capabilities(&floor(&s.work), &s.work), root);
    if !support().user_namespaces {
        return;
    }
    // In a user namespace of its own (protected paths are mounts there):
    // the mounts are made first, then every capability it had there goes.
    let mut policy = floor(&s.work);
    policy.write = vec![s.work.clone()];
    policy.deny_write = vec![s.work.join("kept.txt")];
    assert_no_capabilities(&capabilities(&policy, &s.work), true);
    let out = run(
        &policy,
        &s.work,
        "echo new > new.txt && echo made; echo changed > kept.txt || echo protected",
    );
    assert_eq!(stdout(&out), "made\nprotected\n", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(s.work.join("kept.txt")).expect("read"),
        "kept\n"
    );
}

#[test]
fn the_hosts_environment_and_descriptors_are_unreadable() {
    if !usable() {
        return;
    }
    use std::os::fd::AsRawFd;
    let s = scene();
    let host = std::process::id();
    // A file the host holds open, outside anything the command may read.
    let held = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(held.path(), "HELD-CONTENT\n").expect("write");
    let held = std::fs::File::open(held.path()).expect("open");
    let fd = held.as_raw_fd();
    let probe = format!(
        "tr '\\0' '\\n' < /proc/{host}/environ | head -1 | grep -q . && echo ENVIRON-READ; \
         ls -l /proc/{host}/fd/ 2>/dev/null | grep -q -- '->' && echo FD-LINKS-READ; \
         cat /proc/{host}/fd/{fd} 2>/dev/null; \
         echo done"
    );
    // The control: this process's `/proc` is readable to an ordinary
    // process of the same user.
    let control = stdout(&run_unconfined(&s.work, &probe));
    assert!(
        control.contains("ENVIRON-READ")
            && control.contains("FD-LINKS-READ")
            && control.contains("HELD-CONTENT"),
        "{control}"
    );
    for policy in [floor(&s.work), {
        let mut p = floor(&s.work);
        p.read = vec![PathBuf::from("/")];
        p
    }] {
        let out = run(&policy, &s.work, &probe);
        assert_eq!(stdout(&out), "done\n", "{out:?}");
    }
}
