//! Server entries (`mcpServers`) as Claude Code users already write them.
//!
//! Each entry is parsed and expanded on its own: a broken entry becomes a
//! diagnostic naming the server and its file, and the other servers load.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use baton_engine::vars;

/// Where an entry was found; later scopes override earlier ones by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Scope {
    /// `mcpServers` at the top of `~/.claude.json`.
    User,
    /// The project's `.mcp.json` (needs to be enabled, see [`crate::load`]).
    Project,
    /// `projects["<dir>"].mcpServers` in `~/.claude.json`.
    Local,
    /// A `--mcp-config` file.
    Flag,
    /// Added by the host through the Rust API.
    Api,
    /// Shipped by an enabled plugin (see [`crate::plugins`]).
    Plugin,
}

impl Scope {
    /// The scope's name in `baton mcp list` and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Flag => "flag",
            Scope::Api => "api",
            Scope::Plugin => "plugin",
        }
    }
}

/// How Baton reaches a server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportSpec {
    /// A child process speaking JSON-RPC lines on stdin/stdout.
    Stdio {
        /// The program to start (`${VAR}` already expanded).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it, besides those it inherits.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP (one endpoint, POST + optional SSE responses).
    Http {
        /// The server's endpoint.
        url: String,
        /// HTTP headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport (GET an event stream, POST messages).
    Sse {
        /// The event-stream endpoint (GET); messages are POSTed where it says.
        url: String,
        /// HTTP headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
}

impl TransportSpec {
    /// The transport's name in settings and messages: `stdio`, `http` or `sse`.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportSpec::Stdio { .. } => "stdio",
            TransportSpec::Http { .. } => "http",
            TransportSpec::Sse { .. } => "sse",
        }
    }
}

/// Overrides of the servers' `readOnlyHint`s, for servers whose hints are
/// wrong: `"readOnly": true` (every tool), or `{"tool": true, "*": false}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOnlyOverride {
    /// `"readOnly": true` or `false`: the answer for every tool.
    pub all: Option<bool>,
    /// Per-tool answers; they win over `all` and the server's hints.
    pub tools: BTreeMap<String, bool>,
}

impl ReadOnlyOverride {
    /// Whether `tool` counts as read-only, given the server's hint.
    pub fn decide(&self, tool: &str, hint: Option<bool>) -> bool {
        self.tools
            .get(tool)
            .copied()
            .or(self.all)
            .or(hint)
            .unwrap_or(false)
    }
}

/// One configured server, expanded and ready to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// The server's name, as its tools' prefix `mcp__<name>__`.
    pub name: String,
    /// How Baton reaches the server.
    pub transport: TransportSpec,
    /// Per-call time limit (the entry's `timeout`, in ms).
    pub timeout: Option<Duration>,
    /// Tools of this server are never deferred (SPEC §10).
    pub always_load: bool,
    /// The user's corrections of the server's `readOnlyHint`s.
    pub read_only: ReadOnlyOverride,
    /// Which kind of configuration the entry came from.
    pub scope: Scope,
    /// The file (or "api") the entry came from, for messages.
    pub source: String,
    /// OAuth settings (HTTP and SSE servers; see [`crate::auth`]).
    pub oauth: crate::auth::OAuthSettings,
    /// `headersHelper` (HTTP and SSE servers): a command printing headers
    /// for each connection (see [`crate::headers_helper`]).
    pub headers_helper: Option<String>,
}

impl ServerSpec {
    /// A stdio server, as a host adds one through the API.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        ServerSpec {
            name: name.into(),
            transport: TransportSpec::Stdio {
                command: command.into(),
                args,
                env: BTreeMap::new(),
            },
            timeout: None,
            always_load: false,
            read_only: ReadOnlyOverride::default(),
            scope: Scope::Api,
            source: "api".into(),
            oauth: crate::auth::OAuthSettings::default(),
            headers_helper: None,
        }
    }

    /// A streamable-HTTP server, as a host adds one through the API.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        ServerSpec {
            transport: TransportSpec::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
            ..ServerSpec::stdio(name, "", Vec::new())
        }
    }

    /// A legacy HTTP+SSE server (`"type": "sse"`): `url` is its event stream.
    pub fn sse(name: impl Into<String>, url: impl Into<String>) -> Self {
        ServerSpec {
            transport: TransportSpec::Sse {
                url: url.into(),
                headers: BTreeMap::new(),
            },
            ..ServerSpec::stdio(name, "", Vec::new())
        }
    }
}

