//! The `Read` tool: show a file to the model.
//!
//! Text comes back numbered like `cat -n`, so the model can cite lines and
//! page with `offset`/`limit`; images come back as image blocks the model can
//! see; notebooks come back as their cells; other binary files are refused.
//! Read bounds its own output (a byte cap with a note saying how to continue)
//! and declares no result limit: spilling a Read result to a file the model
//! would then Read is circular (SPEC §9).
//!
//! Invalid UTF-8 is shown lossily (bytes replaced by U+FFFD) with a note, not
//! refused: a log file with one stray byte is still worth reading. Edit, which
//! would have to write those bytes back, refuses such files instead.
//!
//! Every file shown is recorded in the session's [`ReadState`], which is what
//! allows Write, Edit and NotebookEdit to replace it later.

use std::fs::{File, Metadata};
use std::io::{self, Read as _, Seek as _};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use baton_engine::permission::FileAccess;
use baton_engine::schema::InvalidSchema;
use baton_engine::{
    async_trait, CancelScope, ContentBlock, PermissionTarget, Session, Tool, ToolContext, ToolDef,
    ToolError, ToolLogic, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::lines::{self, Rendered, Window};
use super::open::{self, Found};
use super::read_state::{self, FileSnapshot, ReadState};
use super::sniff::{self, Kind};
use super::{missing, notebook_cells, paths, write_lock};

/// Read's self-imposed bounds. Every one is configurable through
/// [`read_tool_with`].
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
    /// Lines shown when the call gives no `limit`.
    pub default_lines: u64,
    /// Longer lines are cut.
    pub max_line_chars: usize,
    /// Total output cap in bytes; past it the output stops with a note.
    pub max_output_bytes: usize,
    /// Larger images are refused (the model APIs reject big images).
    pub max_image_bytes: u64,
    /// Larger notebooks are shown as numbered JSON text instead of cells.
    pub max_notebook_bytes: u64,
    /// Files up to this size are read to the end, for an exact line count and
    /// a content hash; larger ones only as far as the requested lines.
    pub full_scan_max_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            default_lines: 2_000,
            max_line_chars: 2_000,
            max_output_bytes: 256 * 1024,
            max_image_bytes: 3_750_000,
            max_notebook_bytes: 16 * 1024 * 1024,
            full_scan_max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// The input of `Read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute path of the file to read.
    pub file_path: String,
    /// Line number to start reading from (1-based). Give it only for files
    /// too long to read at once.
    #[serde(default)]
    pub offset: Option<u64>,
    /// How many lines to read (default 2000). Give it only for files too long
    /// to read at once.
    #[serde(default)]
    pub limit: Option<u64>,
}

const DESCRIPTION: &str = "Reads a file from the local file system. `file_path` must be absolute. \
Text comes back with line numbers (number, tab, line), at most 2000 lines from `offset` \
(1-based, default 1) unless `limit` says otherwise; lines longer than 2000 characters are cut. \
Images (PNG, JPEG, GIF, WebP) are shown as images, Jupyter notebooks as their cells. \
Other binary files are refused. A file must be read before Write, Edit or NotebookEdit may change it. \
Read several files at once by calling Read several times in one message.";

/// `Read` with the default limits.
pub fn read_tool() -> Tool {
    read_tool_with(ReadLimits::default())
}

/// The `Read` tool with `limits`: text with line numbers, images, PDFs
/// and notebooks.
///
/// # Panics
///
/// If its input schema is invalid, which is a bug; [`try_read_tool`]
/// returns the error instead.
pub fn read_tool_with(limits: ReadLimits) -> Tool {
    super::built(try_read_tool(limits))
}

/// The `Read` tool with `limits`, or why its input schema is invalid.
pub fn try_read_tool(limits: ReadLimits) -> Result<Tool, InvalidSchema> {
    let def = ToolDef::new("Read", DESCRIPTION)
        .search_hint("read view file contents lines image notebook")
        .max_result_size_chars(None);
    Tool::typed::<ReadInput, _>(def, ReadTool { limits })
}

struct ReadTool {
    limits: ReadLimits,
}

#[async_trait]
impl ToolLogic<ReadInput> for ReadTool {
    fn is_concurrency_safe(&self, _input: &ReadInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &ReadInput) -> bool {
        true
    }

    fn permission_target(&self, input: &ReadInput, ctx: &ToolContext) -> PermissionTarget {
        paths::target(&input.file_path, ctx, FileAccess::Read)
    }

    fn label(&self, input: &ReadInput) -> Option<String> {
        Some(format!("Read({})", input.file_path))
    }

    async fn validate_input(&self, input: &ReadInput, ctx: &ToolContext) -> Result<(), String> {
        paths::check_absolute("file_path", &input.file_path, ctx)?;
        paths::new_call(&input.file_path, ctx);
        if input.limit == Some(0) {
            return Err(
                "`limit` must be at least 1 (or left out for the default of 2000 lines).".into(),
            );
        }
        Ok(())
    }

