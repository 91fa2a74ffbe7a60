//! The call journal of a Baton worker.
//!
//! Orchestrators retry: after a timeout, a dropped connection, a crash. What
//! they need from the executor is one answer to "what happened to call X?".
//! The journal gives it. Every call is keyed by the host's session and its
//! call id; its state moves *received* → *started* → *finished* (or *lost*),
//! and each step is appended to a log file, synced to disk at the two points
//! that matter: before the tool starts (from then on a crash may leave side
//! effects) and before the result is answered.
//!
//! - A call id that arrives again is answered from the journal: the result
//!   if it finished, a [`Join`] onto the call if it runs (its output from the
//!   number the caller saw last, then its end), never a second run. Another
//!   input under a known id is an error ([`JournalError::Conflict`]).
//! - A journal opened on the directory of a previous life answers for that
//!   life's calls: finished ones with their results, interrupted ones as
//!   lost, with the last output they showed. Nothing is re-run on its own.
//! - It is bounded: when the file outgrows [`Limits::max_bytes`] it is
//!   rewritten with the newest results that fit; older calls keep a small
//!   record saying they finished (so they are still never run again), and
//!   past [`Limits::max_calls`] the oldest are forgotten.
//!
//! The journal knows nothing of tools or MCP: inputs are digested, results
//! are JSON values, output is text. `baton mcp serve` keys the calls of
//! remote hosts and MCP tasks with it.

mod book;
mod live;
mod record;
mod writer;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use live::{Join, Update};
pub use record::digest;

use book::Book;

/// The name of a call: the host's session and the call's id in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey {
    /// The host's session (any string the host keeps for its session).
    pub session: String,
    /// The call's id (a `tool_use` id, a task id).
    pub id: String,
}

impl CallKey {
    /// The call `id` of `session`.
    pub fn new(session: impl Into<String>, id: impl Into<String>) -> CallKey {
        CallKey {
            session: session.into(),
            id: id.into(),
        }
    }
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ended {
    /// It ran to its end; the result as the server answered it.
    Finished(Arc<Value>),
    /// It ended without a result.
    Lost(Lost),
    /// It finished, but its result was dropped from the journal to keep it
    /// within bounds.
    Pruned,
}

/// A call that ended without a result.
#[derive(Clone, Debug, PartialEq)]
pub struct Lost {
    /// Whether the tool had started (side effects are possible) or the call
    /// was lost before (nothing of it ran).
    pub started: bool,
    /// The last output the call showed.
    pub output: String,
    /// Why: its process stopped while it ran, …
    pub why: String,
}

/// What to do with a call that arrives.
#[derive(Debug)]
pub enum Begin {
    /// It is new: run it with this runner.
    Run(Runner),
    /// It runs now: here is a reader of its output and end.
    Join(Join),
    /// It ended before.
    Ended(Ended),
}

/// Where a known call stands, for `tasks/get` and `tasks/list`.
#[derive(Clone, Debug)]
pub struct Status {
    /// The call.
    pub key: CallKey,
    /// The tool it called.
    pub tool: String,
    /// When it was received, in milliseconds since the Unix epoch.
    pub received_at: u64,
    /// Whether its tool has started.
    pub started: bool,
    /// How it ended, if it did.
    pub ended: Option<Ended>,
    /// The newest output: its number and text (0 and empty when none).
    pub last_output: (u64, String),
}

/// Why the journal could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The id is known with another tool or input.
    #[error(
        "the call id {id:?} of this session was already used for another call ({tool}); \
         a retried call must carry the same tool and input, a new call a new id"
    )]
    Conflict {
        /// The id.
        id: String,
        /// The tool of the call the id belongs to.
        tool: String,
    },
    /// The journal file could not be read or written.
    #[error("the call journal {path}: {why}")]
    Io {
        /// The file or directory.
        path: String,
        /// What failed.
        why: String,
    },
}

/// Bounds on what the journal keeps, and when it waits for the disk.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Whether a call's start is synced to disk before the call runs
    /// (default), or only written. Written is enough when the process
    /// dies (the page cache outlives it) but not when the machine does:
    /// then a call that had started may be unknown to the journal after the
    /// reboot, and a retry would run it again. Results are always synced.
    pub sync_start: bool,
    /// Size the file may reach before it is rewritten with only what is
    /// still needed (and results beyond half of it pruned).
    pub max_bytes: u64,
    /// Calls remembered at most; the oldest ended ones are forgotten first.
    pub max_calls: usize,
    /// Output bytes kept per running call for readers that reconnect.
    pub output_bytes: usize,
    /// Longest output text written to the file per update (the rest is cut;
    /// the live reader still gets all of it).
    pub output_record_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            sync_start: true,
            max_bytes: 256 << 20,
            max_calls: 100_000,
            output_bytes: 1 << 20,
            output_record_bytes: 16 << 10,
        }
    }
}

