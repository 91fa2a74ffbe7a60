//! The answer to a batch, written as its results arrive.
//!
//! The renderers in each format's `message` module build the whole answer
//! as one `serde_json::Value` tree. For a message of 100,000 calls that
//! tree, with every result held until the last one came, was most of
//! `baton run`'s 618 MB peak, and building then printing it was 12 % of
//! the CPU of a no-op call (docs/benchmarks.md §1b). [`AnswerWriter`] writes
//! the same bytes straight to a writer, one result at a time, so a result
//! can be dropped as soon as it is written.
//!
//! The bytes are the `Value` renderers' exactly: compact, and each
//! object's keys in sorted order (how a `serde_json::Value` object prints
//! without serde_json's `preserve_order` feature). The `Value` renderers
//! stay the reference; `tests` below compares the two for every format.
//! Strings go through serde_json's own escaping.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::Value;

use crate::call::CallResult;
use crate::content::ContentBlock;
use crate::wire::openai_responses::{message as responses, native};
use crate::wire::WireFormat;

/// The Responses items of native local tools (`shell_call`, …) that asked
/// for results, by call id: each such result is answered in its item's own
/// output type. Empty for the other formats.
#[derive(Debug, Default)]
pub struct Asked {
    items: HashMap<String, Value>,
}

impl Asked {
    /// The native items among a message's calls (a response, its output
    /// items, or a conversation). Of two items with one call id the later
    /// one wins, as in [`responses::answer_items`].
    pub fn from_calls(calls: &Value) -> Asked {
        let items = responses::output_of(calls).unwrap_or(&[]);
        Asked::from_items(items.iter().cloned())
    }

    /// The native items among `items`; the others are passed over.
    pub fn from_items(items: impl IntoIterator<Item = Value>) -> Asked {
        let mut asked = HashMap::new();
        for item in items {
            let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
            if !native::KINDS.contains(&kind) {
                continue;
            }
            if let Some(id) = item.get("call_id").and_then(Value::as_str) {
                asked.insert(id.to_string(), item);
            }
        }
        Asked { items: asked }
    }

    fn get(&self, call_id: &str) -> Option<&Value> {
        self.items.get(call_id)
    }
}

/// Writes one batch's answer in `format` to `out`, a result at a time:
/// the user message (Anthropic), the array of `tool` messages (Chat
/// Completions) or the array of output items (Responses). Nothing is
/// written before the first [`push`](Self::push); [`finish`](Self::finish)
/// closes the answer (an answer without results is written whole there).
#[derive(Debug)]
pub struct AnswerWriter<'a, W: Write> {
    format: WireFormat,
    asked: &'a Asked,
    out: W,
    written: usize,
    /// Chat Completions only: images go in one user message after the
    /// `tool` messages (the role cannot carry them).
    images: Vec<Value>,
}

impl<'a, W: Write> AnswerWriter<'a, W> {
    /// A writer of the answer to the calls `asked`, in `format`, to `out`.
    pub fn new(format: WireFormat, asked: &'a Asked, out: W) -> Self {
        AnswerWriter {
            format,
            asked,
            out,
            written: 0,
            images: Vec::new(),
        }
    }

    /// Results written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// The writer, to flush or write around the answer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Writes the next result (results must come in call order).
    pub fn push(&mut self, result: &CallResult) -> io::Result<()> {
        if self.written == 0 {
            self.out.write_all(self.opening())?;
        } else {
            self.out.write_all(b",")?;
        }
        self.written += 1;
        match self.format {
            WireFormat::Anthropic => write_tool_result_block(&mut self.out, result),
            WireFormat::OpenAiChat => self.chat_message(result),
            WireFormat::OpenAiResponses => self.responses_item(result),
        }
    }

