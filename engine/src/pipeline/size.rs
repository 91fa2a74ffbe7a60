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

use crate::call::CallResult;
use crate::content::{joined_text, ContentBlock};
use crate::session::Session;
use crate::tool::ToolDef;

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

fn write_spill(state_dir: &Path, id: &str, ext: &str, text: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = state_dir.join("tool-results");
    std::fs::create_dir_all(&dir)?;
    let stem = safe_file_stem(id);
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    // Never replace another result's file: ids repeat across messages and
    // nested batches, and different ids can share a stem (`a.b`, `a_b`).
    // `persist_noclobber` links the file in place atomically, so two calls
    // spilling at once cannot both win one name.
    for n in 1..=1000 {
        let path = match n {
            1 => dir.join(format!("{stem}.{ext}")),
            n => dir.join(format!("{stem}-{n}.{ext}")),
        };
        match tmp.persist_noclobber(&path) {
            Ok(_) => return Ok(path),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => tmp = e.file,
            Err(e) => return Err(e.error),
        }
    }
    Err(std::io::Error::other(
        "too many spilled results with the same name",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::Outcome;

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
