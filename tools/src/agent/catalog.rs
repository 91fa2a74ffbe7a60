//! The agent types a session offers: two built-ins, then the user's, the
//! project's and the host's definitions (a later source hides an earlier
//! one of the same name, as in Claude Code).

use std::path::Path;
use std::sync::Arc;

use baton_engine::subagent::{AgentDefinition, DefinitionSource};
use baton_engine::PermissionMode;

use super::definitions::load_dir;

/// Name of the built-in agent with every tool.
pub const GENERAL_PURPOSE: &str = "general-purpose";
/// Name of the built-in read-only explorer.
pub const EXPLORE: &str = "Explore";

/// Tools that never change anything whatever their input: the only ones a
/// read-only agent gets. Bash is not among them: whether a command is
/// read-only is a guess, and a read-only agent must not depend on a guess.
pub const READ_ONLY_TOOLS: [&str; 7] = [
    "Read",
    "Glob",
    "Grep",
    "WebFetch",
    "WebSearch",
    "TaskOutput",
    "ToolSearch",
];

/// The known agent types, in the order the model sees them.
#[derive(Clone, Debug, Default)]
pub struct AgentCatalog {
    defs: Vec<Arc<AgentDefinition>>,
    /// Problems found while loading files.
    pub diagnostics: Vec<String>,
}

/// `subagent_type` as matched: case and separators (`-`, `_`, space, `.`)
/// do not count, so `general_purpose` and `GeneralPurpose` both work.
pub fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

impl AgentCatalog {
    /// The two built-in types only.
    pub fn builtin() -> Self {
        let mut general = AgentDefinition::new(
            GENERAL_PURPOSE,
            "General-purpose agent for researching complex questions, searching for code, \
             and executing multi-step tasks. When you are searching for a keyword or file \
             and are not confident that you will find the right match in the first few \
             tries, use this agent to perform the search for you.",
        );
        general.source = DefinitionSource::BuiltIn;
        general.system_prompt = "You are an agent working on a task the main agent handed \
            you. Use the tools available to complete it fully, then reply with a concise \
            report of what you found or did; that reply is all the main agent sees."
            .into();
        let mut explore = AgentDefinition::new(
            EXPLORE,
            "Fast read-only agent for exploring codebases: finding files by pattern, \
             searching code for keywords, and answering questions about how the code \
             works. It cannot change anything.",
        );
        explore.source = DefinitionSource::BuiltIn;
        explore.read_only = true;
        explore.permission_mode = Some(PermissionMode::Plan);
        explore.system_prompt = "You are a read-only exploration agent. Search and read to \
            answer the question you were given, then reply with a concise report naming \
            the files and lines that matter. You cannot modify anything."
            .into();
        AgentCatalog {
            defs: vec![Arc::new(general), Arc::new(explore)],
            diagnostics: Vec::new(),
        }
    }

    /// Built-ins, then `~/.claude/agents` (when `home` is given), then the
    /// project's `.claude/agents`.
    pub fn load(project_dir: &Path, home: Option<&Path>) -> Self {
        let mut catalog = Self::builtin();
        if let Some(home) = home {
            let (defs, diags) = load_dir(&home.join(".claude").join("agents"), false);
            catalog.diagnostics.extend(diags);
            defs.into_iter().for_each(|d| catalog.insert(d));
        }
        let (defs, diags) = load_dir(&project_dir.join(".claude").join("agents"), true);
        catalog.diagnostics.extend(diags);
        defs.into_iter().for_each(|d| catalog.insert(d));
        catalog
    }

    /// Adds a definition, replacing one whose name matches.
    pub fn insert(&mut self, def: AgentDefinition) {
        let key = normalize(&def.name);
        match self.defs.iter().position(|d| normalize(&d.name) == key) {
            Some(i) => self.defs[i] = Arc::new(def),
            None => self.defs.push(Arc::new(def)),
        }
    }

    pub fn with(mut self, def: AgentDefinition) -> Self {
        self.insert(def);
        self
    }

    pub fn definitions(&self) -> impl Iterator<Item = &Arc<AgentDefinition>> {
        self.defs.iter()
    }

    pub fn names(&self) -> Vec<String> {
        self.defs.iter().map(|d| d.name.clone()).collect()
    }

    /// The definition `subagent_type` names (general-purpose when `None`),
    /// or an error listing the known types.
    pub fn find(&self, subagent_type: Option<&str>) -> Result<Arc<AgentDefinition>, String> {
        let wanted = subagent_type.unwrap_or(GENERAL_PURPOSE);
        let key = normalize(wanted);
        self.defs
            .iter()
            .find(|d| normalize(&d.name) == key)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "Agent type '{wanted}' not found. Available agents: {}",
                    self.names().join(", ")
                )
            })
    }

    /// The list of types for the tool's description.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for d in &self.defs {
            let tools = if d.read_only {
                READ_ONLY_TOOLS.join(", ")
            } else {
                match &d.tools {
                    None if d.disallowed_tools.is_empty() => "*".to_string(),
                    None => format!("all tools except {}", d.disallowed_tools.join(", ")),
                    Some(t) => t.join(", "),
                }
            };
            let description = d.description.replace('\n', " ");
            out.push_str(&format!("- {}: {} (Tools: {tools})\n", d.name, description));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_match_ignoring_case_and_separators() {
        let c = AgentCatalog::builtin();
        for name in [
            "general-purpose",
            "General_Purpose",
            "generalpurpose",
            "GENERAL PURPOSE",
        ] {
            assert_eq!(c.find(Some(name)).unwrap().name, GENERAL_PURPOSE, "{name}");
        }
        assert_eq!(c.find(None).unwrap().name, GENERAL_PURPOSE);
        assert_eq!(c.find(Some("explore")).unwrap().name, EXPLORE);
        let err = c.find(Some("code-reviewer")).unwrap_err();
        assert!(err.contains("'code-reviewer' not found"), "{err}");
        assert!(err.contains("general-purpose, Explore"), "{err}");
    }

    #[test]
    fn a_later_definition_hides_an_earlier_one() {
        let mut c = AgentCatalog::builtin();
        c.insert(AgentDefinition::new("General_Purpose", "mine"));
        assert_eq!(c.names().len(), 2);
        assert_eq!(c.find(None).unwrap().description, "mine");
    }
}
