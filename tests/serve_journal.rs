//! `baton serve --journal`: a host that lost Baton (SIGKILL) restarts it
//! with `--resume ID --journal` and sends its calls again with the same
//! ids. A call that finished is answered from the journal and its command
//! does not run again; one that was running is answered as lost, with the
//! output it showed; another input under a known id, or the id of a call
//! that runs now, is refused. Without `--journal` nothing changes: the
//! same id runs again.

use std::path::PathBuf;
use std::time::Duration;

use baton_test_support::procs::{self, sleeping};
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// How long a process may take to start, go, or show output.
const PATIENCE: Duration = Duration::from_secs(30);

/// A workspace, a sessions directory, and settings allowing Bash.
struct Place {
    _dir: tempfile::TempDir,
    work: PathBuf,
    sessions: PathBuf,
    settings: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let work = work.canonicalize().unwrap();
        let sessions = dir.path().join("sessions");
        let settings = dir.path().join("settings.json");
        std::fs::write(&settings, r#"{"permissions": {"allow": ["Bash"]}}"#).unwrap();
        Place {
            _dir: dir,
            work,
            sessions,
            settings,
        }
    }

    /// A new session `id`; `journal` adds `--journal`.
    fn start(&self, id: &str, journal: bool) -> Serve {
        let state = self.sessions.join(id);
        let mut args = vec![
            "--state-dir",
            state.to_str().unwrap(),
            "--settings",
            self.settings.to_str().unwrap(),
            "--cwd",
            self.work.to_str().unwrap(),
        ];
        if journal {
            args.push("--journal");
        }
        Serve::start(BATON, &args)
    }

    /// Session `id` taken over by a new process; its `resumed` line read.
    fn resume(&self, id: &str, journal: bool) -> Serve {
        let state = self.sessions.join(id);
        let mut args = vec![
            "--state-dir",
            state.to_str().unwrap(),
            "--settings",
            self.settings.to_str().unwrap(),
            "--resume",
            id,
        ];
        if journal {
            args.push("--journal");
        }
        let s = Serve::start(BATON, &args);
        let resumed = s.next();
        assert_eq!(resumed["type"], "resumed", "{resumed}");
        s
    }

    fn journal_file(&self, id: &str) -> PathBuf {
        self.sessions.join(id).join("journal").join("journal.log")
    }

