//! Agent definitions from Markdown files with YAML frontmatter, as Claude
//! Code reads them from `.claude/agents/*.md` and `~/.claude/agents/*.md`.
//!
//! The files are written by people (and shared between projects), so a
//! broken file must not hide the others: each problem becomes a diagnostic
//! naming the file, and the file is skipped or the bad key ignored.

use std::path::{Path, PathBuf};

use baton_engine::subagent::{AgentDefinition, DefinitionSource};
use baton_engine::PermissionMode;
use yaml_serde::Value;

/// Keys Claude Code documents that Baton reads.
const KNOWN_KEYS: [&str; 7] = [
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "permissionMode",
    "maxTurns",
];

/// A definition parsed from text, with what was wrong in it.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub definition: Option<AgentDefinition>,
    pub diagnostics: Vec<String>,
}

/// Parses one agent file's text. `source` names the file in diagnostics;
/// a file without a `name` takes its file stem.
pub(crate) fn parse(text: &str, source: DefinitionSource) -> Parsed {
    let label = match &source {
        DefinitionSource::User(p) | DefinitionSource::Project(p) => p.display().to_string(),
        DefinitionSource::BuiltIn => "built-in".into(),
        DefinitionSource::Host => "host definition".into(),
        // A source added to the engine later: named generically.
        _ => "agent definition".into(),
    };
    let mut diagnostics = Vec::new();
    let fail = |msg: String, mut diagnostics: Vec<String>| {
        diagnostics.push(format!("{label}: {msg}; the agent is not loaded"));
        Parsed {
            definition: None,
            diagnostics,
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((front, body)) = split_frontmatter(text) else {
        return fail(
            "no YAML frontmatter (a `---` line, `name:` and `description:`, a `---` line)".into(),
            diagnostics,
        );
    };
    let map = match yaml_serde::from_str::<Value>(front) {
        Ok(Value::Mapping(map)) => map,
        Ok(Value::Null) => yaml_serde::Mapping::new(),
        Ok(_) => {
            return fail(
                "the frontmatter is not a mapping of keys".into(),
                diagnostics,
            )
        }
        Err(e) => match key_by_key(front) {
            Some(map) => {
                diagnostics.push(format!(
                    "{label}: the frontmatter is not valid YAML ({e}); read key by key"
                ));
                map
            }
            None => {
                return fail(
                    format!("the frontmatter is not valid YAML: {e}"),
                    diagnostics,
                )
            }
        },
    };
    let get = |key: &str| map.get(Value::String(key.into()));
    for key in map.keys() {
        let name = key
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("{key:?}"));
        if !KNOWN_KEYS.contains(&name.as_str()) {
            diagnostics.push(format!(
                "{label}: key `{name}` is not used by Baton; ignored"
            ));
        }
    }
    let stem = match &source {
        DefinitionSource::User(p) | DefinitionSource::Project(p) => {
            p.file_stem().and_then(|s| s.to_str()).map(str::to_string)
        }
        _ => None,
    };
    let name = match get("name").and_then(scalar) {
        Some(n) if !n.trim().is_empty() => n.trim().to_string(),
        _ => match stem {
            Some(stem) => {
                diagnostics.push(format!("{label}: no `name`; using the file name `{stem}`"));
                stem
            }
            None => return fail("no `name`".into(), diagnostics),
        },
    };
    let Some(description) = get("description").and_then(scalar) else {
        return fail(
            "no `description` (it tells the model when to use the agent)".into(),
            diagnostics,
        );
    };
    let mut def = AgentDefinition::new(name, description.trim());
    def.source = source;
    def.system_prompt = body.trim().to_string();
    def.tools = get("tools").and_then(|v| tool_list(v, "tools", &label, &mut diagnostics));
    // `tools: *` (or a list holding `*`) means every tool, as in Claude Code.
    if def
        .tools
        .as_ref()
        .is_some_and(|t| t.iter().any(|n| n == "*"))
    {
        def.tools = None;
    }
    def.disallowed_tools = get("disallowedTools")
        .and_then(|v| tool_list(v, "disallowedTools", &label, &mut diagnostics))
        .unwrap_or_default();
    for (key, list) in [
        ("tools", def.tools.as_deref()),
        ("disallowedTools", Some(&def.disallowed_tools[..])),
    ] {
        diagnostics.extend(super::tool_names::check(
            list.unwrap_or_default(),
            key,
            &label,
        ));
    }
    def.model = get("model")
        .and_then(scalar)
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty());
    if let Some(mode) = get("permissionMode") {
        match scalar(mode).map(|m| m.trim().parse::<PermissionMode>()) {
            Some(Ok(mode)) => def.permission_mode = Some(mode),
            Some(Err(e)) => diagnostics.push(format!("{label}: permissionMode: {e}; ignored")),
            None => diagnostics.push(format!("{label}: permissionMode is not a string; ignored")),
        }
    }
    if let Some(turns) = get("maxTurns") {
        match turns
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
        {
            Some(n) => def.max_turns = Some(n),
            None => diagnostics.push(format!(
                "{label}: maxTurns must be a positive whole number; ignored"
            )),
        }
    }
    Parsed {
        definition: Some(def),
        diagnostics,
    }
}

