//! The journal's state in memory, kept in step with its file.
//!
//! Every change happens under one lock, and its record is queued to the
//! writer under the same lock, so the file replays to the state. Records
//! that must be durable are awaited after the lock is released; a result
//! becomes visible to readers only once it is on disk, so an answer a host
//! got is always one the journal can give again.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::oneshot;

use crate::live::{Join, Live};
use crate::record::Record;
use crate::writer::{Job, Writer};
use crate::{CallKey, Ended, JournalError, Limits, Lost, Status};

const FILE: &str = "journal.log";

#[derive(Debug)]
pub(crate) struct Book {
    path: Option<PathBuf>,
    limits: Limits,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    calls: HashMap<CallKey, Entry>,
    /// Keys in the order they were received, for pruning and listing.
    order: VecDeque<CallKey>,
    writer: Option<Writer>,
    /// Bytes in the file (or that would be, for a journal in memory).
    bytes: u64,
    running: usize,
}

#[derive(Debug)]
struct Entry {
    tool: String,
    digest: String,
    at: u64,
    phase: Phase,
    /// An end whose record is queued but not yet on disk: the file's
    /// snapshot must hold it, readers must not see it yet.
    ending: Option<Ended>,
}

#[derive(Debug)]
enum Phase {
    Running(Arc<Live>),
    Ended { ended: Ended, started: bool },
}

pub(crate) enum Begun {
    New(Arc<Live>),
    Join(Join),
    Ended(Ended),
}

impl Book {
    pub(crate) fn in_memory(limits: Limits) -> Book {
        Book {
            path: None,
            limits,
            state: Mutex::new(State::default()),
        }
    }

