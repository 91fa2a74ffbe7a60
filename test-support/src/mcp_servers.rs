//! The MCP test servers of `tools/mcp/tests/servers` (Python, official
//! SDK or hand-written JSON-RPC), which the MCP client's tests and the
//! root package's tests both start: their paths, and an HTTP one as a
//! child process.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// The test server script `name` (such as `misbehaving.py`).
pub fn script(name: &str) -> PathBuf {
    crate::workspace()
        .join("tools/mcp/tests/servers")
        .join(name)
}

/// A Python test server serving HTTP on a free port it prints as
/// `PORT <n>`; its process group is killed on drop.
pub struct HttpChild {
    child: Child,
    pub url: String,
}

impl HttpChild {
    /// Starts the server script `script_name` with `args`; returns once it
    /// printed its port.
    pub fn start(script_name: &str, args: &[&str]) -> HttpChild {
        let mut child = Command::new("python3")
            .arg("-u")
            .arg(script(script_name))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("python3 is needed (run ./.ci/deps)");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server's first line");
        let port: u16 = line
            .trim()
            .trim_start_matches("PORT ")
            .parse()
            .unwrap_or_else(|e| panic!("{script_name} printed {line:?}, not its port: {e}"));
        HttpChild {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(pid, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}