/// The frontmatter and the body, when the text starts with a `---` line
/// and has a closing `---` line.
pub(crate) fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    // A closing line at the very end without a newline.
    (rest.trim_end() == "---").then_some(("", ""))
}

/// A lenient reading for frontmatter that strict YAML rejects. Many shared
/// agent files put `Context: ...` inside an unquoted description, which
/// YAML reads as a nested mapping and refuses. Each top-level `key:` line
/// starts an entry; indented lines continue it. A value that is valid YAML
/// on its own keeps its YAML meaning (lists stay lists); any other is
/// taken as plain text. `None` when no line looks like a key.
pub(crate) fn key_by_key(front: &str) -> Option<yaml_serde::Mapping> {
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in front.lines() {
        let starts_key = line.split_once(':').filter(|(k, _)| {
            !k.is_empty()
                && !k.starts_with(|c: char| c.is_whitespace() || c == '#' || c == '-')
                && k.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        });
        match starts_key {
            Some((k, rest)) => entries.push((k.to_string(), rest.trim().to_string())),
            None if line.trim_start().starts_with('#') && !line.starts_with(' ') => {}
            None => {
                if let Some(last) = entries.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(line);
                }
            }
        }
    }
    if entries.is_empty() {
        return None;
    }
    let mut map = yaml_serde::Mapping::new();
    for (key, raw) in entries {
        let value = yaml_serde::from_str::<Value>(&format!("v: {raw}"))
            .ok()
            .and_then(|v| v.get("v").cloned())
            .unwrap_or_else(|| Value::String(raw.trim().to_string()));
        map.insert(Value::String(key), value);
    }
    Some(map)
}

/// A string, number or boolean as text (YAML reads `model: 4` as a number).
pub(crate) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `tools: Read, Grep` or a YAML list; empty entries dropped.
pub(crate) fn tool_list(
    v: &Value,
    key: &str,
    label: &str,
    diagnostics: &mut Vec<String>,
) -> Option<Vec<String>> {
    let names: Vec<String> = match v {
        Value::Null => return None,
        Value::Sequence(items) => items.iter().filter_map(scalar).collect(),
        other => match scalar(other) {
            Some(s) => s.split(',').map(str::to_string).collect(),
            None => {
                diagnostics.push(format!(
                    "{label}: `{key}` is neither a list nor a string; ignored"
                ));
                return None;
            }
        },
    };
    Some(
        names
            .into_iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect(),
    )
}

/// Definitions from every `*.md` file of `dir` (sorted by file name), with
/// diagnostics. A missing directory is not a problem.
pub(crate) fn load_dir(dir: &Path, project: bool) -> (Vec<AgentDefinition>, Vec<String>) {
    let mut defs = Vec::new();
    let mut diagnostics = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (defs, diagnostics),
        Err(e) => {
            diagnostics.push(format!("{}: cannot list agent files: {e}", dir.display()));
            return (defs, diagnostics);
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                diagnostics.push(format!("{}: cannot read: {e}", path.display()));
                continue;
            }
        };
        let source = if project {
            DefinitionSource::Project(path)
        } else {
            DefinitionSource::User(path)
        };
        let parsed = parse(&text, source);
        diagnostics.extend(parsed.diagnostics);
        defs.extend(parsed.definition);
    }
    (defs, diagnostics)
}
