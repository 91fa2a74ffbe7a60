//! Where a line ends, according to `input::finished` and to bash.
//!
//! A line that `finished` accepts is typed into the shell, and the next
//! write is judged on its own; if bash were still reading the same command
//! (a trailing `\`, an open quote, a pipe waiting for its right side, a
//! here-document), it would join the two. So every line `finished` accepts
//! must be one that an interactive bash runs at its newline: after it,
//! bash shows its primary prompt (`PS1`), not the continuation prompt
//! (`PS2`). Lines are generated from a seed out of pieces that open and
//! close constructs; each is typed into one `bash --norc --noediting -i`
//! on a PTY, and a continuation is abandoned with Ctrl-C. The pieces run
//! nothing but `echo`, `true` and `:`.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::libc;

use super::input::finished;

const PRIMARY: &str = "@ps1@";
const CONTINUATION: &str = "@ps2@";

const PIECES: &[&str] = &[
    "echo a",
    "true",
    ":",
    " ",
    "'",
    "\"",
    "\\",
    "\\\\",
    "|",
    "&&",
    "||",
    ";",
    "$(",
    "`",
    ")",
    "(",
    "{ ",
    " }",
    "for i in 1; do ",
    "done",
    "if true; then ",
    "fi",
    "<<EOF",
    "<<< w",
    "#",
    "case a in a) ",
    ";;",
    "esac",
    "f() ",
    "[[ a ",
    "]]",
    "$((",
    "))",
    "'\\''",
    "${",
    "}",
    "x=(",
    "<(",
];

struct Shell {
    child: Child,
    pty: std::fs::File,
    seen: String,
}

impl Shell {
    fn start() -> Shell {
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let slave = std::fs::File::from(pty.slave);
        let mut command = Command::new("bash");
        // SAFETY: only async-signal-safe calls between fork and exec. The
        // terminal must be bash's controlling terminal for Ctrl-C to
        // interrupt it.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .args(["--norc", "--noprofile", "--noediting", "-i"])
            .env("PS1", PRIMARY)
            .env("PS2", CONTINUATION)
            .env("TERM", "dumb")
            .env_remove("PROMPT_COMMAND")
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave))
            .spawn()
            .expect("bash starts");
        let pty = std::fs::File::from(pty.master);
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let flags = libc::fcntl(pty.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(pty.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let mut shell = Shell {
            child,
            pty,
            seen: String::new(),
        };
        shell.prompt();
        shell
    }

    /// Reads until a prompt ends the output; which one.
    fn prompt(&mut self) -> &'static str {
        let until = Instant::now() + Duration::from_secs(10);
        let mut buf = [0u8; 4096];
        loop {
            for p in [PRIMARY, CONTINUATION] {
                if self.seen.trim_end().ends_with(p) {
                    self.seen.clear();
                    return p;
                }
            }
            assert!(
                Instant::now() < until,
                "no prompt from bash; it printed {:?}",
                self.seen
            );
            match self.pty.read(&mut buf) {
                Ok(n) if n > 0 => self.seen.push_str(&String::from_utf8_lossy(&buf[..n])),
                _ => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }

    fn type_line(&mut self, line: &str) -> &'static str {
        self.pty
            .write_all(line.as_bytes())
            .expect("write to the pty");
        self.prompt()
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_line_judged_finished_is_run_by_bash_at_its_newline() {
    let mut seed: u64 = 0x35_1e0d;
    let mut next = || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as usize
    };
    let mut lines: Vec<String> = [
        "echo x\\",
        "echo x |",
        "cat <<EOF",
        "echo 'a",
        "echo $(",
        "f()",
        "echo x &&",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    for _ in 0..400 {
        let line: String = (0..1 + next() % 5)
            .map(|_| PIECES[next() % PIECES.len()])
            .collect();
        lines.push(line);
    }
    let mut shell = Shell::start();
    let (mut judged_finished, mut mismatches) = (0, Vec::new());
    for line in lines {
        let line = format!("{line}\n");
        let ours = finished(&line);
        let prompt = shell.type_line(&line);
        if prompt == CONTINUATION {
            // Abandon the unfinished command.
            shell.pty.write_all(b"\x03").expect("write to the pty");
            while shell.prompt() != PRIMARY {}
        }
        if ours {
            judged_finished += 1;
            if prompt != PRIMARY {
                mismatches.push(line);
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "judged finished, but bash reads on: {mismatches:?}"
    );
    eprintln!("{judged_finished} lines judged finished");
    assert!(
        judged_finished >= 40,
        "only {judged_finished} lines judged finished"
    );
}
