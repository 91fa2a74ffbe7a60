//! The conversation as a Claude Code transcript: one JSON line per message,
//! so that published hooks that read `transcript_path` (the last assistant
//! message, the tools used, the user's prompts) work on Baton's sessions.
//!
//! Each line has the fields those hooks read: `type` (`user` or
//! `assistant`), `message` (the message as the provider has it; with
//! Anthropic exactly Claude Code's `{role, content}` with content blocks),
//! `uuid`, `parentUuid` (the line before, `null` for the first),
//! `sessionId`, `timestamp` (RFC 3339, UTC), `cwd`, plus `isSidechain` and
//! `userType` as Claude Code writes them. Tool results count as `user`
//! lines, as in Claude Code. Lines are appended as the conversation grows
//! and flushed at once, so a hook fired right after sees them.

use std::collections::hash_map::RandomState;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The session's transcript in Claude Code's JSONL format, appended to as
/// the conversation grows (hooks read it through `transcript_path`).
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    state: Mutex<State>,
}

struct State {
    file: File,
    /// Conversation items already written.
    written: usize,
    last_uuid: Option<String>,
    ids: RandomState,
    counter: u64,
}

// Not derived: the open file and id generator say nothing a reader needs.
baton_engine::debug_fields! { Transcript { path, session_id, .. } }

impl Transcript {
    /// Opens (appending to) the transcript at `path`.
    pub fn open(path: &Path, session_id: &str) -> std::io::Result<Transcript> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Transcript {
            path: path.to_path_buf(),
            session_id: session_id.to_string(),
            state: Mutex::new(State {
                file,
                written: 0,
                last_uuid: None,
                ids: RandomState::new(),
                counter: 0,
            }),
        })
    }

    /// Where the transcript is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the items of `items` not written yet (the conversation only
    /// grows), with `cwd` the session's working directory now.
    pub fn record(&self, items: &[Value], cwd: &Path) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let start = state.written.min(items.len());
        let mut out = String::new();
        for item in &items[start..] {
            let uuid = state.next_uuid();
            let line = json!({
                "parentUuid": state.last_uuid,
                "isSidechain": false,
                "userType": "external",
                "cwd": cwd.display().to_string(),
                "sessionId": self.session_id,
                "version": env!("CARGO_PKG_VERSION"),
                "type": kind(item),
                "message": item,
                "uuid": uuid,
                "timestamp": crate::timestamp::millis(SystemTime::now()),
            });
            out.push_str(&line.to_string());
            out.push('\n');
            state.last_uuid = Some(uuid);
        }
        state.written = items.len();
        state.file.write_all(out.as_bytes())?;
        state.file.flush()
    }
}

impl State {
    /// A random (version 4) UUID: random keys from the standard library's
    /// hasher, over a counter and the clock.
    fn next_uuid(&mut self) -> String {
        self.counter += 1;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let half = |salt: u64| {
            let mut h = self.ids.build_hasher();
            h.write_u64(self.counter);
            h.write_u128(nanos);
            h.write_u64(salt);
            h.finish()
        };
        let (a, b) = (half(1), half(2));
        let a = (a & !0xf000) | 0x4000;
        let b = (b & !(0xc << 60)) | (0x8 << 60);
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
}

/// `user` for the user's messages and tool results, `assistant` for what
/// the model said (in any of the three wire formats).
fn kind(item: &Value) -> &'static str {
    let role = item.get("role").and_then(Value::as_str);
    let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
    match role {
        Some("user") | Some("tool") => "user",
        Some(_) => "assistant",
        None if item_type.ends_with("_output") => "user",
        None => "assistant",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_chain_and_only_new_items_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t/transcript.jsonl");
        let t = Transcript::open(&path, "s1").unwrap();
        let mut items = vec![json!({"role": "user", "content": "hi"})];
        t.record(&items, dir.path()).unwrap();
        items.push(json!({"role": "assistant", "content": [{"type": "text", "text": "yo"}]}));
        items.push(json!({"type": "function_call_output", "call_id": "c", "output": "x"}));
        t.record(&items, dir.path()).unwrap();
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["parentUuid"], Value::Null);
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
        assert_eq!(lines[2]["parentUuid"], lines[1]["uuid"]);
        let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["user", "assistant", "user"]);
        assert_eq!(lines[1]["sessionId"], "s1");
        let uuid = lines[0]["uuid"].as_str().unwrap();
        assert_eq!(uuid.len(), 36);
        assert_eq!(&uuid[14..15], "4");
        assert_ne!(lines[0]["uuid"], lines[1]["uuid"]);
    }
}
