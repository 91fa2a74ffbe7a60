//! The lines of the journal file, and the digest that ties an id to its input.
//!
//! One JSON object per line, appended. A line cut short by a crash is the
//! last one, and is ignored (and cut off) when the journal is opened again.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One event of one call. `s` and `id` name the call (session, call id).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum Record {
    /// The call arrived; nothing of it has run.
    Received {
        s: String,
        id: String,
        tool: String,
        digest: String,
        /// Milliseconds since the Unix epoch.
        at: u64,
    },
    /// The tool itself began: from here on, a crash may leave side effects.
    Started { s: String, id: String },
    /// What the call showed while it ran (the latest of these is what a
    /// call lost in a crash reports).
    Output {
        s: String,
        id: String,
        seq: u64,
        text: String,
    },
    /// The call's result (shared with the journal's state: writing it
    /// copies nothing).
    Finished {
        s: String,
        id: String,
        result: Arc<Value>,
    },
    /// The call ended without a result (its worker died, or whatever ran it
    /// went away).
    Lost {
        s: String,
        id: String,
        started: bool,
        output: String,
        why: String,
    },
    /// The call finished, but its result was dropped to keep the journal
    /// within its bounds; the id stays known so it is never run again.
    Pruned {
        s: String,
        id: String,
        tool: String,
        digest: String,
        at: u64,
    },
}

impl Record {
    /// The call this record belongs to.
    pub(crate) fn key(&self) -> (&str, &str) {
        match self {
            Record::Received { s, id, .. }
            | Record::Started { s, id }
            | Record::Output { s, id, .. }
            | Record::Finished { s, id, .. }
            | Record::Lost { s, id, .. }
            | Record::Pruned { s, id, .. } => (s, id),
        }
    }

    /// The line to append, newline included. Serialising a record of strings,
    /// numbers and a `Value` cannot fail; should it, the line says so rather
    /// than corrupting the file.
    pub(crate) fn line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).unwrap_or_else(|e| {
            format!("{{\"t\":\"unwritable\",\"why\":{:?}}}", e.to_string()).into_bytes()
        });
        line.push(b'\n');
        line
    }
}

/// The digest of a call's tool and input: a call id that comes back with
/// another input is an error, not the same call. Object keys are sorted
/// here (whatever order the map keeps), so two encodings of the same
/// input agree.
pub fn digest(tool: &str, input: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    feed(&mut hasher, input);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Feeds `value` with object keys in sorted order: serde_json keeps
/// insertion order when any crate in the build turns on `preserve_order`.
/// Leaves are written straight into the hasher (an input may hold a file's
/// content: no copy of it is made).
fn feed(hasher: &mut Sha256, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hasher.update(b"{");
            for k in keys {
                write(hasher, k);
                hasher.update(b":");
                feed(hasher, &map[k]);
                hasher.update(b",");
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for v in items {
                feed(hasher, v);
                hasher.update(b",");
            }
            hasher.update(b"]");
        }
        other => write(hasher, other),
    }
}

/// `value`'s JSON, into the hasher.
fn write(hasher: &mut Sha256, value: &impl Serialize) {
    struct Into<'a>(&'a mut Sha256);
    impl std::io::Write for Into<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing into a hasher cannot fail.
    let _ = serde_json::to_writer(Into(hasher), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_ignores_key_order_and_tells_inputs_apart() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":[1,2]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":[1,2],"a":1}"#).unwrap();
        assert_eq!(digest("Bash", &a), digest("Bash", &b));
        assert_ne!(digest("Bash", &a), digest("Read", &a));
        assert_ne!(
            digest("Bash", &a),
            digest("Bash", &json!({"a": 2, "b": [1, 2]}))
        );
    }

    #[test]
    fn records_round_trip_as_one_line() {
        let r = Record::Output {
            s: "s".into(),
            id: "x".into(),
            seq: 3,
            text: "a\nb".into(),
        };
        let line = r.line();
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let back: Record = serde_json::from_slice(&line).unwrap();
        assert_eq!(back.key(), ("s", "x"));
    }
}
