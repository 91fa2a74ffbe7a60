//! The settings' `env` block, for everything a session starts.
//!
//! Claude Code applies `env` from settings files to the processes it runs:
//! hook commands, Bash commands, MCP servers. The engine keeps the merged
//! block in the session's slots so that each of them (in `tools`, or a
//! host's own) reads the same variables without a dependency on how the
//! settings were loaded.

use std::sync::Arc;

use baton_tool::session::Session;

/// Variables to set in every process the session starts, in order.
#[derive(Clone, Debug, Default)]
pub struct SettingsEnv(pub Vec<(String, String)>);

impl SettingsEnv {
    /// The session's variables (empty when the settings set none).
    pub fn of(session: &Session) -> Arc<SettingsEnv> {
        session.slots().get::<SettingsEnv>().unwrap_or_default()
    }

    /// Records `vars` for `session`.
    pub fn install(session: &Session, vars: Vec<(String, String)>) {
        session.slots().insert(Arc::new(SettingsEnv(vars)));
    }
}
