//! Result size rules (SPEC §9) that apply to one result.
//!
//! Empty content becomes a notice (some models stall on an empty result).
//! Oversized text is written to `<state_dir>/tool-results/<id>.txt` (or
//! `<id>-2.txt`, … when that name is taken) and the
//! model gets a notice with a preview: the full text stays reachable without
//! flooding the context window. Tools that bound their own output declare no
//! limit; images are never spilled.

use std::io::Write;
use std::path::{Path, PathBuf};

use baton_tool::call::CallResult;
use baton_tool::content::{joined_text, ContentBlock};
use baton_tool::session::Session;
use baton_tool::tool::ToolDef;

/// A single result never stays inline above this, whatever the tool says.
pub const HARD_INLINE_LIMIT: usize = 50_000;
/// Bytes of preview shown with a spilled result.
pub const PREVIEW_BYTES: usize = 2_000;

/// The threshold for one tool: `min(max_result_size_chars, 50,000)`, or none.
pub fn threshold(def: &ToolDef) -> Option<usize> {
    def.max_result_chars().map(|m| m.min(HARD_INLINE_LIMIT))
}

pub(super) fn limit(mut result: CallResult, def: &ToolDef, session: &Session) -> CallResult {
    if result
        .content
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { text } if text.is_empty()))
    {
        result.content = vec![ContentBlock::text(super::messages::empty_output(
            def.name(),
        ))];
        return result;
    }
    let Some(max) = threshold(def) else {
        return result;
    };
    let chars: usize = result.content.iter().map(ContentBlock::char_len).sum();
    if chars > max && !result.content.iter().any(ContentBlock::is_image) {
        spill_result(&mut result, session.state_dir());
    }
    result
}

/// Replaces `result`'s content by a notice and a preview, the full content
/// going to a file. On a write failure (a full or read-only state
/// directory) the content is cut to its head and tail with a note
/// (`unspilled.rs`): never inlined whole past the limits.
pub fn spill_result(result: &mut CallResult, state_dir: &Path) -> bool {
    let text = joined_text(&result.content);
    let ext = match result.content.as_slice() {
        [ContentBlock::Json { .. }] => "json",
        _ => "txt",
    };
    match write_spill(state_dir, &result.call_id, ext, &text) {
        Ok(path) => {
            result.content = vec![ContentBlock::text(spill_notice(&path, &text))];
            result.details.spilled = Some(path.clone());
            true
        }
        Err(err) => {
            result
                .diagnostics
                .push(format!("could not spill a large result to disk: {err}"));
            result.content = vec![ContentBlock::text(super::unspilled::cut_text(&text, &err))];
            true
        }
    }
}

fn spill_notice(path: &Path, text: &str) -> String {
    let mut cut = PREVIEW_BYTES.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "The output was too large to show inline ({} characters, {} bytes). It was saved in full to {}; read that file (with offset/limit) or search it for the parts you need.\n\nPreview (first {} bytes):\n{}",
        text.chars().count(),
        text.len(),
        path.display(),
        cut,
        &text[..cut]
    )
}

/// Call ids come from the model; keep only characters safe in a file name.
fn safe_file_stem(id: &str) -> String {
    let stem: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if stem.is_empty() {
        "call".to_string()
    } else {
        stem
    }
}

/// Writes `text` to a new file in `<state_dir>/tool-results`.
///
/// The file is created with `O_CREAT | O_EXCL | O_NOFOLLOW` by its handle
/// on a directory Baton made itself ([`own_dir`]): nothing already there
/// (a file, or a link planted under the next name) is written through or
/// replaced, and a link put in the directory's place is refused.
fn write_spill(state_dir: &Path, id: &str, ext: &str, text: &str) -> std::io::Result<PathBuf> {
    use nix::errno::Errno;
    use nix::fcntl::{openat, OFlag};
    use nix::sys::stat::Mode;
    let dir = own_dir(state_dir, "tool-results")?;
    let stem = safe_file_stem(id);
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    // Never replace another result's file: ids repeat across messages and
    // nested batches, and different ids can share a stem (`a.b`, `a_b`).
    // `O_EXCL` takes a name atomically, so two calls spilling at once
    // cannot both win one.
    for n in 1..=1000 {
        let name = match n {
            1 => format!("{stem}.{ext}"),
            n => format!("{stem}-{n}.{ext}"),
        };
        let fd = match openat(&dir, name.as_str(), flags, Mode::from_bits_truncate(0o600)) {
            Ok(fd) => fd,
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        };
        let mut file = std::fs::File::from(fd);
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_all());
        if let Err(e) = written {
            let _ =
                nix::unistd::unlinkat(&dir, name.as_str(), nix::unistd::UnlinkatFlags::NoRemoveDir);
            return Err(e);
        }
        return Ok(state_dir.join("tool-results").join(name));
    }
    Err(std::io::Error::other(
        "too many spilled results with the same name",
    ))
}

