//! A real `baton mcp serve --http` for the file-transfer tests: its own
//! workspace and settings, a permission mode that writes inside the
//! workspace without asking (so what is refused is refused by a rule, a
//! protected path or the workspace's bounds), and raw HTTP to speak to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// A worker process; killed (and reaped) on drop.
pub struct FilesWorker {
    child: Child,
    /// The port it listens on (on 127.0.0.1).
    pub port: u16,
    /// Its workspace (`--cwd`), resolved.
    pub work: PathBuf,
    /// A directory beside the workspace, for the test's own files.
    pub outside: PathBuf,
    _root: tempfile::TempDir,
}

/// One raw HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The status line and header lines.
    pub head: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

impl FilesWorker {
    /// A worker on 127.0.0.1 without a token; `settings` is the JSON of
    /// its settings file, where `{work}` stands for its workspace.
    pub fn start(settings: &str, extra: &[&str]) -> FilesWorker {
        FilesWorker::start_on("127.0.0.1:0", None, settings, extra)
    }

    /// A worker bound to `bind`, with `token` if given.
    pub fn start_on(
        bind: &str,
        token: Option<&str>,
        settings: &str,
        extra: &[&str],
    ) -> FilesWorker {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let work = base.join("work");
        let outside = base.join("outside");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let settings_path = base.join("settings.json");
        std::fs::write(
            &settings_path,
            settings.replace("{work}", work.to_str().unwrap()),
        )
        .unwrap();
        let mut cmd = super::baton();
        cmd.args(["mcp", "serve", "--http", bind, "--cwd"])
            .arg(&work)
            .arg("--settings")
            .arg(&settings_path)
            .arg("--state-dir")
            .arg(base.join("state"))
            .args(["--permission-mode", "acceptEdits"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env_remove("BATON_MCP_TOKEN");
        if let Some(token) = token {
            cmd.env("BATON_MCP_TOKEN", token);
        }
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let port = loop {
            let line = lines
                .next()
                .expect("the worker exited before listening")
                .unwrap();
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let addr = rest.trim_end_matches("/mcp");
                break addr.rsplit(':').next().unwrap().parse().unwrap();
            }
        };
        // Keep draining stderr so the worker never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        FilesWorker {
            child,
            port,
            work,
            outside,
            _root: root,
        }
    }

    /// The worker's MCP endpoint, as a host names it.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Sends `method` on `/v1/files/{path}` (`path` as it goes in the URL)
    /// with `headers` and `body`, and reads the whole answer.
    pub fn call(&self, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Answer {
        let mut request = format!(
            "{method} /v1/files/{path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\
             Content-Length: {}\r\n",
            self.port,
            body.len()
        )
        .into_bytes();
        for h in headers {
            request.extend_from_slice(h.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(body);
        self.raw(&request, method == "HEAD")
    }

    /// Sends `request` as it is; reads the answer until the server closes.
    pub fn raw(&self, request: &[u8], head_only: bool) -> Answer {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(request).unwrap();
        let mut all = Vec::new();
        if head_only {
            // No body follows; read until the blank line.
            let mut byte = [0u8; 1];
            while !all.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap() == 1 {
                all.push(byte[0]);
            }
        } else {
            s.read_to_end(&mut all).unwrap();
        }
        let split = all
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP answer");
        let head = String::from_utf8_lossy(&all[..split]).into_owned();
        let status = head[9..12].parse().unwrap();
        Answer {
            status,
            head,
            body: all[split + 4..].to_vec(),
        }
    }
}

impl Drop for FilesWorker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every temporary a transfer leaves below `dir` (none should be left).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.to_string_lossy().ends_with(".baton-transfer") {
            found.push(path.clone());
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(leftovers(&path));
        }
    }
    found
}

/// Every file below `dir` with its content, by path relative to `dir`
/// (links by their target), for comparing trees byte for byte.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    fn visit(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else if kind.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                visit(root, &path, out);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    visit(dir, dir, &mut out);
    out
}
