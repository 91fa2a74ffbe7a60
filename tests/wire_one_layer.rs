//! One wire layer (issue 23): a pool with an MCP server whose tool names
//! break OpenAI's rules goes through every entry point (`baton tools`,
//! serve's `tools` line and `subagent_request`, `baton agent`'s request
//! body, `Engine::request_tools`) in every format, with tool search on and
//! off, and every entry point must send the same list. The OpenAI lists
//! must follow the published name and strict-schema rules, and the
//! requests `baton agent` sent must pass the official SDKs' types.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use baton::engine::deferred::{ToolSearchMode, ToolSearchSettings};
use baton::engine::wire::{self, WireFormat};
use baton::engine::{
    async_trait, PoolSpec, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOrigin,
    ToolOutput, ToolPool,
};
use baton::Engine;
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

const MODES: [&str; 2] = ["false", "true"];

fn config(dir: &Path) -> std::path::PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_server/long_names.py");
    let path = dir.join("mcp.json");
    let cfg = json!({"mcpServers": {"acme.tools": {"command": "python3", "args": [script]}}});
    std::fs::write(&path, cfg.to_string()).unwrap();
    path
}

fn name_of(def: &Value) -> &str {
    def.get("name")
        .or_else(|| def.pointer("/function/name"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("a definition without a name: {def}"))
}

/// OpenAI's rules: `^[a-zA-Z0-9_-]{1,64}$` for names; a strict schema has
/// every object closed (`additionalProperties: false`) with every property
/// required.
fn check_openai(format: WireFormat, tools: &[Value]) {
    for def in tools {
        let name = name_of(def);
        assert!(
            !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{format}: name `{name}` breaks the rules"
        );
        let body = match format {
            WireFormat::OpenAiChat => &def["function"],
            _ => def,
        };
        assert!(body["strict"].is_boolean(), "{format}: {def}");
        if body["strict"] == json!(true) {
            check_strict(&body["parameters"], name);
        }
    }
}

fn check_strict(schema: &Value, name: &str) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        assert_eq!(
            schema["additionalProperties"],
            json!(false),
            "{name}: {schema}"
        );
        let mut required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no required in {schema}"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
        required.sort_unstable();
        keys.sort_unstable();
        assert_eq!(required, keys, "{name}: not every property required");
        for sub in props.values() {
            check_strict(sub, name);
        }
    }
    for key in ["items", "anyOf"] {
        match schema.get(key) {
            Some(Value::Array(subs)) => subs.iter().for_each(|s| check_strict(s, name)),
            Some(sub @ Value::Object(_)) => check_strict(sub, name),
            _ => {}
        }
    }
}

fn baton_tools(dir: &Path, cfg: &Path, format: WireFormat, mode: &str) -> Vec<Value> {
    baton_test_support::cli::json_stdout(
        crate::support::baton()
            .args(["tools", "--format", format.name(), "--tool-search", mode])
            .arg("--strict-mcp-config")
            .arg("--mcp-config")
            .arg(cfg)
            .arg("--cwd")
            .arg(dir),
    )
}

/// Serve's `tools` line, then the `subagent_request` of an Agent call.
fn serve(dir: &Path, cfg: &Path, format: WireFormat, mode: &str) -> (Value, Value) {
    let mut serve = Serve::start(
        BATON,
        &[
            "--cwd",
            dir.to_str().unwrap(),
            "--state-dir",
            dir.join("state").to_str().unwrap(),
            "--strict-mcp-config",
            "--mcp-config",
            cfg.to_str().unwrap(),
            "--tool-format",
            format.name(),
            "--tool-search",
            mode,
        ],
    );
    serve.send(json!({"type": "tools", "format": format.name()}));
    let tools = serve.next_of("tools");
    serve.send(
        json!({"type": "add", "tool_use": {"type": "tool_use", "id": "call_agent",
        "name": "Agent", "input": {"description": "look around", "prompt": "look"}}}),
    );
    serve.send(json!({"type": "end"}));
    let request = serve.next_of("subagent_request");
    let _ = serve.child.kill();
    let _ = serve.child.wait();
    (tools, request)
}

/// A model endpoint on 127.0.0.1 that keeps each request body and answers
/// 400 (not retried), so `baton agent` sends exactly one request.
fn capture_server() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_ok() {
                if let Ok(v) = serde_json::from_slice(&body) {
                    kept.lock().unwrap().push(v);
                }
            }
            let answer =
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"captured"}}"#;
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (format!("http://127.0.0.1:{port}"), bodies)
}

