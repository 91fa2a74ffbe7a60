//! `GET` of a directory without asking for an archive: its listing, as
//! agent-sandbox's `DirectoryListing` (`{"path", "entries": [{"name",
//! "size", "type", "modified_at", "mode"}]}`).
//!
//! Listing is a `Read` of the directory (names and metadata, not
//! contents), so only the directory is judged. Entries are found without
//! following links: a link is listed as `"symlink"` and a device, socket
//! or FIFO as `"other"` (agent-sandbox resolves links and leaves out
//! those that escape its root; Baton shows what is there instead).

use std::os::unix::fs::MetadataExt;

use baton_tools::files::open::Dir;
use serde_json::{json, Value};

use super::judge::Judge;
use super::walk::{Kind, MAX_ENTRIES};
use super::TransferError;
use crate::Engine;

/// The listing of the directory at `path`, judged as a `Read` of it.
pub(crate) async fn list(engine: &Engine, path: &str) -> Result<Value, TransferError> {
    super::api::on_blocking(engine, path, |judge, path| {
        let target = judge.read(&path)?;
        let shown = |e| TransferError::io(target.display(), e);
        let dir = Dir::open(&target).map_err(shown)?;
        let mut names = dir.names(MAX_ENTRIES + 1).map_err(shown)?;
        if names.len() > MAX_ENTRIES {
            return Err(TransferError::TooLarge(format!(
                "`{}` holds more than {MAX_ENTRIES} entries; ask for it as an archive",
                target.display()
            )));
        }
        names.sort();
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            // Gone since the listing: left out.
            let Ok(meta) = dir.metadata(&name) else {
                continue;
            };
            let kind = match Kind::of(&meta) {
                Kind::File => "file",
                Kind::Dir => "directory",
                Kind::Link => "symlink",
                Kind::Other => "other",
            };
            entries.push(json!({
                "name": name.to_string_lossy(),
                "size": meta.len(),
                "type": kind,
                "modified_at": meta.modified().map(crate::timestamp::seconds).unwrap_or_default(),
                "mode": format!("{:04o}", meta.mode() & 0o7777),
            }));
        }
        Ok(json!({"path": target.to_string_lossy(), "entries": entries}))
    })
    .await
}
