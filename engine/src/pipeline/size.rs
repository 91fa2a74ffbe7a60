//! Result size rules (SPEC §9) that apply to one result.
//!
//! Empty content becomes a notice (some models stall on an empty result).
//! Oversized text is written to `<state_dir>/tool-results/<id>.txt` and the
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
/// going to a file. On a write failure the content is kept inline: losing
/// output would be worse than a long result.
pub fn spill_result(result: &mut CallResult, state_dir: &Path) -> bool {
    let text = joined_text(&result.content);
    let ext = match result.content.as_slice() {
        [ContentBlock::Json { .. }] => "json",
        _ => "txt",
    };
    match write_spill(state_dir, &result.call_id, ext, &text) {
        Ok(path) => {
            result.content = vec![ContentBlock::text(spill_notice(&path, &text))];
            true
        }
        Err(err) => {
            result
                .diagnostics
                .push(format!("could not spill a large result to disk: {err}"));
            false
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
    let path = dir.join(format!("{}.{ext}", safe_file_stem(id)));
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}