    async fn call(&self, input: ReadInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let real = paths::acting_on(&input.file_path, &ctx);
        let job = Job {
            shown: paths::shown(&input.file_path, &real),
            file_path: input.file_path,
            real,
            offset: input.offset,
            limit: input.limit,
            limits: self.limits,
            session: ctx.session.clone(),
            cwd: ctx.cwd().to_path_buf(),
            cancel: ctx.cancel.clone(),
        };
        tokio::task::spawn_blocking(move || job.run())
            .await
            .map_err(|e| ToolError::new(format!("Read stopped unexpectedly: {e}")))?
    }
}

/// One Read, run on a blocking thread.
struct Job {
    real: PathBuf,
    shown: String,
    /// The path as the call gave it (for `tool_response`).
    file_path: String,
    offset: Option<u64>,
    limit: Option<u64>,
    limits: ReadLimits,
    session: Arc<Session>,
    cwd: PathBuf,
    cancel: CancelScope,
}

impl Job {
    fn run(self) -> Result<ToolOutput, ToolError> {
        // Found without following a link: a path that changed since it was
        // judged is an error, never another file.
        let (mut file, meta) = match open::find(&self.real) {
            Ok(Found::File(file, meta)) => (file, meta),
            Ok(Found::Missing) => {
                return Err(ToolError::new(missing::not_found(
                    &self.shown,
                    &self.real,
                    &self.cwd,
                )))
            }
            Ok(Found::Dir) => {
                return Err(ToolError::new(format!(
                    "{} is a directory, not a file. To see what it contains, use Glob (pattern `{}/*`) or run `ls` with Bash.",
                    self.shown,
                    self.real.display()
                )))
            }
            Ok(Found::Other) => {
                return Err(ToolError::new(format!(
                    "{} is not a regular file (a device, socket or pipe), so Read will not open it.",
                    self.shown
                )))
            }
            Err(e) => return Err(read_state::io_error(&e, &self.shown, "read")),
        };
        let mut head = Vec::with_capacity(sniff::SNIFF_LEN);
        (&mut file)
            .take(sniff::SNIFF_LEN as u64)
            .read_to_end(&mut head)
            .map_err(|e| read_state::io_error(&e, &self.shown, "read"))?;
        match sniff::sniff(&head) {
            Kind::Image(media) => self.image(media, head, file, &meta),
            Kind::Binary(kind) => Err(ToolError::new(format!(
                "{} is a {kind}, not text, so Read cannot show it. Inspect it with Bash instead \
                 (for example `file`, `xxd | head`, `unzip -l`, `pdftotext`).",
                self.shown
            ))),
            Kind::Text => {
                let is_notebook = self.real.extension().is_some_and(|e| e == "ipynb");
                let paged = self.offset.is_some() || self.limit.is_some();
                if is_notebook && !paged && meta.len() <= self.limits.max_notebook_bytes {
                    if let Some(out) = self.notebook(&head, &mut file, &meta)? {
                        return Ok(out);
                    }
                    // Not a notebook after all: show it as text from the start
                    // (the same open file, not the path again).
                    file.rewind()
                        .map_err(|e| read_state::io_error(&e, &self.shown, "read"))?;
                    head.clear();
                }
                self.text(head, file, &meta)
            }
        }
    }

    fn image(
        &self,
        media: &str,
        mut bytes: Vec<u8>,
        mut file: File,
        meta: &Metadata,
    ) -> Result<ToolOutput, ToolError> {
        let len = meta.len();
        if len > self.limits.max_image_bytes {
            return Err(ToolError::new(format!(
                "{} is an image of {len} bytes, more than the {} bytes Read sends to the model. \
                 Make a smaller copy (for example with ImageMagick's `convert -resize`) and read that.",
                self.shown, self.limits.max_image_bytes
            )));
        }
        (&mut file)
            .take(self.limits.max_image_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| read_state::io_error(&e, &self.shown, "read"))?;
        self.record(Some(read_state::hash(&bytes)), bytes.len() as u64, meta);
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let response = json!({
            "type": "image",
            "file": {"base64": data, "type": media, "originalSize": bytes.len()},
        });
        Ok(ToolOutput::text(format!(
            "Image {} ({media}, {} bytes):",
            self.shown,
            bytes.len()
        ))
        .with_block(ContentBlock::image(media, data))
        .with_response(response))
    }

