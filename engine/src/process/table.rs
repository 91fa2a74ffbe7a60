//! A snapshot of `/proc`: who is whose parent, in which group and session,
//! started when, and whether it is still running or only a zombie.

use std::fs;

use nix::unistd::Pid;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Clock ticks after boot; a process started before another cannot be
    /// its descendant.
    pub start: u64,
    /// `Z` (zombie) and `X` (dead) are gone for every purpose but reaping.
    pub state: char,
}

impl ProcInfo {
    /// Still running (or stopped): not a zombie waiting for its parent.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }

    pub fn read(pid: i32) -> Option<ProcInfo> {
        let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(&text)
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
    let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
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
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn sees_itself() {
        let me = ProcInfo::read(own_pid()).unwrap();
        assert!(me.is_live());
        assert!(snapshot().iter().any(|p| p.pid == me.pid));
    }
}
