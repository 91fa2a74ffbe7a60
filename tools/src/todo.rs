//! `TodoWrite`: the session's task list.
//!
//! Models plan better when they keep a visible checklist, and hosts like to
//! show it. The whole list is replaced on every call (the model sends the list
//! it wants), which keeps the tool idempotent and avoids index bookkeeping.
//! The list lives in a session slot so it survives across messages, and the
//! host can read it with [`current_todos`].
//!
//! Rule: at most one item may be `in_progress`. Working on one thing at a
//! time is the discipline the list exists to encourage, and a host showing
//! "currently: …" needs a single answer.

use baton_engine::ToolOutput;
use baton_engine::{async_trait, Session, Tool, ToolContext, ToolDef, ToolError, ToolLogic};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// No doc comments on this enum and its variants: schemars would put them
// into TodoWrite's input schema (and turn the `enum` into a `oneOf`), which
// the model reads. The values say it all: pending, in_progress, completed.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One entry of the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    // Undocumented for the same reason as `TodoStatus`.
    #[allow(missing_docs)]
    pub status: TodoStatus,
    /// The same task in the present continuous ("Running the tests"), shown
    /// while it is in progress.
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// The input of `TodoWrite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The complete new list; it replaces the previous one.
    pub todos: Vec<TodoItem>,
}

/// The session slot holding the list.
#[derive(Default)]
struct TodoSlot(Mutex<Vec<TodoItem>>);

/// The session's current todo list (empty if never written).
pub fn current_todos(session: &Session) -> Vec<TodoItem> {
    session
        .slots()
        .get_or_default::<TodoSlot>()
        .0
        .lock()
        .clone()
}

struct TodoWrite;

/// The `TodoWrite` tool: the model's task list for the session, replaced
/// whole on every call and readable by the host with [`current_todos`].
pub fn tool() -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "TodoWrite",
        "Replaces the session's todo list with `todos`. Use it to plan work with \
         several steps and to show progress: each item has `content` (imperative), \
         `activeForm` (present continuous) and `status` (pending, in_progress, \
         completed). Keep exactly one item in_progress while working, and mark \
         items completed as soon as they are done. Send an empty list to clear it.",
    )
    .search_hint("plan tasks checklist progress todo list")
    .should_defer(true);
    Tool::typed::<TodoWriteInput, _>(def, TodoWrite)
}

fn check(todos: &[TodoItem]) -> Result<(), String> {
    let mut problems = Vec::new();
    for (i, item) in todos.iter().enumerate() {
        if item.content.trim().is_empty() {
            problems.push(format!("todos[{i}].content is empty"));
        }
        if item.active_form.trim().is_empty() {
            problems.push(format!("todos[{i}].activeForm is empty"));
        }
    }
    let in_progress: Vec<String> = todos
        .iter()
        .enumerate()
        .filter(|(_, t)| t.status == TodoStatus::InProgress)
        .map(|(i, _)| i.to_string())
        .collect();
    if in_progress.len() > 1 {
        problems.push(format!(
            "{} items are in_progress (todos[{}]); keep at most one in_progress and \
             mark the others pending or completed",
            in_progress.len(),
            in_progress.join("], todos[")
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "The todo list was not changed: {}.",
            problems.join("; ")
        ))
    }
}

fn render(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "The todo list is now empty.".to_string();
    }
    let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
    let mut out = format!(
        "Todo list updated: {} pending, {} in progress, {} completed.\n",
        count(TodoStatus::Pending),
        count(TodoStatus::InProgress),
        count(TodoStatus::Completed)
    );
    for item in todos {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("{mark} {}\n", item.content));
    }
    out.push_str("Keep the list current as you work.");
    out
}

#[async_trait]
impl ToolLogic<TodoWriteInput> for TodoWrite {
    /// The list lives in the session and touches nothing outside it, so
    /// asking the user about it would only be noise (hosts such as Claude
    /// Code never ask either). Deny rules still apply.
    async fn check_permissions(
        &self,
        _input: &TodoWriteInput,
        _ctx: &ToolContext,
    ) -> baton_engine::ToolPermission {
        baton_engine::ToolPermission::Allow
    }

    async fn validate_input(
        &self,
        input: &TodoWriteInput,
        _ctx: &ToolContext,
    ) -> Result<(), String> {
        check(&input.todos)
    }

    async fn call(&self, input: TodoWriteInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        // Checked again: validate_input may be skipped by embedders calling
        // the tool directly, and the list must never hold a broken state.
        check(&input.todos).map_err(ToolError::new)?;
        let slot = ctx.session.slots().get_or_default::<TodoSlot>();
        let old = std::mem::replace(&mut *slot.0.lock(), input.todos.clone());
        // Claude Code's `tool_response` for TodoWrite (sdk-tools.d.ts
        // `TodoWriteOutput`): the list before and after.
        let response = serde_json::json!({"oldTodos": old, "newTodos": input.todos});
        Ok(ToolOutput::text(render(&input.todos)).with_response(response))
    }
}

#[cfg(test)]
mod tests;