    pub(crate) fn open(dir: &Path, limits: Limits) -> Result<Book, JournalError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |e: std::io::Error| JournalError::Io {
                path: path.clone(),
                why: e.to_string(),
            }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join(FILE);
        let mut state = State::default();
        match std::fs::File::open(&path) {
            Ok(file) => replay(&mut state, BufReader::new(file)).map_err(io(&path))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&path)(e)),
        }
        // Rewrite what was found (calls that were running now lost, a line
        // cut by the crash gone) before anything new is appended.
        let contents = snapshot(&mut state, &limits);
        state.bytes = contents.len() as u64;
        let tmp = path.with_extension("log.tmp");
        std::fs::write(&tmp, &contents)
            .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(io(&path))?;
        state.writer = Some(Writer::start(&path).map_err(io(&path))?);
        Ok(Book {
            path: Some(path),
            limits,
            state: Mutex::new(state),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn begin(
        &self,
        key: &CallKey,
        tool: &str,
        digest: &str,
        after: u64,
    ) -> Result<Begun, JournalError> {
        let mut state = self.state();
        if let Some(entry) = state.calls.get(key) {
            if entry.digest != digest {
                return Err(JournalError::Conflict {
                    id: key.id.clone(),
                    tool: entry.tool.clone(),
                });
            }
            return Ok(match &entry.phase {
                Phase::Running(live) => Begun::Join(Join::new(live.clone(), after)),
                Phase::Ended { ended, .. } => Begun::Ended(ended.clone()),
            });
        }
        let live = Live::new(self.limits.output_bytes);
        let at = now_ms();
        state.calls.insert(
            key.clone(),
            Entry {
                tool: tool.to_string(),
                digest: digest.to_string(),
                at,
                phase: Phase::Running(live.clone()),
                ending: None,
            },
        );
        state.order.push_back(key.clone());
        state.running += 1;
        self.append(
            &mut state,
            &Record::Received {
                s: key.session.clone(),
                id: key.id.clone(),
                tool: tool.to_string(),
                digest: digest.to_string(),
                at,
            },
            None,
        );
        self.forget_beyond_max(&mut state);
        Ok(Begun::New(live))
    }

    pub(crate) async fn started(&self, key: &CallKey) -> Result<(), JournalError> {
        let record = Record::Started {
            s: key.session.clone(),
            id: key.id.clone(),
        };
        if !self.limits.sync_start {
            self.append(&mut self.state(), &record, None);
            return Ok(());
        }
        let (tx, rx) = oneshot::channel();
        self.append(&mut self.state(), &record, Some(tx));
        self.synced(rx).await
    }

    pub(crate) fn output(&self, key: &CallKey, live: &Live, text: String) -> u64 {
        let mut state = self.state();
        let mut end = text.len().min(self.limits.output_record_bytes);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = text[..end].to_string();
        let seq = live.push(text);
        let record = Record::Output {
            s: key.session.clone(),
            id: key.id.clone(),
            seq,
            text: cut,
        };
        self.append(&mut state, &record, None);
        seq
    }

    /// Records the end durably, then shows it to readers.
    pub(crate) async fn end(
        &self,
        key: &CallKey,
        live: &Arc<Live>,
        ended: Ended,
    ) -> Result<(), JournalError> {
        let (tx, rx) = oneshot::channel();
        self.record_end(key, live, &ended, Some(tx));
        let synced = self.synced(rx).await;
        self.settle(key, live, ended);
        synced
    }

    /// As [`Book::end`], without waiting for the disk (from a `Drop`).
    pub(crate) fn end_now(&self, key: &CallKey, live: &Arc<Live>, ended: Ended) {
        self.record_end(key, live, &ended, None);
        self.settle(key, live, ended);
    }

    /// Queues the end's record, and notes the end for snapshots taken
    /// before it is settled (a compaction must not drop it).
    fn record_end(
        &self,
        key: &CallKey,
        live: &Arc<Live>,
        ended: &Ended,
        synced: Option<oneshot::Sender<Result<(), String>>>,
    ) {
        let mut state = self.state();
        if let Some(entry) = state.calls.get_mut(key) {
            if matches!(&entry.phase, Phase::Running(l) if Arc::ptr_eq(l, live)) {
                entry.ending = Some(ended.clone());
            }
        }
        let record = end_record(key, live.started(), ended);
        self.append(&mut state, &record, synced);
    }

    fn settle(&self, key: &CallKey, live: &Arc<Live>, ended: Ended) {
        let mut state = self.state();
        if let Some(entry) = state.calls.get_mut(key) {
            if matches!(&entry.phase, Phase::Running(l) if Arc::ptr_eq(l, live)) {
                entry.phase = Phase::Ended {
                    ended: ended.clone(),
                    started: live.started(),
                };
                entry.ending = None;
                state.running -= 1;
            }
        }
        drop(state);
        live.end(ended);
    }

    pub(crate) fn join(&self, key: &CallKey, after: u64) -> Option<Join> {
        let state = self.state();
        match &state.calls.get(key)?.phase {
            Phase::Running(live) => Some(Join::new(live.clone(), after)),
            Phase::Ended { ended, started } => {
                // A reader of an ended call gets its end at once.
                let live = Live::new(0);
                if *started {
                    live.mark_started();
                }
                live.end(ended.clone());
                Some(Join::new(live, after))
            }
        }
    }

    pub(crate) fn status(&self, key: &CallKey) -> Option<Status> {
        let state = self.state();
        state.calls.get(key).map(|e| status_of(key, e))
    }

    pub(crate) fn list(&self, session: &str) -> Vec<Status> {
        let state = self.state();
        state
            .order
            .iter()
            .filter(|k| k.session == session)
            .filter_map(|k| state.calls.get(k).map(|e| status_of(k, e)))
            .collect()
    }

    pub(crate) fn cancel(&self, key: &CallKey) -> bool {
        let state = self.state();
        match state.calls.get(key).map(|e| &e.phase) {
            Some(Phase::Running(live)) => {
                live.cancel_token().cancel();
                true
            }
            _ => false,
        }
    }

    pub(crate) fn running(&self) -> usize {
        self.state().running
    }

    /// Queues `record`; compacts when the file outgrew its bound.
    fn append(
        &self,
        state: &mut State,
        record: &Record,
        synced: Option<oneshot::Sender<Result<(), String>>>,
    ) {
        let line = record.line();
        state.bytes += line.len() as u64;
        match &state.writer {
            Some(writer) => writer.send(Job::Append { line, synced }),
            None => {
                if let Some(tx) = synced {
                    let _ = tx.send(Ok(()));
                }
            }
        }
        if state.bytes > self.limits.max_bytes {
            let contents = snapshot(state, &self.limits);
            state.bytes = contents.len() as u64;
            if let Some(writer) = &state.writer {
                writer.send(Job::Replace {
                    contents,
                    done: None,
                });
            }
        }
    }

    async fn synced(&self, rx: oneshot::Receiver<Result<(), String>>) -> Result<(), JournalError> {
        let path = || {
            self.path
                .as_ref()
                .map_or_else(|| "(in memory)".into(), |p| p.display().to_string())
        };
        match rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(why)) => Err(JournalError::Io { path: path(), why }),
            Err(_) => Err(JournalError::Io {
                path: path(),
                why: "the journal's writer stopped".into(),
            }),
        }
    }

    /// Forgets the oldest ended calls beyond `max_calls` (running ones stay).
    fn forget_beyond_max(&self, state: &mut State) {
        let mut scanned = 0;
        while state.calls.len() > self.limits.max_calls && scanned < state.order.len() {
            let Some(key) = state.order.pop_front() else {
                break;
            };
            let running = matches!(
                state.calls.get(&key).map(|e| &e.phase),
                Some(Phase::Running(_))
            );
            if running {
                state.order.push_back(key);
                scanned += 1;
            } else {
                state.calls.remove(&key);
            }
        }
    }
}