fn agent_request(dir: &Path, cfg: &Path, format: WireFormat, mode: &str) -> Value {
    let (base, bodies) = capture_server();
    let base = match format {
        WireFormat::Anthropic => base,
        _ => format!("{base}/v1"),
    };
    let out = crate::support::baton()
        .args(["agent", "--provider", format.name(), "--base-url", &base])
        .args(["--tool-search", mode, "--strict-mcp-config", "--mcp-config"])
        .arg(cfg)
        .arg("--cwd")
        .arg(dir)
        .arg("list the issues")
        .env("BATON_RETRY_BASE_MS", "10")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let bodies = bodies.lock().unwrap();
    assert!(
        !bodies.is_empty(),
        "{format}: no request reached the model: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    bodies[0].clone()
}

#[test]
fn every_entry_point_sends_the_same_tools_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    for mode in MODES {
        for format in WireFormat::ALL {
            let what = format!("{format}, tool search {mode}");
            let cli = baton_tools(dir.path(), &cfg, format, mode);
            let (line, sub) = serve(dir.path(), &cfg, format, mode);
            let body = agent_request(dir.path(), &cfg, format, mode);
            assert_eq!(line["tools"], json!(cli), "{what}: serve's tools line");
            assert_eq!(body["tools"], json!(cli), "{what}: baton agent's request");
            // The subagent's pool is the parent's narrowed (no Agent): each
            // of its definitions is the parent's, and deferral holds.
            let parent: Vec<&Value> = cli.iter().collect();
            let sub_tools = sub["tools"].as_array().unwrap();
            assert!(!sub_tools.is_empty(), "{what}: {sub}");
            for def in sub_tools {
                assert!(parent.contains(&def), "{what}: subagent def {def}");
            }
            assert_eq!(
                sub["deferred"], line["deferred"],
                "{what}: subagent deferral"
            );
            assert_eq!(sub["format"], line["format"], "{what}");
            let names: Vec<&str> = cli.iter().map(name_of).collect();
            let mcp: Vec<&&str> = names.iter().filter(|n| n.starts_with("mcp__")).collect();
            match (mode, format) {
                // Deferred tools are left out of OpenAI lists until loaded.
                ("true", WireFormat::OpenAiChat | WireFormat::OpenAiResponses) => {
                    assert!(mcp.is_empty(), "{what}: {mcp:?}");
                    let deferred = line["deferred"].as_array().unwrap();
                    let deferred_mcp = deferred
                        .iter()
                        .filter(|n| n.as_str().unwrap().starts_with("mcp__"))
                        .count();
                    assert_eq!(deferred_mcp, 4, "{what}: {deferred:?}");
                    assert!(line["reminder"]
                        .as_str()
                        .unwrap()
                        .contains("repo_issues_list"));
                }
                _ => assert_eq!(mcp.len(), 4, "{what}: {names:?}"),
            }
            if mode == "true" && format == WireFormat::Anthropic {
                let marked = cli
                    .iter()
                    .filter(|d| name_of(d).starts_with("mcp__"))
                    .filter(|d| d["defer_loading"] == json!(true))
                    .count();
                assert_eq!(marked, 4, "{what}");
            }
            if format != WireFormat::Anthropic {
                check_openai(format, &cli);
            }
            // Every name fits every format (Anthropic gets the same names).
            assert!(names.iter().all(|n| n.len() <= 64), "{what}: {names:?}");
            baton_test_support::sdk_check::sdk_check(format.name(), std::slice::from_ref(&body));
        }
    }
}

struct Echo;

#[async_trait]
impl ToolLogic<Value> for Echo {
    async fn call(&self, input: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.to_string()))
    }
}

/// A library host's own tools keep dots and length in the pool; only the
/// wire layer maps them.
fn dotted(name: &str) -> Arc<Tool> {
    let schema = json!({"type": "object", "properties": {
        "path": {"type": "string"}, "depth": {"type": "integer"}}, "required": ["path"]});
    let def = ToolDef::new(name, "Reads a thing.").origin(ToolOrigin::Mcp {
        server: "acme".into(),
    });
    Arc::new(Tool::raw(def, schema, Echo).unwrap())
}

#[test]
fn the_library_renders_through_the_same_layer() {
    let long = format!("acme.files.{}", "read_".repeat(14));
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            others: vec![dotted("acme.files.read"), dotted(&long)],
            ..Default::default()
        },
        &baton::engine::AllowAllUnsafe,
    );
    for mode in [ToolSearchMode::Off, ToolSearchMode::Always] {
        for format in WireFormat::ALL {
            let dir = tempfile::tempdir().unwrap();
            let engine = Engine::builder(pool.clone())
                .cwd(dir.path())
                .state_dir(dir.path().join("state"))
                .tool_search(ToolSearchSettings::default().mode(mode).format(format))
                .allow_all_unsafe()
                .build()
                .unwrap();
            let list = engine.request_tools(format);
            let tools = wire::WireTools::new(&pool, format);
            // Each definition sent is the one renderer's, by its wire name.
            for def in &list.tools {
                let mut def = def.clone();
                let marked = def
                    .as_object_mut()
                    .and_then(|o| o.remove("defer_loading"))
                    .is_some();
                assert!(!marked || format == WireFormat::Anthropic);
                let name = name_of(&def).to_string();
                let pool_name = tools
                    .tools()
                    .iter()
                    .zip(pool.tools())
                    .find(|(w, _)| w.name == name)
                    .map(|(_, t)| t.name().to_string())
                    .unwrap_or_else(|| panic!("{format}: unknown wire name {name}"));
                assert_eq!(Some(def), tools.definition_for(&pool_name), "{format}");
            }
            if format != WireFormat::Anthropic {
                check_openai(format, &list.tools);
            }
            let names: Vec<&str> = list.tools.iter().map(name_of).collect();
            assert!(names.iter().all(|n| !n.contains('.')), "{names:?}");
            if mode == ToolSearchMode::Always {
                assert!(
                    list.deferred.contains(&long),
                    "{format}: {:?}",
                    list.deferred
                );
            }
        }
    }
}