/// Looks up an environment variable.
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// `text` (the value of `field`) with its `${VAR}` references expanded, in
/// the grammar of [`baton_engine::vars`]. An unset variable without default
/// fails the entry: a command with a silently empty argument, or the
/// literal text `${TOKEN}` as a header, would fail later in ways that are
/// hard to trace.
pub(crate) fn expand(text: &str, field: &str, env: EnvLookup<'_>) -> Result<String, String> {
    vars::expand(text, vars::Options::default(), env).map_err(|e| format!("{field}: {e}"))
}

/// Parses every entry of an `mcpServers` object. Entries that cannot be used
/// come back as messages, one per server.
pub fn parse_servers(
    servers: &Value,
    scope: Scope,
    source: &str,
    env: EnvLookup<'_>,
) -> (Vec<ServerSpec>, Vec<String>) {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    let Some(map) = servers.as_object() else {
        problems.push(format!("{source}: mcpServers must be an object"));
        return (specs, problems);
    };
    for (name, entry) in map {
        match parse_entry(name, entry, scope, source, env) {
            Ok(spec) => specs.push(spec),
            Err(e) => problems.push(format!("MCP server \"{name}\" ({source}): {e}")),
        }
    }
    (specs, problems)
}

fn parse_entry(
    name: &str,
    entry: &Value,
    scope: Scope,
    source: &str,
    env: EnvLookup<'_>,
) -> Result<ServerSpec, String> {
    let obj = entry.as_object().ok_or("the entry must be an object")?;
    if name.is_empty() {
        return Err("the server name is empty".into());
    }
    let kind = match obj.get("type") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err("\"type\" must be a string".into()),
    };
    let transport = match kind {
        None | Some("stdio") if obj.contains_key("command") => {
            let command = expand(string(obj.get("command"), "command")?, "command", env)?;
            if command.trim().is_empty() {
                return Err("\"command\" is empty".into());
            }
            let args = match obj.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let field = format!("args[{i}]");
                        expand(string(Some(v), &field)?, &field, env)
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("\"args\" must be a list of strings".into()),
            };
            TransportSpec::Stdio {
                command,
                args,
                env: string_map(obj.get("env"), "env", env)?,
            }
        }
        None if obj.contains_key("url") => {
            return Err(
                "a server with \"url\" needs \"type\": \"http\" or \"sse\" (Claude Code does not guess it either)"
                    .into(),
            )
        }
        None | Some("stdio") => return Err("a stdio server needs \"command\"".into()),
        Some("http") | Some("streamable-http") | Some("streamableHttp") => TransportSpec::Http {
            url: url(obj, env)?,
            headers: string_map(obj.get("headers"), "headers", env)?,
        },
        Some("sse") => TransportSpec::Sse {
            url: url(obj, env)?,
            headers: string_map(obj.get("headers"), "headers", env)?,
        },
        Some(other) => {
            return Err(format!(
                "unknown \"type\": \"{other}\" (use stdio, http or sse)"
            ))
        }
    };
    let transport_kind = transport.kind();
    let timeout = match obj.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(ms) if ms > 0 => Some(Duration::from_millis(ms)),
            _ => return Err("\"timeout\" must be a positive number of milliseconds".into()),
        },
    };
    let always_load = match obj.get("alwaysLoad") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("\"alwaysLoad\" must be true or false".into()),
    };
    Ok(ServerSpec {
        name: name.to_string(),
        transport,
        timeout,
        always_load,
        read_only: read_only(obj.get("readOnly"))?,
        scope,
        source: source.to_string(),
        oauth: crate::auth::OAuthSettings::parse(obj.get("oauth"), env)?,
        headers_helper: match obj.get("headersHelper") {
            None | Some(Value::Null) => None,
            Some(Value::String(cmd)) if matches!(transport_kind, "http" | "sse") => {
                Some(expand(cmd, "headersHelper", env)?)
            }
            Some(Value::String(_)) => {
                return Err("\"headersHelper\" is for http and sse servers".into())
            }
            Some(_) => return Err("\"headersHelper\" must be a string".into()),
        },
    })
}

