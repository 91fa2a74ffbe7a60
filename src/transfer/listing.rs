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
use std::time::SystemTime;

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
                "modified_at": meta.modified().map(rfc3339).unwrap_or_default(),
                "mode": format!("{:04o}", meta.mode() & 0o7777),
            }));
        }
        Ok(json!({"path": target.to_string_lossy(), "entries": entries}))
    })
    .await
}

/// `time` as RFC 3339 in UTC, to the second (`2026-01-02T03:04:05Z`).
fn rfc3339(time: SystemTime) -> String {
    let secs = match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339() {
        let at = |secs| rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_767_323_045), "2026-01-02T03:04:05Z");
    }
}
