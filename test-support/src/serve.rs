//! A live `baton serve` process for the protocol tests: JSON lines in,
//! JSON lines out (read on a thread, so waits have timeouts).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// How long any one line may take.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Serve {
    pub child: Child,
    lines: mpsc::Receiver<Value>,
}

impl Serve {
    /// `baton serve` with `args`; `bin` is the `baton` binary.
    pub fn start(bin: &str, args: &[&str]) -> Serve {
        Serve::start_with_env(bin, args, &[])
    }

    /// `baton serve` with `args` and the environment variables `env` added.
    pub fn start_with_env(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut child = Command::new(bin)
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(serde_json::from_str(&line).unwrap());
            }
        });
        Serve { child, lines }
    }

    /// Bytes as they are, valid JSON lines or not.
    pub fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, v: Value) {
        self.raw(format!("{v}\n").as_bytes());
    }

    /// The next line, whatever it is.
    pub fn any_next(&self) -> Value {
        self.lines.recv_timeout(PATIENCE).unwrap()
    }

    /// The next line that is not a lifecycle line (`call_*`, sent whenever
    /// a call's state changes).
    pub fn next(&self) -> Value {
        loop {
            let line = self.any_next();
            if !line["type"].as_str().unwrap_or("").starts_with("call_") {
                return line;
            }
        }
    }

    /// The next line of `kind`, skipping others.
    pub fn next_of(&self, kind: &str) -> Value {
        self.until(kind).pop().unwrap()
    }

    /// Lines up to one of `kind` (included), lifecycle lines too.
    pub fn until(&self, kind: &str) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let line = self.line_before(kind, &out);
            let stop = line["type"] == kind;
            out.push(line);
            if stop {
                return out;
            }
        }
    }

    /// Lines up to the next `done` (included), answering each permission
    /// request with `answer(request)` as it comes.
    pub fn answering(&mut self, mut answer: impl FnMut(&Value) -> Value) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let line = self.line_before("done", &out);
            if line["type"] == "permission_request" {
                let mut reply = answer(&line);
                reply["type"] = json!("approve");
                reply["request_id"] = line["request_id"].clone();
                self.send(reply);
            }
            let stop = line["type"] == "done";
            out.push(line);
            if stop {
                return out;
            }
        }
    }

    /// The next line while waiting for one of `kind`; the panic shows what
    /// came so far.
    fn line_before(&self, kind: &str, got: &[Value]) -> Value {
        self.lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no `{kind}` line ({e}); got {got:?}"))
    }

    /// Shuts the session down: it exits successfully and writes no batch
    /// line more (no late or duplicate results). Notifications, which
    /// belong to no batch (the task list as tasks end), may still be read.
    pub fn finish(mut self) {
        self.send(json!({"type": "shutdown"}));
        assert!(self.child.wait().unwrap().success());
        loop {
            match self.lines.recv_timeout(Duration::from_secs(10)) {
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
                Ok(line) if line["type"] == "notification" => {}
                Ok(line) => panic!("line after shutdown: {line}"),
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("stdout still open after exit"),
            }
        }
    }
}