/// The journal. Cheap to clone; clones share it.
#[derive(Clone, Debug)]
pub struct Journal {
    book: Arc<Book>,
}

impl Journal {
    /// A journal kept in `dir` (created if missing), answering for whatever
    /// a previous journal left there: its running calls are recorded as
    /// lost ("the process running it stopped while the call ran").
    pub fn open(dir: &Path, limits: Limits) -> Result<Journal, JournalError> {
        Ok(Journal {
            book: Arc::new(Book::open(dir, limits)?),
        })
    }

    /// A journal in memory only: retries within this process are answered,
    /// nothing survives it.
    pub fn in_memory(limits: Limits) -> Journal {
        Journal {
            book: Arc::new(Book::in_memory(limits)),
        }
    }

    /// Registers the call `key` of `tool` with `input` as received, or says
    /// what became of it if the key is known. `after` is the number of the
    /// last output the caller saw (0 for none), for a join.
    pub async fn begin(
        &self,
        key: &CallKey,
        tool: &str,
        input: &Value,
        after: u64,
    ) -> Result<Begin, JournalError> {
        let digest = record::digest(tool, input);
        match self.book.begin(key, tool, &digest, after)? {
            book::Begun::New(live) => Ok(Begin::Run(Runner {
                book: self.book.clone(),
                key: key.clone(),
                live,
                done: false,
            })),
            book::Begun::Join(join) => Ok(Begin::Join(join)),
            book::Begun::Ended(ended) => Ok(Begin::Ended(ended)),
        }
    }

    /// A reader of the running or ended call `key`, from after output
    /// number `after`; `None` for an unknown call.
    pub fn join(&self, key: &CallKey, after: u64) -> Option<Join> {
        self.book.join(key, after)
    }

    /// Where the call `key` stands.
    pub fn status(&self, key: &CallKey) -> Option<Status> {
        self.book.status(key)
    }

    /// Every known call of `session`, oldest first.
    pub fn list(&self, session: &str) -> Vec<Status> {
        self.book.list(session)
    }

    /// Asks the running call `key` to stop; false if it does not run.
    pub fn cancel(&self, key: &CallKey) -> bool {
        self.book.cancel(key)
    }

    /// How many calls run now.
    pub fn running(&self) -> usize {
        self.book.running()
    }
}

/// The one who runs a new call. Dropping it without [`Runner::finish`]
/// (the task running it panicked or was dropped) records the call as lost.
#[derive(Debug)]
pub struct Runner {
    book: Arc<Book>,
    key: CallKey,
    live: Arc<live::Live>,
    done: bool,
}

impl Runner {
    /// Cancelled when someone asks the call to stop ([`Journal::cancel`],
    /// [`Join::cancel`]).
    pub fn cancel_token(&self) -> CancellationToken {
        self.live.cancel_token()
    }

    /// A reader of this call (the request that started it follows it so).
    pub fn join(&self, after: u64) -> Join {
        Join::new(self.live.clone(), after)
    }

    /// Records, durably, that the tool is about to start. Call it right
    /// before the first side effect; a crash after it reports the call as
    /// lost *while running*.
    pub async fn started(&self) -> Result<(), JournalError> {
        if self.live.started() {
            return Ok(());
        }
        self.live.mark_started();
        self.book.started(&self.key).await
    }

    /// Adds output (written to the file without waiting for the disk);
    /// returns its number.
    pub fn output(&self, text: String) -> u64 {
        self.book.output(&self.key, &self.live, text)
    }

    /// Records the result durably, then lets every reader see it.
    pub async fn finish(mut self, result: Value) -> Result<(), JournalError> {
        self.done = true;
        self.book
            .end(&self.key, &self.live, Ended::Finished(Arc::new(result)))
            .await
    }

    /// Records that the call ended without a result (`why`), with its last
    /// output.
    pub async fn lose(mut self, why: String) -> Result<(), JournalError> {
        self.done = true;
        let lost = Ended::Lost(Lost {
            started: self.live.started(),
            output: self.live.last().1,
            why,
        });
        self.book.end(&self.key, &self.live, lost).await
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        if !self.done {
            let lost = Ended::Lost(Lost {
                started: self.live.started(),
                output: self.live.last().1,
                why: "whatever ran the call stopped without a result".into(),
            });
            self.book.end_now(&self.key, &self.live, lost);
        }
    }
}
