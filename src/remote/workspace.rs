//! The worker's workspace, as the worker reports it when the host connects.
//!
//! A remote tool runs in the worker's file system, so its paths must be
//! judged against the worker's workspace, not the host's `--cwd`: a `Read`
//! of `/workspace/src/main.rs` on a worker whose workspace is `/workspace`
//! is a read inside the workspace, wherever the host runs. The worker puts
//! its roots and readable directories in its MCP `initialize` answer (an
//! experimental capability, [`CAPABILITY`]); the host reads them on every
//! connection, and the remote tools' permission context uses them.
//!
//! A report that is missing or unusable (a relative path, the file system
//! root, no roots at all) is ignored: calls are then judged against the
//! host's context as before, which asks rather than allows.

use std::path::{Path, PathBuf};

use baton_engine::Context;
use rmcp::model::{JsonObject, ServerCapabilities};
use serde_json::{json, Value};

/// The experimental capability key of the report.
pub const CAPABILITY: &str = "baton/workspace";

/// The most roots a report may carry (more is not a workspace).
const MAX_ROOTS: usize = 64;

/// Where a worker's tools run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerWorkspace {
    /// Workspace roots; the first is the worker's working directory.
    pub roots: Vec<PathBuf>,
    /// Directories readable without asking (the worker's state directory).
    pub readable: Vec<PathBuf>,
}

impl WorkerWorkspace {
    /// The report a worker serving `context` sends.
    pub fn report(context: &Context) -> JsonObject {
        let mut object = JsonObject::new();
        object.insert("roots".into(), json!(*context.roots));
        object.insert("readable".into(), json!(*context.readable));
        object
    }

    /// The workspace in the capabilities of a worker's `initialize`
    /// answer, if it sent a usable one.
    pub fn from_capabilities(caps: &ServerCapabilities) -> Option<WorkerWorkspace> {
        let report = caps.experimental.as_ref()?.get(CAPABILITY)?;
        let roots = paths(report.get("roots")?)?;
        if roots.is_empty() {
            return None;
        }
        let readable = report
            .get("readable")
            .map(paths)
            .unwrap_or(Some(Vec::new()))?;
        Some(WorkerWorkspace { roots, readable })
    }

    /// `context` with the worker's workspace in place of the host's; the
    /// mode and everything else stay the host's.
    pub fn context(&self, context: &Context) -> Context {
        let mut out = context.clone();
        if let Some(first) = self.roots.first() {
            out.cwd = first.clone();
        }
        out.roots = std::sync::Arc::new(self.roots.clone());
        out.readable = std::sync::Arc::new(self.readable.clone());
        out
    }
}

/// A list of absolute, normalized paths other than `/`; `None` if any
/// entry is not one (the whole report is then distrusted).
fn paths(value: &Value) -> Option<Vec<PathBuf>> {
    let list = value.as_array()?;
    if list.len() > MAX_ROOTS {
        return None;
    }
    list.iter()
        .map(|v| {
            let path = Path::new(v.as_str()?);
            let normal = baton_engine::paths::normalize(path);
            // `/` as a workspace would make every path of the worker "inside".
            (path.is_absolute() && normal.parent().is_some()).then_some(normal)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(report: Value) -> ServerCapabilities {
        let mut caps = ServerCapabilities::builder().enable_tools().build();
        let mut experimental = std::collections::BTreeMap::new();
        if let Value::Object(map) = report {
            experimental.insert(CAPABILITY.to_string(), map);
        }
        caps.experimental = Some(experimental);
        caps
    }

    #[test]
    fn a_report_round_trips_and_replaces_the_hosts_workspace() {
        let worker = Context::new("/workspace").with_readable(vec!["/state".into()]);
        let report = WorkerWorkspace::report(&worker);
        let ws = WorkerWorkspace::from_capabilities(&info(Value::Object(report))).unwrap();
        assert_eq!(ws.roots, vec![PathBuf::from("/workspace")]);
        let host = Context::new("/home/me/project");
        let judged = ws.context(&host);
        assert!(judged.is_inside_roots("/workspace/src/main.rs"));
        assert!(!judged.is_inside_roots("/home/me/project/a"));
        assert_eq!(judged.permission_mode, host.permission_mode);
    }

    #[test]
    fn unusable_reports_are_ignored() {
        for report in [
            json!({"roots": []}),
            json!({"roots": ["/"]}),
            json!({"roots": ["/a/.."]}),
            json!({"roots": ["relative"]}),
            json!({"roots": "/workspace"}),
            json!({"roots": ["/workspace"], "readable": ["tmp"]}),
            json!({"readable": ["/x"]}),
        ] {
            assert_eq!(
                WorkerWorkspace::from_capabilities(&info(report.clone())),
                None,
                "{report}"
            );
        }
        let caps = ServerCapabilities::builder().enable_tools().build();
        assert_eq!(WorkerWorkspace::from_capabilities(&caps), None);
    }
}
