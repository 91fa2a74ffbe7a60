//! Real processes under real policies: what they can and cannot touch.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use baton_sandbox::{enter, support, Network, Policy, Prepared};
use confined::{run, stdout, usable};

use crate::support::confined;

struct Scene {
    _dir: tempfile::TempDir,
    work: PathBuf,
    outside: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let work = root.join("work");
    let outside = root.join("outside");
    fs::create_dir_all(work.join("sub")).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(work.join("a.txt"), "inside\n").expect("write");
    fs::write(work.join("sub/b.txt"), "deeper\n").expect("write");
    fs::write(work.join(".env"), "SECRET=1\n").expect("write");
    fs::write(outside.join("marker"), "outside-secret\n").expect("write");
    std::os::unix::fs::symlink(&outside, work.join("link")).expect("symlink");
    Scene {
        _dir: dir,
        work,
        outside,
    }
}

fn floor(scene: &Scene) -> Policy {
    let mut read = Policy::system_dirs();
    read.push(scene.work.clone());
    Policy::read_only(read)
}

#[test]
fn floor_reads_the_workspace_and_nothing_outside() {
    if !usable() {
        return;
    }
    let s = scene();
    let out = run(&floor(&s), &s.work, "cat a.txt sub/b.txt; ls");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout(&out).lines().take(2).collect::<Vec<_>>(),
        ["inside", "deeper"]
    );
    for probe in [
        format!("cat {}/marker", s.outside.display()),
        "cat link/marker".to_string(),
        "cat < link/marker".to_string(),
        format!("ls {}", s.outside.display()),
        "cat ~/.bash_history /root/.bashrc 2>&1 >/dev/null | head -1; cat ~/.profile".to_string(),
    ] {
        let out = run(&floor(&s), &s.work, &probe);
        assert!(!stdout(&out).contains("outside-secret"), "{probe}: {out:?}");
        assert!(!out.status.success(), "{probe} should fail: {out:?}");
    }
}

#[test]
fn floor_writes_nowhere_but_dev_null() {
    if !usable() {
        return;
    }
    let s = scene();
    let out = run(&floor(&s), &s.work, "echo hi > /dev/null && echo ok");
    assert_eq!(stdout(&out), "ok\n", "{out:?}");
    for probe in [
        "touch new.txt",
        "echo x >> a.txt",
        "rm a.txt",
        "mkdir d",
        "mv a.txt c.txt",
        "ln -s a.txt l",
        "truncate -s0 a.txt",
        "mkfifo f",
        "touch a.txt",
        "touch -d 2000-01-01 link/marker",
        "chmod 000 a.txt",
        "setfattr -n user.x -v 1 a.txt",
    ] {
        let out = run(&floor(&s), &s.work, probe);
        assert!(!out.status.success(), "{probe} should fail: {out:?}");
    }
    let meta = |p: &Path| {
        let m = fs::metadata(p).unwrap();
        (
            m.modified().unwrap(),
            std::os::unix::fs::PermissionsExt::mode(&m.permissions()),
        )
    };
    let before = (meta(&s.work.join("a.txt")), meta(&s.outside.join("marker")));
    for probe in [
        "touch a.txt",
        "touch -d 2000-01-01 link/marker",
        "chmod 000 a.txt",
    ] {
        run(&floor(&s), &s.work, probe);
    }
    assert_eq!(
        before,
        (meta(&s.work.join("a.txt")), meta(&s.outside.join("marker")))
    );
    let outside = format!("touch {}/new", s.outside.display());
    assert!(!run(&floor(&s), &s.work, &outside).status.success());
    assert_eq!(
        fs::read_to_string(s.work.join("a.txt")).unwrap(),
        "inside\n"
    );
    assert!(!s.work.join("new.txt").exists() && !s.outside.join("new").exists());
}

#[test]
fn denied_files_are_unreadable_their_siblings_are_not() {
    if !usable() {
        return;
    }
    let s = scene();
    let mut policy = floor(&s);
    policy.deny_read = vec![s.work.join(".env"), s.work.join("sub/b.txt")];
    let out = run(&policy, &s.work, "cat a.txt; ls -a | sort | tr '\\n' ' '");
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).starts_with("inside\n"));
    assert!(
        stdout(&out).contains(".env"),
        "listing still works: {out:?}"
    );
    for probe in [
        "cat .env",
        "cat sub/b.txt",
        "cat ./sub/../.env",
        "grep -r SECRET .",
    ] {
        let out = run(&policy, &s.work, probe);
        assert!(
            !stdout(&out).contains("SECRET") && !stdout(&out).contains("deeper"),
            "{probe}: {out:?}"
        );
    }
}

