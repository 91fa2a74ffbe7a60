//! The host's view of a session's tasks (background shells, monitors,
//! interactive sessions): list them, stop one, read the end of its output.
//! Changes arrive as `tasks_changed` notifications on
//! [`Engine::notifications`], each with the whole list.

use crate::Engine;

pub use baton_tools::tasks::{OutputTail, TaskError, TaskInfo, TAIL_BYTES};

impl Engine {
    /// Every task of the session, running or ended.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        baton_tools::tasks::list(self.runtime.session())
    }

    /// Stops task `id` and every process it started; returns once it has
    /// ended (bounded), with its final listing. `Err` names the known ids.
    pub async fn stop_task(&self, id: &str) -> Result<TaskInfo, TaskError> {
        baton_tools::tasks::stop(self.runtime.session(), id).await
    }

    /// The last [`TAIL_BYTES`] of task `id`'s output, its total size, and
    /// whether the tail is not all of it.
    pub fn task_output(&self, id: &str) -> Result<OutputTail, TaskError> {
        baton_tools::tasks::output_tail(self.runtime.session(), id)
    }
}