/// The directory `name` in `parent` (made if missing, mode 0700), opened
/// without following a link; one that exists must be a real directory
/// owned by this user, as the ones Baton makes are.
fn own_dir(parent: &Path, name: &str) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::errno::Errno;
    use nix::fcntl::{openat, OFlag};
    use nix::sys::stat::{mkdirat, Mode};
    use std::os::unix::fs::MetadataExt;
    std::fs::create_dir_all(parent)?;
    let dir_flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let parent = openat(nix::fcntl::AT_FDCWD, parent, dir_flags, Mode::empty())?;
    match mkdirat(&parent, name, Mode::from_bits_truncate(0o700)) {
        Ok(()) | Err(Errno::EEXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let dir = match openat(&parent, name, dir_flags | OFlag::O_NOFOLLOW, Mode::empty()) {
        Ok(dir) => dir,
        // A link (or a file) where the directory should be.
        Err(Errno::ENOTDIR | Errno::ELOOP) => {
            return Err(std::io::Error::other(format!(
                "{name} in the state directory is not a directory Baton made (a link or a file is there)"
            )))
        }
        Err(e) => return Err(e.into()),
    };
    let meta = std::fs::File::from(dir.try_clone()?).metadata()?;
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(std::io::Error::other(format!(
            "{name} in the state directory belongs to another user; Baton writes only in directories it made"
        )));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_tool::call::Outcome;

    fn result(id: &str, text: &str) -> CallResult {
        CallResult::new(
            id.to_string(),
            "T".to_string(),
            vec![ContentBlock::text(text)],
            false,
            Outcome::Success,
        )
    }

    fn spilled_path(r: &CallResult) -> PathBuf {
        let text = joined_text(&r.content);
        let start = text.find("saved in full to ").unwrap() + "saved in full to ".len();
        let end = text[start..].find("; read").unwrap() + start;
        PathBuf::from(&text[start..end])
    }

    /// A repeated id (a later message, a nested batch) and ids that map to
    /// the same file name each keep their own file.
    #[test]
    fn spilled_files_never_replace_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let ids = ["t1", "t1", "a.b", "a_b", "a/b", "", "t1"];
        let mut paths = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let mut r = result(id, &format!("output of call {i}"));
            assert!(spill_result(&mut r, dir.path()));
            paths.push(spilled_path(&r));
        }
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{paths:?}");
        for (i, path) in paths.iter().enumerate() {
            assert!(
                path.starts_with(dir.path().join("tool-results")),
                "{path:?}"
            );
            assert_eq!(
                std::fs::read_to_string(path).unwrap(),
                format!("output of call {i}")
            );
        }
        assert_eq!(paths[1].file_name().unwrap().to_str().unwrap(), "t1-2.txt");
        // Nothing left behind but the results themselves.
        let files = std::fs::read_dir(dir.path().join("tool-results"))
            .unwrap()
            .count();
        assert_eq!(files, ids.len());
    }

    /// A link where the results directory should be, or under the name a
    /// result would take, is never written through.
    #[test]
    fn spills_never_follow_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let (state, outside) = (dir.path().join("state"), dir.path().join("outside"));
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, state.join("tool-results")).unwrap();
        let mut r = result("t1", "planted");
        assert!(spill_result(&mut r, &state));
        assert!(r.details.spilled.is_none(), "{}", joined_text(&r.content));
        assert!(
            r.diagnostics[0].contains("not a directory Baton made"),
            "{:?}",
            r.diagnostics
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

        std::fs::remove_file(state.join("tool-results")).unwrap();
        std::fs::create_dir(state.join("tool-results")).unwrap();
        let victim = outside.join("victim");
        std::os::unix::fs::symlink(&victim, state.join("tool-results/t1.txt")).unwrap();
        let mut r = result("t1", "next name");
        assert!(spill_result(&mut r, &state));
        assert_eq!(spilled_path(&r), state.join("tool-results/t1-2.txt"));
        assert!(!victim.exists());
    }

    /// Calls spilling at the same moment under one name all keep theirs.
    #[test]
    fn concurrent_spills_of_one_id_all_survive() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..16)
                .map(|i| {
                    let dir = dir.path();
                    s.spawn(move || {
                        let mut r = result("same", &format!("text {i}"));
                        assert!(spill_result(&mut r, dir));
                        (i, spilled_path(&r))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    let (i, path) = h.join().unwrap();
                    assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("text {i}"));
                    path
                })
                .collect()
        });
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 16);
    }
}
