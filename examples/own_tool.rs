//! Your own tool, end to end: a typed input with a derived schema, the
//! classification the scheduler relies on, the permission target the rules
//! judge, a secure engine holding it beside the built-ins, and a host
//! running one message with it. `cargo run --example own_tool`; it is also
//! run by `cargo test` (tests/own_tool.rs).

use std::path::PathBuf;
use std::sync::Arc;

use baton::engine::permission::{FileAccess, PermissionTarget, RulePolicy};
use baton::engine::pool::{PoolSpec, ToolPool};
use baton::engine::schemars::JsonSchema;
use baton::engine::{async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput};
use baton::{Engine, Outcome, ToolUse};
use serde::Deserialize;

/// The input: its JSON Schema is derived from this type, so the two
/// cannot drift apart.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "baton::engine::schemars")]
#[serde(deny_unknown_fields)]
pub struct WordCountInput {
    /// Absolute path of the text file to count.
    pub path: PathBuf,
}

struct WordCount;

#[async_trait]
impl ToolLogic<WordCountInput> for WordCount {
    // It only reads: it may run beside other safe calls, and it is judged
    // as a reader. (Left out, both default to false: serial, a writer.)
    fn is_concurrency_safe(&self, _input: &WordCountInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &WordCountInput) -> bool {
        true
    }

    // What the rules judge: the file read, like `Read(...)` rules.
    fn permission_target(&self, input: &WordCountInput, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: input.path.clone(),
            access: FileAccess::Read,
        }
    }

    async fn call(
        &self,
        input: WordCountInput,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let text = tokio::fs::read_to_string(&input.path)
            .await
            .map_err(|e| ToolError::new(format!("cannot read {}: {e}", input.path.display())))?;
        let words = text.split_whitespace().count();
        Ok(ToolOutput::text(format!(
            "{} has {words} words.",
            input.path.display()
        )))
    }
}

/// What can stop the example before its calls run (a host would report it).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The tool: its definition (name and the description the model reads) and
/// its logic, with the schema derived from [`WordCountInput`].
pub fn word_count() -> Result<Tool, Error> {
    let def = ToolDef::new(
        "WordCount",
        "Counts the words of a text file given by its absolute `path`.",
    );
    Ok(Tool::typed::<WordCountInput, _>(def, WordCount)?)
}

/// Runs one message with two calls: a file in the workspace (allowed: a
/// read inside the workspace) and one outside it (it would need approval,
/// and with nobody to ask it does not run). Returns each result's text.
pub async fn run(workspace: &std::path::Path) -> Result<Vec<(Outcome, String)>, Error> {
    let policy = RulePolicy::new();
    let builtins = baton::BuiltinConfig::default().tools()?;
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins,
            others: vec![Arc::new(word_count()?)],
            ..Default::default()
        },
        &policy,
    );
    // No `.policy(...)`: the secure default (ask outside the workspace).
    let engine = Engine::builder(pool)
        .cwd(workspace)
        .state_dir(workspace.join(".state"))
        .build()?;
    let inside = workspace.join("notes.txt");
    std::fs::write(&inside, "one two three\n")?;
    let batch = engine.open_batch().await?;
    for (id, path) in [("in", inside), ("out", PathBuf::from("/etc/hostname"))] {
        let input = serde_json::json!({ "path": path });
        batch.add(ToolUse::new(id, "WordCount", input))?;
    }
    let (results, _summary) = batch.finish().await;
    Ok(results
        .into_iter()
        .map(|r| {
            let text = serde_json::to_string(&r.content).unwrap_or_default();
            (r.outcome, text)
        })
        .collect())
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Error> {
    let dir = std::env::temp_dir().join(format!("baton-own-tool-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let results = run(&dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    for (outcome, text) in results? {
        println!("{outcome:?}: {text}");
    }
    Ok(())
}
