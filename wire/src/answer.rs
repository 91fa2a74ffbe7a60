//! The answer to a batch, written as its results arrive: the one renderer
//! of results for every wire format.
//!
//! Building the whole answer as one `serde_json::Value` tree, for a message
//! of 100,000 calls, with every result held until the last one came, was
//! most of `baton run`'s 618 MB peak, and building then printing it was
//! 12 % of the CPU of a no-op call (docs/benchmarks.md §1b). [`AnswerWriter`]
//! writes the bytes straight to a writer, one result at a time, so a result
//! can be dropped as soon as it is written. Callers that want a tree (the
//! `message` modules' `user_message`, `tool_messages`, `answer_items`, …;
//! `baton agent`'s conversation) get these bytes read back
//! ([`answer_tree`], [`tool_result_tree`], [`output_item_tree`]), so a tree
//! and a stream of one answer cannot differ.
//!
//! The bytes are those of a compact `serde_json::Value` (each object's keys
//! in sorted order, as a `Value` object prints without serde_json's
//! `preserve_order` feature), which is what the answers looked like when
//! they were trees; `tests` keeps them recorded for every format. Strings
//! go through serde_json's own escaping. Native Responses items
//! (`shell_call_output`, …) are built by [`native::answer`] and printed.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::Value;

use crate::openai_responses::{message as responses, native};
use crate::WireFormat;
use baton_tool::call::CallResult;
use baton_tool::content::ContentBlock;

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
    /// one wins.
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
            WireFormat::OpenAiResponses => write_output_item(&mut self.out, self.asked, result),
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
        let text = crate::openai_chat::message::tool_text(r, &mut self.images);
        self.out.write_all(b"{\"content\":")?;
        string(&mut self.out, &text)?;
        self.out
            .write_all(b",\"role\":\"tool\",\"tool_call_id\":")?;
        string(&mut self.out, &r.call_id)?;
        self.out.write_all(b"}")
    }
}

/// A native call's own output item (the type of the item in `asked` that
/// asked for it), or a `function_call_output`: the output a plain string,
/// or, when the result has images, a list of `input_text` and
/// `input_image` parts.
fn write_output_item(out: &mut impl Write, asked: &Asked, r: &CallResult) -> io::Result<()> {
    let native = asked.get(&r.call_id).and_then(|item| {
        let kind = item.get("type").and_then(Value::as_str)?;
        native::answer(kind, item, r)
    });
    if let Some(item) = native {
        return Ok(serde_json::to_writer(out, &item)?);
    }
    out.write_all(b"{\"call_id\":")?;
    string(out, &r.call_id)?;
    out.write_all(b",\"output\":")?;
    if r.content.iter().any(ContentBlock::is_image) {
        out.write_all(b"[")?;
        for (i, block) in r.content.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            match block {
                ContentBlock::Image { media_type, data } => {
                    out.write_all(b"{\"image_url\":")?;
                    string(out, &format!("data:{media_type};base64,{data}"))?;
                    out.write_all(b",\"type\":\"input_image\"}")?;
                }
                other => {
                    out.write_all(b"{\"text\":")?;
                    string(out, &other.as_text().unwrap_or_default())?;
                    out.write_all(b",\"type\":\"input_text\"}")?;
                }
            }
        }
        out.write_all(b"]")?;
    } else {
        string(out, &r.text())?;
    }
    out.write_all(b",\"type\":\"function_call_output\"}")
}

/// One Anthropic `tool_result` block.
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
                string(out, &crate::names::wire_name(tool_name))?;
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

/// The whole answer of `results` in `format` as a tree (see
/// [`AnswerWriter`] for `asked` and `context`): the writer's bytes read
/// back.
pub fn answer_tree<'r>(
    format: WireFormat,
    asked: &Asked,
    results: impl IntoIterator<Item = &'r CallResult>,
    context: &[String],
) -> Value {
    let mut writer = AnswerWriter::new(format, asked, Vec::new());
    for result in results {
        if writer.push(result).is_err() {
            return Value::Null;
        }
    }
    writer
        .finish(context)
        .map_or(Value::Null, |bytes| read_back(&bytes))
}

/// One Anthropic `tool_result` block as a tree.
pub fn tool_result_tree(result: &CallResult) -> Value {
    written(|out| write_tool_result_block(out, result))
}

/// One Responses output item as a tree: a `function_call_output`, or the
/// native item `asked` names for the result's call.
pub fn output_item_tree(asked: &Asked, result: &CallResult) -> Value {
    written(|out| write_output_item(out, asked, result))
}

/// What `write` writes, read back as a tree.
fn written(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> Value {
    let mut bytes = Vec::new();
    match write(&mut bytes) {
        Ok(()) => read_back(&bytes),
        Err(_) => Value::Null,
    }
}

/// The writers write JSON by construction, into memory, where writing
/// cannot fail; `Null` would mean a bug in them (and fails every test).
fn read_back(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// A JSON string, escaped as serde_json escapes it.
fn string(out: &mut impl Write, text: &str) -> io::Result<()> {
    Ok(serde_json::to_writer(out, text)?)
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
