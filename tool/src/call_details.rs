//! Facts about a call for the host, beside the block the model reads: how
//! long it took, where an oversized result was spilled, which files it
//! wrote. A harness can act on them without parsing the model's text; the
//! model-facing block does not change.

use std::path::PathBuf;

use serde::Serialize;

/// The facts about one call for the host (`details` of a result line).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CallDetails {
    /// From the start of the call's pipeline to its result (validation,
    /// hooks, permission and the tool); `None` for calls that never started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The file holding the full result, when it was too large to inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spilled: Option<PathBuf>,
    /// Files the call wrote or edited (only when it succeeded), as the tool
    /// reported them ([`crate::output::Facts::files_written`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_written: Vec<PathBuf>,
    /// What a shell command did (exit code, stdout and stderr apart,
    /// time-out, interruption); only from the shell tools.
    #[serde(flatten)]
    pub shell: Option<crate::shell_details::ShellDetails>,
}

impl CallDetails {
    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        *self == CallDetails::default()
    }
}
