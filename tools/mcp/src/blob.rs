//! Binary resource contents are written to a file, not put in the result:
//! base64 of an image or a PDF costs the model's context a third more than
//! the bytes and tells it nothing, while a path lets it (or a tool) open the
//! file when needed. This is Claude Code's `ReadMcpResourceTool` output:
//! `{"contents": [{"uri", "mimeType"?, "text"? | "blobSavedTo"?}]}`.
//!
//! The files go to `<session state dir>/mcp-resources/`, which the session
//! may read (like spilled results) and which is cleaned up with the session.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::naming::sanitize;

/// The `contents` items of a `resources/read` result in Claude Code's
/// shape, blobs saved under `state_dir`.
pub(crate) fn contents(items: &[Value], server: &str, state_dir: &Path) -> Value {
    let mut out = Vec::with_capacity(items.len());
    let mut problems = Vec::new();
    for item in items {
        let uri = item.get("uri").and_then(Value::as_str).unwrap_or("");
        let mime = item.get("mimeType").and_then(Value::as_str);
        let mut entry = Map::new();
        entry.insert("uri".into(), json!(uri));
        if let Some(mime) = mime {
            entry.insert("mimeType".into(), json!(mime));
        }
        if let Some(text) = item.get("text").and_then(Value::as_str) {
            entry.insert("text".into(), json!(text));
        } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
            match save(state_dir, server, uri, mime, blob) {
                Ok(path) => {
                    entry.insert("blobSavedTo".into(), json!(path.display().to_string()));
                }
                Err(why) => problems.push(format!("{uri}: {why}")),
            }
        }
        out.push(Value::Object(entry));
    }
    let mut result = json!({ "contents": out });
    if !problems.is_empty() {
        result["error"] = json!(format!(
            "binary contents could not be saved: {}",
            problems.join("; ")
        ));
    }
    result
}

/// Decodes `base64` and writes it to a new file; the name says where it
/// came from, and its extension follows the MIME type (or the URI).
fn save(
    state_dir: &Path,
    server: &str,
    uri: &str,
    mime: Option<&str>,
    base64: &str,
) -> Result<PathBuf, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.trim())
        .map_err(|e| format!("the server sent invalid base64 ({e})"))?;
    let dir = state_dir.join("mcp-resources");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let stem = uri
        .rsplit('/')
        .find(|s| !s.is_empty())
        .map(|last| last.rsplit_once('.').map_or(last, |(stem, _)| stem))
        .unwrap_or("resource");
    let stem: String = sanitize(stem).chars().take(60).collect();
    let ext = extension(mime, uri);
    let name = format!(
        "{}-{}-{}-{stem}.{ext}",
        sanitize(server),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    // `create_new`: never write through a file (or link) that is already
    // there.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    file.write_all(&bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

fn extension(mime: Option<&str>, uri: &str) -> String {
    let by_mime = match mime.unwrap_or("").split(';').next().unwrap_or("").trim() {
        "image/png" => Some("png"),
        "image/jpeg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        "image/svg+xml" => Some("svg"),
        "application/pdf" => Some("pdf"),
        "application/zip" => Some("zip"),
        "application/gzip" => Some("gz"),
        "audio/mpeg" => Some("mp3"),
        "audio/wav" => Some("wav"),
        "video/mp4" => Some("mp4"),
        _ => None,
    };
    if let Some(ext) = by_mime {
        return ext.into();
    }
    let from_uri = uri
        .rsplit('/')
        .next()
        .and_then(|last| last.rsplit_once('.'))
        .map(|(_, ext)| sanitize(ext))
        .filter(|ext| !ext.is_empty() && ext.len() <= 8);
    from_uri.unwrap_or_else(|| "bin".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_become_files_and_text_stays() {
        let dir = tempfile::tempdir().unwrap();
        let items = [
            json!({"uri": "file:///a/logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}),
            json!({"uri": "file:///a/readme", "mimeType": "text/plain", "text": "hi"}),
            json!({"uri": "x://bad", "blob": "***"}),
        ];
        let out = contents(&items, "srv", dir.path());
        let saved = out["contents"][0]["blobSavedTo"].as_str().unwrap();
        assert!(saved.ends_with("-logo.png"), "{saved}");
        assert!(saved.starts_with(&dir.path().join("mcp-resources").display().to_string()));
        assert_eq!(
            std::fs::read(saved).unwrap(),
            [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]
        );
        assert!(out["contents"][0].get("blob").is_none());
        assert_eq!(out["contents"][1]["text"], "hi");
        assert!(out["error"].as_str().unwrap().contains("invalid base64"));
    }

    #[test]
    fn extensions_follow_the_type_then_the_uri() {
        assert_eq!(extension(Some("application/pdf"), "x://y"), "pdf");
        assert_eq!(extension(None, "x://y/report.csv"), "csv");
        assert_eq!(extension(Some("application/octet-stream"), "x://y"), "bin");
    }
}
