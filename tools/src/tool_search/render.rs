//! What a ToolSearch result says, per what the host's API accepts.

use baton_engine::deferred::ToolSearchSettings;
use baton_engine::wire::definition;
use baton_engine::{ContentBlock, ToolOutput, ToolPool};

use super::query::Query;

pub(super) fn output(
    pool: &ToolPool,
    settings: &ToolSearchSettings,
    raw_query: &str,
    query: &Query,
    found: &[String],
    missing: &[String],
) -> ToolOutput {
    let mut content = Vec::new();
    if found.is_empty() {
        content.push(ContentBlock::text(no_match(raw_query, query)));
        return ToolOutput {
            content,
            ..Default::default()
        };
    }
    if settings.uses_references() {
        content.extend(found.iter().map(|name| ContentBlock::ToolReference {
            tool_name: name.clone(),
        }));
    } else {
        let mut text = format!(
            "Loaded {} tool{}; their definitions follow. You can call them from your next turn on.\n<functions>\n",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        );
        for name in found {
            if let Some(tool) = pool.get(name) {
                text.push_str("<function>");
                text.push_str(&definition(tool, settings.format).to_string());
                text.push_str("</function>\n");
            }
        }
        text.push_str("</functions>");
        content.push(ContentBlock::text(text));
    }
    if !missing.is_empty() {
        content.push(ContentBlock::text(format!(
            "No tool is named {}; check the spelling against the deferred tool list.",
            quoted(missing)
        )));
    }
    ToolOutput {
        content,
        ..Default::default()
    }
}

fn no_match(raw_query: &str, query: &Query) -> String {
    match query {
        Query::Select(names) if names.is_empty() => {
            "No matching deferred tools found: `select:` needs tool names, e.g. \"select:NotebookEdit,WebFetch\".".into()
        }
        Query::Select(names) => format!(
            "No matching deferred tools found: no tool is named {}. Check the spelling against the deferred tool list, or search by keywords.",
            quoted(names)
        ),
        Query::Keywords { .. } => format!(
            "No matching deferred tools found for \"{}\". Try other keywords (what the tool does, or the service it talks to), or load a tool by name with \"select:<name>\".",
            raw_query.trim()
        ),
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
