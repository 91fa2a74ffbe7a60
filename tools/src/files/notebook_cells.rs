//! Jupyter notebooks as JSON: finding, changing and showing cells.
//!
//! Pure functions over `serde_json::Value`, kept apart from the tool so they
//! can be tested without files. Everything outside the edited cell is carried
//! through untouched, with one caveat: `serde_json` is built without
//! `preserve_order` in this workspace (enabling it would change key order for
//! every crate), so object keys come out sorted. That is what nbformat itself
//! writes (`sort_keys=True`), so notebooks saved by Jupyter round-trip
//! unchanged; hand-written ones may see their keys reordered. Indentation and
//! the final newline are kept as found.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Code,
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

/// One requested change.
#[derive(Clone, Debug)]
pub(crate) struct CellEdit<'a> {
    pub cell_id: Option<&'a str>,
    pub new_source: &'a str,
    pub cell_type: Option<CellType>,
    pub mode: EditMode,
}

/// A parsed notebook plus the layout needed to write it back the same way.
#[derive(Debug)]
pub(crate) struct Notebook {
    pub value: Value,
    indent: usize,
    trailing_newline: bool,
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Notebook, String> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("it is not valid JSON ({e}), so it cannot be edited as a notebook"))?;
    if !value.get("cells").is_some_and(Value::is_array) {
        return Err("it has no `cells` list, so it is not a Jupyter notebook (nbformat 4)".into());
    }
    Ok(Notebook {
        value,
        indent: detect_indent(bytes),
        trailing_newline: bytes.ends_with(b"\n"),
    })
}

fn detect_indent(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|&b| b == b'\n')
        .map(|nl| bytes[nl + 1..].iter().take_while(|&&b| b == b' ').count())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

impl Notebook {
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let indent = vec![b' '; self.indent];
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(&indent);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        serde::Serialize::serialize(&self.value, &mut ser).map_err(|e| e.to_string())?;
        if self.trailing_newline {
            out.push(b'\n');
        }
        Ok(out)
    }

    fn cells_mut(&mut self) -> Result<&mut Vec<Value>, String> {
        self.value
            .get_mut("cells")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| "the notebook has no `cells` list".to_string())
    }

    /// Cells carry ids from nbformat 4.5 on; new cells get one then.
    fn uses_ids(&self) -> bool {
        let minor = self.value.get("nbformat_minor").and_then(Value::as_u64);
        let major = self.value.get("nbformat").and_then(Value::as_u64);
        let any_id = self.value["cells"]
            .as_array()
            .is_some_and(|c| c.iter().any(|cell| cell.get("id").is_some()));
        any_id
            || (major == Some(4) && minor.is_some_and(|m| m >= 5))
            || major.is_some_and(|m| m > 4)
    }

    /// Applies `edit`; returns a one-line summary of what changed.
    pub(crate) fn apply(&mut self, edit: &CellEdit<'_>) -> Result<String, String> {
        let uses_ids = self.uses_ids();
        let cells = self.cells_mut()?;
        match edit.mode {
            EditMode::Replace => {
                let id = edit.cell_id.ok_or("replace needs `cell_id`")?;
                let index = locate(cells, id)?;
                let cell = cells[index]
                    .as_object_mut()
                    .ok_or("that cell is not a JSON object")?;
                let old_type = cell
                    .get("cell_type")
                    .and_then(Value::as_str)
                    .unwrap_or("code")
                    .to_string();
                let new_type = edit
                    .cell_type
                    .map_or(old_type.clone(), |t| t.as_str().to_string());
                cell.insert("cell_type".into(), Value::String(new_type.clone()));
                cell.insert("source".into(), source_value(edit.new_source));
                shape_for_type(cell, &new_type);
                let change = if new_type == old_type {
                    String::new()
                } else {
                    format!(", now {new_type} (was {old_type})")
                };
                Ok(format!("Replaced the source of cell {index}{change}."))
            }
            EditMode::Insert => {
                let kind = edit
                    .cell_type
                    .ok_or("insert needs `cell_type` (code or markdown)")?;
                let index = match edit.cell_id {
                    Some(id) => locate(cells, id)? + 1,
                    None => 0,
                };
                let mut cell = Map::new();
                cell.insert("cell_type".into(), Value::String(kind.as_str().into()));
                cell.insert("metadata".into(), json!({}));
                cell.insert("source".into(), source_value(edit.new_source));
                shape_for_type(&mut cell, kind.as_str());
                let mut id_note = String::new();
                if uses_ids {
                    let id = fresh_id(cells, edit.new_source);
                    id_note = format!(" with id `{id}`");
                    cell.insert("id".into(), Value::String(id));
                }
                cells.insert(index, Value::Object(cell));
                Ok(format!(
                    "Inserted a {} cell at index {index}{id_note}.",
                    kind.as_str()
                ))
            }
            EditMode::Delete => {
                let id = edit.cell_id.ok_or("delete needs `cell_id`")?;
                let index = locate(cells, id)?;
                cells.remove(index);
                Ok(format!(
                    "Deleted cell {index}; {} cells remain.",
                    cells.len()
                ))
            }
        }
    }
}

