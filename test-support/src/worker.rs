//! A real remote worker: `baton mcp serve --http 127.0.0.1:0` as a child
//! process, killed when dropped. The tests and the load bench start
//! workers the same way.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub struct Worker {
    pub child: Child,
    /// The MCP endpoint the worker printed on stderr.
    pub url: String,
    /// Its working directory (also holds its `.state`).
    pub dir: PathBuf,
}

impl Worker {
    /// Starts `bin` (the `baton` binary) as a worker in `dir` (created),
    /// accepting bearer `token`, with every permission granted; returns
    /// once it listens.
    pub fn start(bin: &str, dir: &Path, token: &str) -> Worker {
        Worker::start_with_env(bin, dir, token, &[])
    }

    /// [`Worker::start`] with `env` added to the worker's environment.
    pub fn start_with_env(bin: &str, dir: &Path, token: &str, env: &[(&str, &str)]) -> Worker {
        Worker::start_with(bin, dir, token, &[], env)
    }

    /// [`Worker::start`] with `args` added to `mcp serve`'s and `env` to
    /// the worker's environment.
    pub fn start_with(
        bin: &str,
        dir: &Path,
        token: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Worker {
        std::fs::create_dir_all(dir).unwrap();
        let mut child = Command::new(bin)
            .args(["mcp", "serve", "--http", "127.0.0.1:0"])
            .args(args)
            .args(["--permission-mode", "bypassPermissions", "--cwd"])
            .arg(dir)
            .arg("--state-dir")
            .arg(dir.join(".state"))
            .env("BATON_MCP_TOKEN", token)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let url = listening_url(child.stderr.take().unwrap());
        Worker {
            child,
            url,
            dir: dir.to_path_buf(),
        }
    }

    /// SIGKILL, then wait for it: the worker is gone when this returns.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The URL `baton mcp serve --http` says it listens on, read from its
/// stderr; the rest of stderr is drained on a thread so the server never
/// blocks on a full pipe.
pub fn listening_url(stderr: std::process::ChildStderr) -> String {
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the server exited before listening")
            .unwrap();
        if let Some(i) = line.find("http://") {
            break line[i..].trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    url
}

/// The port of a URL such as `http://127.0.0.1:4321/mcp`.
pub fn port_of(url: &str) -> u16 {
    crate::proxy::addr_of(url).port()
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}