    fn notebook(
        &self,
        head: &[u8],
        file: &mut File,
        meta: &Metadata,
    ) -> Result<Option<ToolOutput>, ToolError> {
        let mut bytes = head.to_vec();
        file.read_to_end(&mut bytes)
            .map_err(|e| read_state::io_error(&e, &self.shown, "read"))?;
        let Some(view) = notebook_cells::render_for_read(&bytes, self.limits.max_output_bytes)
        else {
            return Ok(None);
        };
        self.record(Some(read_state::hash(&bytes)), bytes.len() as u64, meta);
        // It parsed as a notebook just now, so its cells are there.
        let cells = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|mut v| v.get_mut("cells").map(Value::take))
            .unwrap_or_else(|| json!([]));
        let response = json!({
            "type": "notebook",
            "file": {"filePath": self.file_path, "cells": cells},
        });
        Ok(Some(
            ToolOutput::text(format!(
                "Notebook {} (change cells with NotebookEdit, addressing them by id, or by index \
                 when they have none):\n{view}",
                self.shown
            ))
            .with_response(response),
        ))
    }

    fn text(&self, head: Vec<u8>, file: File, meta: &Metadata) -> Result<ToolOutput, ToolError> {
        let start = self.offset.unwrap_or(1).max(1);
        let window = Window {
            start,
            limit: self.limit.unwrap_or(self.limits.default_lines),
            max_line_chars: self.limits.max_line_chars,
            max_output_bytes: self.limits.max_output_bytes,
            scan_limit: self.limits.full_scan_max_bytes,
        };
        let cancel = self.cancel.clone();
        let rendered = lines::render(io::Cursor::new(head).chain(file), window, &|| {
            cancel.is_cancelled()
        })
        .map_err(|e| read_state::io_error(&e, &self.shown, "read"))?;
        let size = if rendered.complete {
            rendered.size
        } else {
            meta.len()
        };
        self.record(rendered.hash, size, meta);
        let response = self.text_response(&rendered, start);
        Ok(ToolOutput::text(compose(
            &self.shown,
            &rendered,
            start,
            meta.len(),
            &self.limits,
        ))
        .with_response(response))
    }

    /// Claude Code's `tool_response` for a text file (sdk-tools.d.ts
    /// `FileReadOutput`): the lines shown as they are in the file, without
    /// Baton's numbers and notes. `totalLines` counts the lines read when
    /// the file was too large to read to its end.
    fn text_response(&self, rendered: &Rendered, start: u64) -> Value {
        let shown = (rendered.last_shown + 1).saturating_sub(start);
        json!({
            "type": "text",
            "file": {
                "filePath": self.file_path,
                "content": rendered.content,
                "numLines": shown,
                "startLine": start,
                "totalLines": rendered.total_lines,
            }
        })
    }

    /// Records what the model saw, unless the file was replaced while it
    /// was being read: then the model saw a version that is already gone, and
    /// the writing tools must ask for a fresh Read. The check runs under the
    /// writers' lock so no Baton write can slip in between.
    fn record(&self, hash: Option<[u8; 32]>, size: u64, before: &Metadata) {
        let _writer = write_lock::lock(&self.real);
        let unchanged = open::metadata(&self.real).is_ok_and(|now| same_version(before, &now));
        if unchanged {
            ReadState::of(&self.session)
                .record(self.real.clone(), FileSnapshot::new(hash, size, before));
        }
    }
}

/// Same inode (Baton's writes always make a new one), size and mtime.
fn same_version(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev()
        && a.ino() == b.ino()
        && a.len() == b.len()
        && a.modified().ok() == b.modified().ok()
}

/// The numbered lines and the notes that tell the model what it did not see.
fn compose(shown: &str, r: &Rendered, start: u64, file_size: u64, limits: &ReadLimits) -> String {
    if r.total_lines == 0 && r.complete {
        return format!("{shown} exists but is empty (0 lines).");
    }
    if start > r.total_lines && r.complete {
        return format!(
            "{shown} has {} lines, so offset {start} is past its end. Call Read with an offset from 1 to {}.",
            r.total_lines, r.total_lines
        );
    }
    let mut text = r.text.clone();
    let mut notes = Vec::new();
    if let Some(next) = r.capped_at {
        notes.push(format!(
            "Output stopped before line {next} to stay under {} KB. Continue with offset={next} (and a smaller limit if lines are long).",
            limits.max_output_bytes / 1024
        ));
    } else if !r.complete {
        notes.push(format!(
            "Showing lines {start}-{}. The file is {} bytes, too large to count its lines; to read more, call Read with offset={}.",
            r.last_shown,
            file_size,
            r.last_shown + 1
        ));
    } else if r.last_shown < r.total_lines {
        notes.push(format!(
            "Showing lines {start}-{} of {}. To read more, call Read with offset={}.",
            r.last_shown,
            r.total_lines,
            r.last_shown + 1
        ));
    }
    if r.cut_lines > 0 {
        notes.push(format!(
            "{} line(s) longer than {} characters were cut; use Grep or Bash to see their full text.",
            r.cut_lines, limits.max_line_chars
        ));
    }
    if r.invalid_utf8 {
        notes.push(
            "This file is not valid UTF-8: the bytes that are not were replaced by \u{fffd} above. \
             Edit refuses such files; rewrite them with Bash if needed."
                .to_string(),
        );
    }
    for note in notes {
        text.push_str(&format!("\n[{note}]"));
    }
    text
}

/// Whether a path names a notebook (used by the writing tools' messages).
pub(super) fn is_notebook(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ipynb")
}
