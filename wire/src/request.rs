//! The tool list of the host's next model request, as it travels: the
//! rendered definitions and what is deferred. The engine's `deferred`
//! module fills it (deferral applied, then each definition rendered by
//! [`crate::definition`]).

use serde::Serialize;
use serde_json::Value;

use crate::WireFormat;

/// What the host sends with its next request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestTools {
    /// The format the tools are rendered in.
    pub format: WireFormat,
    /// The `tools` array of the request.
    pub tools: Vec<Value>,
    /// Deferred tools the model has not loaded, in pool order (the pool's
    /// names, which ToolSearch's `select:` takes).
    pub deferred: Vec<String>,
    /// Deferred tools the model has loaded, in discovery order.
    pub loaded: Vec<String>,
    /// Text naming the deferred tools, for the host to insert into the
    /// conversation (as a system or user message); `None` when nothing is
    /// deferred.
    pub reminder: Option<String>,
}
