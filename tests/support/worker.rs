//! A real remote worker: `baton mcp serve --http 127.0.0.1:0` as a child
//! process, killed when dropped. Shared by `tests/remote.rs` and
//! `benches/remote.rs` (both include it with `#[path]`), so the test and the
//! load bench start workers the same way.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The `baton` binary of this package (tests and benches both get it).
pub const BATON: &str = env!("CARGO_BIN_EXE_baton");

pub struct Worker {
    pub child: Child,
    /// The MCP endpoint the worker printed on stderr.
    pub url: String,
    /// Its working directory (also holds its `.state`).
    pub dir: PathBuf,
}

impl Worker {
    /// Starts a worker in `dir` (created), accepting bearer `token`, with
    /// every permission granted; returns once it listens.
    pub fn start(dir: &Path, token: &str) -> Worker {
        Worker::start_with_env(dir, token, &[])
    }

    /// [`Worker::start`] with `env` added to the worker's environment.
    pub fn start_with_env(dir: &Path, token: &str, env: &[(&str, &str)]) -> Worker {
        std::fs::create_dir_all(dir).unwrap();
        let mut child = Command::new(BATON)
            .args(["mcp", "serve", "--http", "127.0.0.1:0"])
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
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("worker exited early").unwrap();
            if let Some(i) = line.find("http://") {
                break line[i..].trim().to_string();
            }
        };
        // Keep draining stderr so the worker never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
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

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An engine in `local` whose `tools` run on `workers` (the rest locally),
/// every permission granted, sessions spread by `key`.
pub fn routed_engine(
    local: &Path,
    workers: &[&Worker],
    key: &str,
    token: &str,
    tools: &[&str],
) -> baton::Engine {
    let urls: Vec<String> = workers.iter().map(|w| w.url.clone()).collect();
    engine_on_urls(local, &urls, key, token, tools)
}

/// [`routed_engine`] with the workers given by URL (one may be down).
pub fn engine_on_urls(
    local: &Path,
    urls: &[String],
    key: &str,
    token: &str,
    tools: &[&str],
) -> baton::Engine {
    use baton::engine::permission::AllowAllUnsafe;
    use baton::engine::{PoolSpec, ToolPool};
    let builtins = baton::BuiltinConfig::default().tools().unwrap();
    let config = baton::remote::RemoteConfig {
        workers: urls.to_vec(),
        token: Some(token.into()),
        tools: tools.iter().map(|t| t.to_string()).collect(),
    };
    let routed = baton::remote::route(builtins, &config, key).unwrap();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: routed,
            ..Default::default()
        },
        &AllowAllUnsafe,
    );
    baton::Engine::builder(pool)
        .cwd(local)
        .state_dir(local.join(".state"))
        .policy(std::sync::Arc::new(AllowAllUnsafe))
        .build()
        .expect("the engine builds")
}
