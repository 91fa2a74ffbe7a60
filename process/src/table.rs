//! A snapshot of `/proc`: who is whose parent, in which group and session,
//! started when, and whether it is still running or only a zombie.

use std::fs;
use std::io::Read;

use nix::unistd::Pid;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcInfo {
    /// The process id.
    pub pid: i32,
    /// Its parent's id.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// Its session.
    pub session: i32,
    /// Clock ticks after boot; a process started before another cannot be
    /// its descendant.
    pub start: u64,
    /// Threads in the process.
    pub threads: u32,
    /// `Z` (zombie) and `X` (dead) are gone for every purpose but reaping.
    pub state: char,
}

impl ProcInfo {
    /// Still running (or stopped): not a zombie waiting for its parent.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }

    /// Reads `/proc/<pid>/stat`; `None` when the process is gone (or the
    /// line cannot be read).
    pub fn read(pid: i32) -> Option<ProcInfo> {
        // One `read` into the stack: a stat line is a few hundred bytes, and
        // this runs for every process of every scan (`fs::read_to_string`
        // would add a `statx` and a second `read` per file).
        let mut file = fs::File::open(format!("/proc/{pid}/stat")).ok()?;
        let mut buf = [0u8; 1024];
        let n = file.read(&mut buf).ok()?;
        if n == buf.len() {
            // Not expected from the kernel; read the rest the slow way.
            let mut all = buf.to_vec();
            file.read_to_end(&mut all).ok()?;
            return parse_stat(&String::from_utf8_lossy(&all));
        }
        // Lossy: the command name is whatever bytes the program chose (a
        // name that is not UTF-8 must not make a process invisible); the
        // fields after it are ASCII.
        parse_stat(&String::from_utf8_lossy(buf.get(..n)?))
    }
}

/// Reads a small `/proc` file whole into `out`: open, read until EOF,
/// close. (`fs::read` would first ask for the size with `statx` and
/// `lseek`, which `/proc` answers with 0 anyway: two wasted calls per file,
/// on a path taken for every process of every scan.)
pub(crate) fn read_proc(path: &str, out: &mut Vec<u8>) -> bool {
    out.clear();
    let Ok(mut file) = fs::File::open(path) else {
        return false;
    };
    let mut chunk = [0u8; 4096];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return true,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// Parses a `stat` line. The command name sits in parentheses and may hold
/// spaces and parentheses itself, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcInfo> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let field = |n: usize| rest.get(n - 3).copied();
    Some(ProcInfo {
        pid,
        state: field(3)?.chars().next()?,
        ppid: field(4)?.parse().ok()?,
        pgrp: field(5)?.parse().ok()?,
        session: field(6)?.parse().ok()?,
        start: field(22)?.parse().ok()?,
        threads: field(20)?.parse().ok()?,
    })
}

/// Every process visible in `/proc` (those that vanish while reading are
/// simply absent).
pub fn snapshot() -> Vec<ProcInfo> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(ProcInfo::read)
        .collect()
}

/// Whether `pid`'s environment holds exactly `entry` (`NAME=value`), or
/// starts with it when `prefix` is set. Unreadable (gone, other user,
/// zombie) means no.
pub fn environ_has(pid: i32, entry: &[u8], prefix: bool) -> bool {
    let mut env = Vec::new();
    if !read_proc(&format!("/proc/{pid}/environ"), &mut env) {
        return false;
    }
    env.split(|&b| b == 0).any(|kv| {
        if prefix {
            kv.starts_with(entry)
        } else {
            kv == entry
        }
    })
}

/// This process's pid.
pub fn own_pid() -> i32 {
    Pid::this().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_names() {
        let line =
            "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10";
        let info = parse_stat(line).unwrap();
        assert_eq!(info.pid, 4242);
        assert_eq!(info.state, 'S');
        assert_eq!((info.ppid, info.pgrp, info.session), (1, 4242, 4242));
        assert_eq!(info.start, 987654);
        assert_eq!(info.threads, 1);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn sees_itself() {
        let me = ProcInfo::read(own_pid()).unwrap();
        assert!(me.is_live());
        assert!(snapshot().iter().any(|p| p.pid == me.pid));
    }
}