fn end_record(key: &CallKey, started: bool, ended: &Ended) -> Record {
    let (s, id) = (key.session.clone(), key.id.clone());
    match ended {
        Ended::Finished(result) => Record::Finished {
            s,
            id,
            result: result.clone(),
        },
        Ended::Lost(lost) => Record::Lost {
            s,
            id,
            started: lost.started || started,
            output: lost.output.clone(),
            why: lost.why.clone(),
        },
        // Only compaction prunes; an end is never "pruned".
        Ended::Pruned => Record::Lost {
            s,
            id,
            started,
            output: String::new(),
            why: "pruned".into(),
        },
    }
}

fn status_of(key: &CallKey, entry: &Entry) -> Status {
    let (started, ended, last_output) = match &entry.phase {
        Phase::Running(live) => (live.started(), None, live.last()),
        Phase::Ended { ended, started } => (*started, Some(ended.clone()), (0, String::new())),
    };
    Status {
        key: key.clone(),
        tool: entry.tool.clone(),
        received_at: entry.at,
        started,
        ended,
        last_output,
    }
}

/// The file's contents for the state as it is: for each call its receipt
/// and where it stands. Results are kept newest first while they fit in
/// half of `max_bytes`; older ones are pruned (in memory too).
fn snapshot(state: &mut State, limits: &Limits) -> Vec<u8> {
    let budget = limits.max_bytes / 2;
    let mut kept_bytes = 0u64;
    let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(state.order.len());
    for key in state.order.iter().rev() {
        let Some(entry) = state.calls.get_mut(key) else {
            continue;
        };
        if let (Phase::Running(live), Some(ended)) = (&entry.phase, entry.ending.take()) {
            // Settled in the snapshot: its record was queued before it.
            entry.phase = Phase::Ended {
                ended,
                started: live.started(),
            };
            state.running -= 1;
        }
        let (s, id) = (key.session.clone(), key.id.clone());
        let pruned = Record::Pruned {
            s: s.clone(),
            id: id.clone(),
            tool: entry.tool.clone(),
            digest: entry.digest.clone(),
            at: entry.at,
        };
        let mut block = Record::Received {
            s: s.clone(),
            id: id.clone(),
            tool: entry.tool.clone(),
            digest: entry.digest.clone(),
            at: entry.at,
        }
        .line();
        match &entry.phase {
            Phase::Running(live) => {
                if live.started() {
                    block.extend(
                        Record::Started {
                            s: s.clone(),
                            id: id.clone(),
                        }
                        .line(),
                    );
                }
                let (seq, text) = live.last();
                if seq > 0 {
                    block.extend(Record::Output { s, id, seq, text }.line());
                }
            }
            Phase::Ended {
                ended: Ended::Pruned,
                ..
            } => block = pruned.line(),
            Phase::Ended { ended, started } => {
                let end = end_record(key, *started, ended).line();
                let is_result = matches!(ended, Ended::Finished(_));
                if is_result && kept_bytes + end.len() as u64 > budget {
                    block = pruned.line();
                    entry.phase = Phase::Ended {
                        ended: Ended::Pruned,
                        started: *started,
                    };
                } else {
                    if is_result {
                        kept_bytes += end.len() as u64;
                    }
                    if *started {
                        block.extend(Record::Started { s, id }.line());
                    }
                    block.extend(end);
                }
            }
        }
        blocks.push(block);
    }
    blocks.into_iter().rev().flatten().collect()
}

