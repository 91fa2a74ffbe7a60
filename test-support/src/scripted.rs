//! A deterministic fake model loop for subagent tests.
//!
//! The "model" of a subagent is its prompt: a JSON script of assistant
//! messages (`steps`, each a list of tool calls), then a `reply` (or a
//! `fail`). An Agent call inside a step carries the next level's script as
//! its prompt, so one JSON value describes a whole tree. The runner records
//! what each subagent was given and every result it saw, in arrival order,
//! so tests can check the invariant at every level. A gated runner holds
//! every subagent before its first step until the test lets it go.

use std::sync::Arc;

use baton_engine::nesting::NestedEvent;
use baton_engine::subagent::{StopVerdict, SubagentReport, SubagentRunner, SubagentTask};
use baton_engine::{async_trait, Outcome, PermissionMode, ToolUse};
use serde_json::{json, Value};
use std::sync::Mutex as StdMutex;
use tokio::sync::Semaphore;

/// What one subagent was given and saw.
#[derive(Clone, Debug)]
pub struct Record {
    pub agent_id: String,
    pub agent_type: String,
    pub depth: usize,
    pub chain: Vec<String>,
    pub tools: Vec<String>,
    pub mode: PermissionMode,
    pub model: Option<String>,
    pub system_prompt: String,
    /// Per batch: (call id sent, result call id, is_error, outcome).
    pub batches: Vec<Vec<(String, String, bool, Outcome)>>,
    pub finished: bool,
    /// What the SubagentStart hooks gave the subagent.
    pub start_context: Vec<String>,
    /// The feedback of each SubagentStop block, in order.
    pub continued: Vec<String>,
}

#[derive(Default)]
pub struct Scripted {
    pub records: StdMutex<Vec<Record>>,
    /// When set, every run waits for a permit before its first step.
    pub gate: Option<Arc<Semaphore>>,
    pub started: std::sync::atomic::AtomicUsize,
}

impl Scripted {
    pub fn new() -> Arc<Self> {
        Arc::new(Scripted::default())
    }

    pub fn gated(gate: Arc<Semaphore>) -> Arc<Self> {
        Arc::new(Scripted {
            gate: Some(gate),
            ..Default::default()
        })
    }

    pub fn record(&self, agent_id: &str) -> Record {
        self.records
            .lock()
            .unwrap()
            .iter()
            .find(|r| r.agent_id == agent_id)
            .cloned()
            .unwrap_or_else(|| panic!("no record for {agent_id}"))
    }

    pub fn all(&self) -> Vec<Record> {
        self.records.lock().unwrap().clone()
    }
}

/// A script: one message of `calls`, then `reply`.
pub fn script(calls: Vec<Value>, reply: &str) -> String {
    json!({"steps": [calls], "reply": reply}).to_string()
}

pub fn bash(id: &str, command: &str) -> Value {
    json!({"id": id, "name": "Bash", "input": {"command": command}})
}

pub fn agent(id: &str, prompt: String) -> Value {
    json!({"id": id, "name": "Agent", "input": {"description": "scripted task", "prompt": prompt}})
}

pub fn agent_typed(id: &str, kind: &str, prompt: String) -> Value {
    json!({"id": id, "name": "Agent", "input": {
        "description": "scripted task", "prompt": prompt, "subagent_type": kind}})
}

#[async_trait]
impl SubagentRunner for Scripted {
    async fn run(&self, task: SubagentTask) -> Result<SubagentReport, String> {
        self.started
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let chain = task.chain();
        let index = {
            let mut records = self.records.lock().unwrap();
            records.push(Record {
                agent_id: task.agent_id.clone(),
                agent_type: task.definition.name.clone(),
                depth: chain.depth(),
                chain: chain.call_ids(),
                tools: task.tools.names(),
                mode: task.context.permission_mode,
                model: task.model.clone(),
                system_prompt: task.definition.system_prompt.clone(),
                batches: Vec::new(),
                finished: false,
                start_context: task.start_context.clone(),
                continued: Vec::new(),
            });
            records.len() - 1
        };
        if let Some(gate) = &self.gate {
            let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
        }
        let script: Value = serde_json::from_str(&task.prompt)
            .map_err(|e| format!("the scripted model cannot read its prompt: {e}"))?;
        let steps = script["steps"].as_array().cloned().unwrap_or_default();
        let mut seen = Vec::new();
        for step in steps {
            if task.cancel.is_cancelled() {
                break;
            }
            let mut batch = task.batches.open().await.map_err(|e| e.to_string())?;
            let mut sent = Vec::new();
            for call in step.as_array().cloned().unwrap_or_default() {
                let id = call["id"].as_str().unwrap_or("?").to_string();
                let name = call["name"].as_str().unwrap_or("?");
                batch
                    .add(ToolUse::new(id.clone(), name, call["input"].clone()))
                    .map_err(|e| e.to_string())?;
                sent.push(id);
            }
            batch.end();
            let mut results = Vec::new();
            while let Some(event) = batch.next_event().await {
                if let NestedEvent::Result(r) = event {
                    let i = results.len();
                    results.push((
                        sent.get(i).cloned().unwrap_or_default(),
                        r.call_id.clone(),
                        r.is_error,
                        r.outcome.clone(),
                    ));
                    seen.push(json!({"id": r.call_id, "is_error": r.is_error, "text": r.text()}));
                }
            }
            self.records.lock().unwrap()[index].batches.push(results);
        }
        self.records.lock().unwrap()[index].finished = true;
        if let Some(msg) = script["fail"].as_str() {
            return Err(msg.to_string());
        }
        let reply = script["reply"].as_str().unwrap_or("done");
        let mut text = format!("{reply}\n{}", Value::Array(seen));
        // `"ask_stop": true`: the loop asks the SubagentStop hooks before it
        // stops, and takes one more "turn" per block (at most three).
        if script["ask_stop"] == true {
            for _ in 0..3 {
                match task.stopping(&text).await {
                    StopVerdict::Stop => break,
                    StopVerdict::Continue(reason) => {
                        self.records.lock().unwrap()[index]
                            .continued
                            .push(reason.clone());
                        text = format!("{reply} (went on after: {reason})");
                    }
                    other => panic!("a verdict this runner does not know: {other:?}"),
                }
            }
        }
        Ok(SubagentReport {
            text,
            input_tokens: Some(100),
            output_tokens: Some(20),
            model: task.model.clone(),
            transcript: None,
        })
    }
}