/// Finds a cell by its id, or else by a 0-based index given as text
/// (older notebooks have no ids).
pub(crate) fn locate(cells: &[Value], cell_id: &str) -> Result<usize, String> {
    if let Some(i) = cells
        .iter()
        .position(|c| c.get("id").and_then(Value::as_str) == Some(cell_id))
    {
        return Ok(i);
    }
    let as_index = cell_id
        .trim()
        .trim_start_matches("cell-")
        .parse::<usize>()
        .ok();
    if let Some(i) = as_index.filter(|&i| i < cells.len()) {
        return Ok(i);
    }
    let ids: Vec<&str> = cells
        .iter()
        .filter_map(|c| c.get("id").and_then(Value::as_str))
        .take(20)
        .collect();
    let known = if ids.is_empty() {
        format!(
            "its cells have no ids; use an index from 0 to {}",
            cells.len().saturating_sub(1)
        )
    } else {
        format!("known ids: {}", ids.join(", "))
    };
    Err(format!(
        "no cell has id `{cell_id}` and it is not a valid index ({} cells; {known}). Read the notebook to see its cells.",
        cells.len()
    ))
}

/// nbformat stores source as a list of lines, each keeping its `\n`.
fn source_value(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// Code cells carry outputs and an execution count; other cells must not.
/// The old outputs belonged to the old source, so they are cleared.
fn shape_for_type(cell: &mut Map<String, Value>, cell_type: &str) {
    if cell_type == "code" {
        cell.insert("outputs".into(), json!([]));
        cell.insert("execution_count".into(), Value::Null);
    } else {
        cell.remove("outputs");
        cell.remove("execution_count");
    }
    cell.entry("metadata").or_insert_with(|| json!({}));
}

fn fresh_id(cells: &[Value], seed: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let taken = |id: &str| {
        cells
            .iter()
            .any(|c| c.get("id").and_then(Value::as_str) == Some(id))
    };
    // Fewer ids exist than 8-hex-digit values, so this ends.
    let mut attempt = 0u64;
    loop {
        let material = format!("{nanos}:{}:{attempt}:{seed}", cells.len());
        let digest = super::read_state::hash(material.as_bytes());
        let id: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        if !taken(&id) {
            return id;
        }
        attempt += 1;
    }
}

/// Text of a `source` or output `text` field (a string or a list of strings).
fn joined(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The notebook as the model reads it: each cell with its index, id and type,
/// then its source and the text of its outputs. `None` if it is not a notebook.
pub(crate) fn render_for_read(bytes: &[u8], max_bytes: usize) -> Option<String> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let cells = value.get("cells")?.as_array()?;
    let mut out = String::new();
    for (i, cell) in cells.iter().enumerate() {
        let mut block = String::new();
        let id = match cell.get("id").and_then(Value::as_str) {
            Some(id) => format!(" id=\"{id}\""),
            None => String::new(),
        };
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        block.push_str(&format!("<cell index=\"{i}\"{id} type=\"{kind}\">\n"));
        block.push_str(&joined(cell.get("source")));
        if !block.ends_with('\n') {
            block.push('\n');
        }
        for output in cell
            .get("outputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            block.push_str(&render_output(output));
        }
        block.push_str("</cell>\n");
        if out.len() + block.len() > max_bytes {
            out.push_str(&format!(
                "[Output stopped before cell {i} of {} to stay under {} KB. Read with offset/limit to page through the raw JSON.]\n",
                cells.len(),
                max_bytes / 1024
            ));
            return Some(out);
        }
        out.push_str(&block);
    }
    if cells.is_empty() {
        out.push_str("(The notebook has no cells.)\n");
    }
    Some(out)
}

const MAX_OUTPUT_CHARS: usize = 2_000;

fn render_output(output: &Value) -> String {
    let kind = output
        .get("output_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let text = match kind {
        "stream" => joined(output.get("text")),
        "error" => format!(
            "{}: {}",
            output
                .get("ename")
                .and_then(Value::as_str)
                .unwrap_or("Error"),
            output.get("evalue").and_then(Value::as_str).unwrap_or("")
        ),
        _ => {
            let data = output.get("data");
            let plain = joined(data.and_then(|d| d.get("text/plain")));
            let others: Vec<&str> = data
                .and_then(Value::as_object)
                .map(|d| {
                    d.keys()
                        .map(String::as_str)
                        .filter(|k| *k != "text/plain")
                        .collect()
                })
                .unwrap_or_default();
            match (plain.is_empty(), others.is_empty()) {
                (_, true) => plain,
                (true, false) => format!("[{} output not shown]", others.join(", ")),
                (false, false) => {
                    format!("{plain}\n[also {} output, not shown]", others.join(", "))
                }
            }
        }
    };
    let mut shown: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
    if shown.len() < text.len() {
        shown.push_str(" … [output cut]");
    }
    if shown.trim().is_empty() {
        return String::new();
    }
    format!("<output>\n{}\n</output>\n", shown.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_notebooks_without_ids_are_shown_and_edited_by_index() {
        let raw = r#"{"cells":[{"cell_type":"code","metadata":{},"source":"a = 1","outputs":[],"execution_count":null}],
                     "metadata":{},"nbformat":4,"nbformat_minor":2}"#;
        let view = render_for_read(raw.as_bytes(), 10_000).unwrap();
        assert!(
            view.starts_with("<cell index=\"0\" type=\"code\">\na = 1\n</cell>"),
            "{view}"
        );
        let mut nb = parse(raw.as_bytes()).unwrap();
        let edit = CellEdit {
            cell_id: None,
            new_source: "# notes\n",
            cell_type: Some(CellType::Markdown),
            mode: EditMode::Insert,
        };
        nb.apply(&edit).unwrap();
        // nbformat 4.2 has no cell ids, so none is invented.
        assert!(nb.value["cells"][0].get("id").is_none());
        assert_eq!(nb.value["cells"][0]["source"], json!(["# notes\n"]));
        let err = nb
            .apply(&CellEdit {
                cell_id: Some("7"),
                new_source: "",
                cell_type: None,
                mode: EditMode::Delete,
            })
            .unwrap_err();
        assert!(err.contains("index from 0 to 1"), "{err}");
    }

    #[test]
    fn outputs_are_summarised_not_dumped() {
        let cell = json!({"output_type": "display_data", "data": {"image/png": "AAAA", "text/plain": "<Figure>"}});
        assert_eq!(
            render_output(&cell),
            "<output>\n<Figure>\n[also image/png output, not shown]\n</output>\n"
        );
        let err = json!({"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []});
        assert!(render_output(&err).contains("ValueError: bad"));
    }
}
