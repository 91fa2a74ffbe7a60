//! `ReadMcpResourceDirTool {server, uri}`: the direct children of a
//! directory-like resource URI, in Claude Code's output shape
//! (`{"resources": [{uri, name, mimeType?}], "error"?}`; subdirectories
//! have the MIME type `inode/directory`).
//!
//! MCP has no directory request, so the children are taken from the
//! server's resource list: every resource under `<uri>/` one level down is
//! a child, and a deeper one makes its first path segment a subdirectory.
//! A server that lists nothing under the URI may still answer a read of the
//! directory with its entries (as file-system servers do); those are used
//! then.

use std::collections::BTreeMap;
use std::sync::Arc;

use baton_engine::{async_trait, Tool, ToolContext, ToolOutput};
use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams};
use serde_json::{json, Value};

use crate::client_tools::{self, Answer, OverServers, Resource};
use crate::server::Server;

/// The MIME type Claude Code gives subdirectories.
pub(crate) const DIRECTORY_MIME: &str = "inode/directory";

struct ReadDir;

#[async_trait]
impl OverServers for ReadDir {
    async fn run(&self, servers: &[Arc<Server>], input: Value, _: ToolContext) -> Answer {
        let Resource { name, uri, live } = Resource::of(servers, &input).await?;
        let listed = match list_all(live.peer()).await {
            Ok(listed) => listed,
            Err(why) => {
                return Ok(ToolOutput::json(json!({
                    "resources": [],
                    "error": format!("MCP server \"{name}\" could not list its resources: {why}"),
                })))
            }
        };
        let mut children = children_of(uri, &listed);
        if children.is_empty() {
            // Some servers answer a read of the directory with its entries.
            if let Ok(read) = live
                .peer()
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
            {
                let value = serde_json::to_value(&read).unwrap_or(Value::Null);
                let items = value["contents"].as_array().cloned().unwrap_or_default();
                let entries: Vec<Value> = items
                    .into_iter()
                    .filter(|i| i["uri"].as_str().is_some_and(|u| u != uri))
                    .collect();
                children = children_of(uri, &entries);
            }
        }
        let mut out = json!({ "resources": children });
        if children.is_empty() {
            out["error"] = json!(format!(
                "MCP server \"{name}\" has no resources under {uri} (see ListMcpResourcesTool for the URIs it offers)"
            ));
        }
        Ok(ToolOutput::json(out))
    }
}

/// Every resource of the server, all pages.
async fn list_all(peer: &rmcp::Peer<rmcp::service::RoleClient>) -> Result<Vec<Value>, String> {
    let mut all = Vec::new();
    let mut cursor = None;
    // A server that keeps handing out cursors must not keep Baton here.
    for _ in 0..1000 {
        let mut params = PaginatedRequestParams::default();
        params.cursor = cursor.take();
        let page = peer
            .list_resources(Some(params))
            .await
            .map_err(|e| crate::sentence::describe(&e))?;
        all.extend(
            page.resources
                .iter()
                .filter_map(|r| serde_json::to_value(r).ok()),
        );
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(all)
}

/// The direct children of `dir` among `resources` (each with `uri`,
/// `name`, `mimeType`), subdirectories once each, sorted by URI.
pub(crate) fn children_of(dir: &str, resources: &[Value]) -> Vec<Value> {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let mut found: BTreeMap<String, Value> = BTreeMap::new();
    for r in resources {
        let Some(uri) = r["uri"].as_str() else {
            continue;
        };
        let Some(rest) = uri.strip_prefix(&prefix) else {
            continue;
        };
        let rest = rest.trim_start_matches('/');
        if rest.is_empty() {
            continue;
        }
        match rest.split_once('/') {
            Some((first, _)) => {
                let child = format!("{prefix}{first}");
                found.entry(child.clone()).or_insert_with(
                    || json!({"uri": child, "name": first, "mimeType": DIRECTORY_MIME}),
                );
            }
            None => {
                let name = r["name"].as_str().unwrap_or(rest);
                let mut entry = json!({"uri": uri, "name": name});
                if let Some(mime) = r["mimeType"].as_str() {
                    entry["mimeType"] = json!(mime);
                }
                found.insert(uri.to_string(), entry);
            }
        }
    }
    found.into_values().collect()
}

/// The tool over `servers`.
pub(crate) fn tool(servers: &[Arc<Server>]) -> Option<Tool> {
    client_tools::tool(
        "ReadMcpResourceDirTool",
        "Lists the direct children of a directory resource of an MCP server (uri, name, mimeType); subdirectories have the mimeType \"inode/directory\". Read a child with ReadMcpResourceTool.",
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server name"},
                "uri": {"type": "string", "description": "The directory resource URI to list"}
            },
            "required": ["server", "uri"],
            "additionalProperties": false
        }),
        servers,
        ReadDir,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_children_and_subdirectories() {
        let listed = [
            json!({"uri": "dir://root/a.txt", "name": "a.txt", "mimeType": "text/plain"}),
            json!({"uri": "dir://root/sub/b.txt", "name": "b.txt"}),
            json!({"uri": "dir://root/sub/deep/c.txt", "name": "c.txt"}),
            json!({"uri": "dir://rootless/x", "name": "x"}),
            json!({"uri": "other://y", "name": "y"}),
        ];
        let got = children_of("dir://root/", &listed);
        assert_eq!(
            got,
            [
                json!({"uri": "dir://root/a.txt", "name": "a.txt", "mimeType": "text/plain"}),
                json!({"uri": "dir://root/sub", "name": "sub", "mimeType": DIRECTORY_MIME}),
            ]
        );
        let sub = children_of("dir://root/sub", &listed);
        assert_eq!(sub.len(), 2, "{sub:?}");
        assert!(children_of("dir://none", &listed).is_empty());
    }
}