    fn lines_of(&self, file: &str) -> Vec<String> {
        std::fs::read_to_string(self.work.join(file))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

/// The `result` lines up to the next `done`.
fn results(s: &Serve) -> Vec<Value> {
    s.until("done")
        .into_iter()
        .filter(|l| l["type"] == "result")
        .collect()
}

fn text(result: &Value) -> String {
    result["block"]["content"].to_string()
}

/// SIGKILL, with no word to the process.
fn kill(mut s: Serve) {
    s.child.kill().unwrap();
    s.child.wait().unwrap();
}

#[test]
fn a_finished_call_sent_again_after_a_kill_is_answered_from_the_journal() {
    let place = Place::new();
    let append = "echo once >> log.txt; echo appended";
    let mut s = place.start("j-finished", true);
    s.send(message(vec![bash("t1", append)]));
    let first = results(&s);
    assert_eq!(first[0]["outcome"]["kind"], "success", "{first:?}");
    assert!(first[0].get("journal").is_none(), "{first:?}");
    // The host read the result, then lost Baton before it kept it.
    kill(s);

    let mut s = place.resume("j-finished", true);
    // The call again, with a new one after it: the journal's answer keeps
    // its place, the new call runs.
    s.send(message(vec![
        bash("t1", append),
        bash("t2", "echo twice >> log.txt; echo second"),
    ]));
    let again = results(&s);
    assert_eq!(again.len(), 2, "{again:?}");
    assert_eq!(again[0]["tool_use_id"], "t1");
    assert_eq!(again[0]["journal"]["state"], "finished", "{again:?}");
    assert_eq!(again[0]["block"], first[0]["block"]);
    assert_eq!(again[0]["outcome"], first[0]["outcome"]);
    assert_eq!(again[0]["details"]["exit_code"], 0, "{again:?}");
    assert_eq!(again[1]["tool_use_id"], "t2");
    assert!(again[1].get("journal").is_none(), "{again:?}");
    assert!(text(&again[1]).contains("second"), "{again:?}");
    assert_eq!(place.lines_of("log.txt"), ["once", "twice"]);
    s.finish();
}

#[test]
fn a_call_running_at_the_kill_is_answered_as_lost_with_its_output() {
    let place = Place::new();
    let marker = procs::marker("1000.");
    let command = format!("echo ran >> runs.txt; echo shown-{marker}; sleep {marker}");
    let mut s = place.start("j-lost", true);
    s.send(message(vec![bash("L1", &command)]));
    // Its output reached the host, and the journal's file.
    loop {
        let line = s.next();
        assert_ne!(line["type"], "result", "it ended: {line}");
        if line["type"] == "progress" && line.to_string().contains(&format!("shown-{marker}")) {
            break;
        }
    }
    let journal = place.journal_file("j-lost");
    assert!(
        procs::eventually(PATIENCE, || std::fs::read_to_string(&journal)
            .is_ok_and(|t| t.contains(&format!("shown-{marker}")))),
        "the output never reached the journal"
    );
    kill(s);
    assert!(
        procs::eventually(PATIENCE, || sleeping(&marker) == 0),
        "the command outlived serve"
    );

    let mut s = place.resume("j-lost", true);
    s.send(message(vec![bash("L1", &command)]));
    let got = results(&s);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["journal"], json!({"state": "lost", "started": true}));
    assert_eq!(got[0]["outcome"]["kind"], "internal");
    assert_eq!(got[0]["block"]["is_error"], true);
    let said = text(&got[0]);
    assert!(said.contains("was lost"), "{said}");
    assert!(said.contains("It had started"), "{said}");
    assert!(said.contains(&format!("shown-{marker}")), "{said}");
    // Not run again.
    assert_eq!(place.lines_of("runs.txt"), ["ran"]);
    assert_eq!(sleeping(&marker), 0);
    s.finish();
}

#[test]
fn without_the_journal_the_same_id_runs_again() {
    let place = Place::new();
    let append = "echo run >> log.txt";
    let mut s = place.start("plain", false);
    s.send(message(vec![bash("p1", append)]));
    assert_eq!(results(&s)[0]["outcome"]["kind"], "success");
    kill(s);
    assert!(!place.sessions.join("plain").join("journal").exists());

    // Resumed as before: the call runs again.
    let mut s = place.resume("plain", false);
    s.send(message(vec![bash("p1", append)]));
    let got = results(&s);
    assert!(got[0].get("journal").is_none(), "{got:?}");
    assert_eq!(place.lines_of("log.txt").len(), 2);
    s.finish();

    // The journal answers only for what it saw: the first journaled run
    // runs the call, the next sending is answered.
    let mut s = place.resume("plain", true);
    s.send(message(vec![bash("p1", append)]));
    assert!(results(&s)[0].get("journal").is_none());
    assert_eq!(place.lines_of("log.txt").len(), 3);
    s.send(message(vec![bash("p1", append)]));
    assert_eq!(results(&s)[0]["journal"]["state"], "finished");
    assert_eq!(place.lines_of("log.txt").len(), 3);
    s.finish();
}

#[test]
fn another_input_under_a_known_id_is_refused() {
    let place = Place::new();
    let mut s = place.start("j-conflict", true);
    s.send(message(vec![bash("c1", "echo first >> log.txt")]));
    assert_eq!(results(&s)[0]["outcome"]["kind"], "success");
    kill(s);

    let mut s = place.resume("j-conflict", true);
    s.send(message(vec![bash("c1", "echo other >> other.txt")]));
    let got = results(&s);
    assert_eq!(got[0]["outcome"]["kind"], "invalid_input", "{got:?}");
    assert!(text(&got[0]).contains("already used"), "{got:?}");
    assert!(
        !place.work.join("other.txt").exists(),
        "the other input ran"
    );
    assert_eq!(place.lines_of("log.txt"), ["first"]);
    s.finish();
}

#[test]
fn the_id_of_a_call_running_now_is_answered_as_still_running() {
    let place = Place::new();
    let marker = procs::marker("1000.");
    let command = format!("echo ran >> runs.txt; sleep {marker}");
    let mut s = place.start("j-running", true);
    s.send(message(vec![bash("r1", &command)]));
    assert!(
        procs::eventually(PATIENCE, || sleeping(&marker) == 1),
        "the call never started"
    );
    // The same call again, as a second message while the first runs.
    s.send(message(vec![bash("r1", &command)]));
    let lines = s.until("done");
    let done = lines.last().unwrap();
    assert_eq!(done["batch"], 2, "{lines:?}");
    let got: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(got.len(), 1, "{lines:?}");
    assert_eq!(got[0]["journal"]["state"], "running", "{got:?}");
    assert_eq!(got[0]["outcome"]["kind"], "invalid_input");
    assert!(text(got[0]).contains("still running"), "{got:?}");
    // The first one's own result comes in its message.
    s.send(json!({"type": "interrupt", "batch": 1}));
    let first = results(&s);
    assert_eq!(first[0]["outcome"]["kind"], "cancelled", "{first:?}");
    assert_eq!(place.lines_of("runs.txt"), ["ran"]);
    s.finish();
}