#[test]
fn floor_has_no_network() {
    if !usable() {
        return;
    }
    let s = scene();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    for probe in [
        format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
        format!("python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"127.0.0.1\", {port})); print(\"connected\")'"),
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(\"connected\")'".to_string(),
    ] {
        let out = run(&floor(&s), &s.work, &probe);
        assert!(!stdout(&out).contains("connected"), "{probe}: {out:?}");
    }
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "nothing reached the listener");
}

#[test]
fn write_trees_allow_writes_inside_only_and_protect_carved_files() {
    if !usable() {
        return;
    }
    let s = scene();
    let mut policy = floor(&s);
    policy.write = vec![s.work.clone()];
    policy.deny_write = vec![s.work.join("a.txt")];
    let out = run(
        &policy,
        &s.work,
        "echo new > new.txt && mkdir d && echo x > sub/c && rm sub/c && cat new.txt",
    );
    assert_eq!(stdout(&out), "new\n", "{out:?}");
    for probe in [
        "echo changed > a.txt",
        "rm -f a.txt",
        "mv a.txt moved",
        "mv sub/b.txt a.txt",
        "ln -f sub/b.txt a.txt",
    ] {
        let out = run(&policy, &s.work, probe);
        assert!(!out.status.success(), "{probe} should fail: {out:?}");
    }
    assert_eq!(
        fs::read_to_string(s.work.join("a.txt")).unwrap(),
        "inside\n"
    );
    let out = run(
        &policy,
        &s.work,
        &format!("touch {}/x; touch link/y", s.outside.display()),
    );
    assert!(!out.status.success());
    assert!(!s.outside.join("x").exists() && !s.outside.join("y").exists());
}

#[test]
fn proxy_ports_reach_only_those_ports() {
    if !usable() || support().landlock_abi < 4 {
        return;
    }
    let s = scene();
    let open = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let open_port = open.local_addr().unwrap().port();
    let closed_port = closed.local_addr().unwrap().port();
    let mut policy = floor(&s);
    policy.network = Network::ProxyPorts {
        ports: vec![open_port],
        bind: false,
    };
    let out = run(
        &policy,
        &s.work,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{open_port} && echo connected"),
    );
    assert_eq!(stdout(&out), "connected\n", "{out:?}");
    let out = run(
        &policy,
        &s.work,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{closed_port} && echo connected"),
    );
    assert!(!stdout(&out).contains("connected"), "{out:?}");
    let udp = "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print(\"connected\")'";
    assert!(!stdout(&run(&policy, &s.work, udp)).contains("connected"));
}

#[test]
fn an_isolated_network_reaches_only_the_handed_over_listeners() {
    if !usable() || !support().user_namespaces {
        return;
    }
    let s = scene();
    let host = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    host.set_nonblocking(true).expect("nonblocking");
    let host_port = host.local_addr().unwrap().port();
    let mut policy = floor(&s);
    policy.network = Network::Isolated { listen: vec![3128] };
    let prepared = Prepared::new(&policy, support()).expect("policy prepares");
    let entry = prepared.entry();
    let flags = prepared.clone_flags();
    let script = format!(
        "exec 4<>/dev/tcp/127.0.0.1/{host_port} && echo host-reached; \
         exec 3<>/dev/tcp/127.0.0.1/3128 && echo through-the-proxy >&3 && echo proxy-reached"
    );
    let mut cmd = Command::new("/bin/bash");
    cmd.arg("-c").arg(script).current_dir(&s.work);
    // SAFETY: as in `run`.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            enter(&entry).map_err(|e| std::io::Error::from_raw_os_error(e.errno()))
        });
    }
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let listeners = prepared.take_listeners().expect("listeners");
    assert_eq!(listeners.len(), 1);
    let (mut conn, _) = listeners[0].accept().expect("the command connects");
    let mut got = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(&mut conn)
        .read_line(&mut got)
        .expect("read");
    assert_eq!(got, "through-the-proxy\n");
    let out = child.wait_with_output().expect("wait");
    let text = stdout(&out);
    assert!(!text.contains("host-reached"), "{text}");
    assert!(text.contains("proxy-reached"), "{text}");
    assert!(host.accept().is_err(), "the host's listener saw nothing");
}