fn string<'a>(value: Option<&'a Value>, field: &str) -> Result<&'a str, String> {
    value
        .and_then(Value::as_str)
        .ok_or_else(|| format!("\"{field}\" must be a string"))
}

fn url(obj: &serde_json::Map<String, Value>, env: EnvLookup<'_>) -> Result<String, String> {
    let url = expand(string(obj.get("url"), "url")?, "url", env)?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "\"url\" must start with http:// or https://, not {url:?}"
        ));
    }
    Ok(url)
}

fn string_map(
    value: Option<&Value>,
    field: &str,
    env: EnvLookup<'_>,
) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                let place = format!("{field}.{k}");
                let text = v
                    .as_str()
                    .ok_or_else(|| format!("\"{place}\" must be a string"))?;
                out.insert(k.clone(), expand(text, &place, env)?);
            }
        }
        Some(_) => return Err(format!("\"{field}\" must be an object of strings")),
    }
    Ok(out)
}

fn read_only(value: Option<&Value>) -> Result<ReadOnlyOverride, String> {
    let mut rule = ReadOnlyOverride::default();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => rule.all = Some(*b),
        Some(Value::Object(map)) => {
            for (tool, v) in map {
                let b = v
                    .as_bool()
                    .ok_or_else(|| format!("\"readOnly.{tool}\" must be true or false"))?;
                if tool == "*" {
                    rule.all = Some(b);
                } else {
                    rule.tools.insert(tool.clone(), b);
                }
            }
        }
        Some(_) => return Err("\"readOnly\" must be true, false or an object".into()),
    }
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_string())
    }

    fn parse(v: Value) -> (Vec<ServerSpec>, Vec<String>) {
        parse_servers(&v, Scope::Flag, "f.json", &env)
    }

    #[test]
    fn all_three_transports_and_common_keys() {
        let (specs, problems) = parse(json!({
            "a": {"command": "node", "args": ["x.js", "${TOKEN}"], "env": {"K": "${NOPE:-d}"}, "timeout": 1500},
            "b": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "alwaysLoad": true},
            "c": {"type": "sse", "url": "http://h/sse", "readOnly": {"get": true, "*": false}}
        }));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(specs.len(), 3);
        assert_eq!(
            specs[0].transport,
            TransportSpec::Stdio {
                command: "node".into(),
                args: vec!["x.js".into(), "s3cret".into()],
                env: [("K".to_string(), "d".to_string())].into()
            }
        );
        assert_eq!(specs[0].timeout, Some(Duration::from_millis(1500)));
        assert!(specs[1].always_load);
        assert!(
            matches!(&specs[1].transport, TransportSpec::Http { headers, .. } if headers["Authorization"] == "Bearer s3cret")
        );
        assert!(specs[2].read_only.decide("get", Some(false)));
        assert!(!specs[2].read_only.decide("put", Some(true)));
    }

    #[test]
    fn one_bad_entry_is_one_problem_naming_server_and_variable() {
        let (specs, problems) = parse(json!({
            "good": {"command": "true"},
            "bad": {"command": "srv", "args": ["--key=${MISSING}"]},
            "weird": {"type": "websocket", "url": "ws://x"},
            "nocmd": {"args": []}
        }));
        assert_eq!(specs.len(), 1);
        assert_eq!(problems.len(), 3, "{problems:?}");
        let bad = problems.iter().find(|p| p.contains("\"bad\"")).unwrap();
        assert!(
            bad.contains("MISSING") && bad.contains("args[0]") && bad.contains("f.json"),
            "{bad}"
        );
    }

    #[test]
    fn hints_decide_when_no_override() {
        let none = ReadOnlyOverride::default();
        assert!(none.decide("t", Some(true)));
        assert!(!none.decide("t", None));
        assert!(!none.decide("t", Some(false)));
    }
}