    /// Closes the answer and hands back the writer. `context` is the
    /// batch's PostToolBatch hook context: text blocks after the results
    /// in an Anthropic message; the other formats have no place for it.
    pub fn finish(mut self, context: &[String]) -> io::Result<W> {
        if self.written == 0 {
            self.out.write_all(self.opening())?;
        }
        match self.format {
            WireFormat::Anthropic => {
                for (i, text) in context.iter().enumerate() {
                    if self.written > 0 || i > 0 {
                        self.out.write_all(b",")?;
                    }
                    self.out.write_all(b"{\"text\":")?;
                    string(&mut self.out, text)?;
                    self.out.write_all(b",\"type\":\"text\"}")?;
                }
                self.out.write_all(b"],\"role\":\"user\"}")?;
            }
            WireFormat::OpenAiChat if !self.images.is_empty() => {
                if self.written > 0 {
                    self.out.write_all(b",")?;
                }
                self.out.write_all(b"{\"content\":")?;
                serde_json::to_writer(&mut self.out, &self.images)?;
                self.out.write_all(b",\"role\":\"user\"}]")?;
            }
            _ => self.out.write_all(b"]")?,
        }
        Ok(self.out)
    }

    fn opening(&self) -> &'static [u8] {
        match self.format {
            WireFormat::Anthropic => b"{\"content\":[",
            _ => b"[",
        }
    }

    /// `{"content":text,"role":"tool","tool_call_id":id}`; images are kept
    /// for the user message [`finish`](Self::finish) writes.
    fn chat_message(&mut self, r: &CallResult) -> io::Result<()> {
        let text = crate::wire::openai_chat::message::tool_text(r, &mut self.images);
        self.out.write_all(b"{\"content\":")?;
        string(&mut self.out, &text)?;
        self.out
            .write_all(b",\"role\":\"tool\",\"tool_call_id\":")?;
        string(&mut self.out, &r.call_id)?;
        self.out.write_all(b"}")
    }

    /// A native call's own output item, or a `function_call_output`.
    fn responses_item(&mut self, r: &CallResult) -> io::Result<()> {
        let native = self.asked.get(&r.call_id).and_then(|item| {
            let kind = item.get("type").and_then(Value::as_str)?;
            native::answer(kind, item, r)
        });
        if let Some(item) = native {
            return Ok(serde_json::to_writer(&mut self.out, &item)?);
        }
        if r.content.iter().any(ContentBlock::is_image) {
            // Rare, and the list form has several shapes: the reference
            // renderer writes it.
            return Ok(serde_json::to_writer(
                &mut self.out,
                &responses::output_item(r),
            )?);
        }
        self.out.write_all(b"{\"call_id\":")?;
        string(&mut self.out, &r.call_id)?;
        self.out.write_all(b",\"output\":")?;
        string(&mut self.out, &r.text())?;
        self.out.write_all(b",\"type\":\"function_call_output\"}")
    }
}

/// One Anthropic `tool_result` block, the bytes of
/// [`crate::wire::anthropic::tool_result_block`] printed.
pub fn write_tool_result_block(out: &mut impl Write, result: &CallResult) -> io::Result<()> {
    out.write_all(b"{\"content\":[")?;
    for (i, block) in result.content.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        match block {
            ContentBlock::Text { text } => text_block(out, text)?,
            ContentBlock::Json { value } => text_block(out, &value.to_string())?,
            ContentBlock::ToolReference { tool_name } => {
                out.write_all(b"{\"tool_name\":")?;
                string(out, &crate::wire::names::wire_name(tool_name))?;
                out.write_all(b",\"type\":\"tool_reference\"}")?;
            }
            ContentBlock::Image { media_type, data } => {
                out.write_all(b"{\"source\":{\"data\":")?;
                string(out, data)?;
                out.write_all(b",\"media_type\":")?;
                string(out, media_type)?;
                out.write_all(b",\"type\":\"base64\"},\"type\":\"image\"}")?;
            }
        }
    }
    out.write_all(b"],")?;
    if result.is_error {
        out.write_all(b"\"is_error\":true,")?;
    }
    out.write_all(b"\"tool_use_id\":")?;
    string(out, &result.call_id)?;
    out.write_all(b",\"type\":\"tool_result\"}")
}

fn text_block(out: &mut impl Write, text: &str) -> io::Result<()> {
    out.write_all(b"{\"text\":")?;
    string(out, text)?;
    out.write_all(b",\"type\":\"text\"}")
}

/// A JSON string, escaped as serde_json escapes it.
fn string(out: &mut impl Write, text: &str) -> io::Result<()> {
    Ok(serde_json::to_writer(out, text)?)
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