/// Rebuilds the state from a journal file. Calls that were running when
/// the file ended are lost: the process that ran them is gone.
fn replay(state: &mut State, reader: impl BufRead) -> std::io::Result<()> {
    struct Found {
        tool: String,
        digest: String,
        at: u64,
        started: bool,
        output: String,
        ended: Option<Ended>,
    }
    impl Found {
        fn new(tool: String, digest: String, at: u64, ended: Option<Ended>) -> Found {
            Found {
                tool,
                digest,
                at,
                started: false,
                output: String::new(),
                ended,
            }
        }
    }
    /// A receipt (or a pruned call's record): a call the file knows, kept
    /// in the order first seen.
    fn note(
        found: &mut HashMap<CallKey, Found>,
        order: &mut VecDeque<CallKey>,
        key: CallKey,
        f: Found,
    ) {
        if !found.contains_key(&key) {
            order.push_back(key.clone());
        }
        found.insert(key, f);
    }
    let mut found: HashMap<CallKey, Found> = HashMap::new();
    for line in reader.split(b'\n') {
        let line = line?;
        // A line cut by a crash, or one this version cannot read, is
        // skipped: the rest of the file still stands.
        let Ok(record) = serde_json::from_slice::<Record>(&line) else {
            continue;
        };
        let (s, id) = record.key();
        let key = CallKey::new(s, id);
        match record {
            Record::Received {
                tool, digest, at, ..
            } => note(
                &mut found,
                &mut state.order,
                key,
                Found::new(tool, digest, at, None),
            ),
            Record::Pruned {
                tool, digest, at, ..
            } => {
                // A pruned call had finished: whatever it did, it did.
                let mut f = Found::new(tool, digest, at, Some(Ended::Pruned));
                f.started = true;
                note(&mut found, &mut state.order, key, f);
            }
            Record::Started { .. } => {
                if let Some(f) = found.get_mut(&key) {
                    f.started = true;
                }
            }
            Record::Output { text, .. } => {
                if let Some(f) = found.get_mut(&key) {
                    f.output = text;
                }
            }
            Record::Finished { result, .. } => {
                if let Some(f) = found.get_mut(&key) {
                    f.ended = Some(Ended::Finished(result));
                }
            }
            Record::Lost {
                started,
                output,
                why,
                ..
            } => {
                if let Some(f) = found.get_mut(&key) {
                    f.started |= started;
                    f.ended = Some(Ended::Lost(Lost {
                        started: f.started,
                        output,
                        why,
                    }));
                }
            }
        }
    }
    state.order.retain(|k| found.contains_key(k));
    for (key, f) in found {
        let ended = f.ended.unwrap_or_else(|| {
            Ended::Lost(Lost {
                started: f.started,
                output: f.output.clone(),
                why: if f.started {
                    "the process running it stopped while the call ran".into()
                } else {
                    "the process running it stopped before the call started; nothing of it ran"
                        .into()
                },
            })
        });
        state.calls.insert(
            key,
            Entry {
                tool: f.tool,
                digest: f.digest,
                at: f.at,
                phase: Phase::Ended {
                    ended,
                    started: f.started,
                },
                ending: None,
            },
        );
    }
    Ok(())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
