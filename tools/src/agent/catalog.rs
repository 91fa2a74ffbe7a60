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
pub(crate) fn normalize(name: &str) -> String {
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
        Self::load_with_plugins(project_dir, home, &[])
    }

    /// [`AgentCatalog::load`], with the agents of enabled plugins
    /// (`(plugin name, plugin root)`) after the built-ins: each
    /// `<root>/agents/*.md`, named `plugin:agent` as the plugin's skills
    /// are, so a plugin cannot take the name of the user's own agents.
    pub fn load_with_plugins(
        project_dir: &Path,
        home: Option<&Path>,
        plugins: &[(String, std::path::PathBuf)],
    ) -> Self {
        let mut catalog = Self::builtin();
        for (plugin, root) in plugins {
            let (defs, diags) = load_dir(&root.join("agents"), false);
            catalog.diagnostics.extend(diags);
            for mut def in defs {
                def.name = format!("{plugin}:{}", def.name);
                catalog.insert_reporting(def);
            }
        }
        if let Some(home) = home {
            let (defs, diags) = load_dir(&home.join(".claude").join("agents"), false);
            catalog.diagnostics.extend(diags);
            defs.into_iter().for_each(|d| catalog.insert_reporting(d));
        }
        let (defs, diags) = load_dir(&project_dir.join(".claude").join("agents"), true);
        catalog.diagnostics.extend(diags);
        defs.into_iter().for_each(|d| catalog.insert_reporting(d));
        catalog
    }

    /// [`AgentCatalog::insert`], with a warning when a file's definition
    /// hides another of the same name. Claude Code's precedence: the
    /// host's (`--agents`, the API) over the project's over the user's
    /// over the built-ins; within one directory files are read in name
    /// order and the later file wins.
    pub fn insert_reporting(&mut self, def: AgentDefinition) {
        let key = normalize(&def.name);
        if let Some(old) = self.defs.iter().find(|d| normalize(&d.name) == key) {
            // Replacing a built-in on purpose is not a duplicate.
            if old.source != DefinitionSource::BuiltIn {
                self.diagnostics.push(format!(
                    "agent `{}` is defined twice: {} wins over {}",
                    def.name,
                    where_from(&def.source),
                    where_from(&old.source)
                ));
            }
        }
        self.insert(def);
    }

    /// Adds a definition, replacing one whose name matches.
    pub fn insert(&mut self, def: AgentDefinition) {
        let key = normalize(&def.name);
        match self.defs.iter().position(|d| normalize(&d.name) == key) {
            Some(i) => self.defs[i] = Arc::new(def),
            None => self.defs.push(Arc::new(def)),
        }
    }

    /// The catalog with `def` added (replacing one of the same name).
    pub fn with(mut self, def: AgentDefinition) -> Self {
        self.insert(def);
        self
    }

    /// Every definition, in the order they were added.
    pub fn definitions(&self) -> impl Iterator<Item = &Arc<AgentDefinition>> {
        self.defs.iter()
    }

    /// The name of every definition.
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
                    // Only what the agent really gets (unknown names
                    // were reported when the file was loaded).
                    Some(t) => t
                        .iter()
                        .filter(|n| super::tool_names::check(&[n.to_string()], "", "").is_empty())
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            };
            let description = d.description.replace('\n', " ");
            out.push_str(&format!("- {}: {} (Tools: {tools})\n", d.name, description));
        }
        out
    }
}

fn where_from(source: &DefinitionSource) -> String {
    match source {
        DefinitionSource::BuiltIn => "the built-in".into(),
        DefinitionSource::User(p) => format!("{} (user)", p.display()),
        DefinitionSource::Project(p) => format!("{} (project)", p.display()),
        DefinitionSource::Host => "the host's definition".into(),
        // A source added to the engine later: named generically.
        _ => "a definition from elsewhere".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_warn_naming_the_winner_and_unknown_tools_name_the_file() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let user_dir = home.path().join(".claude/agents");
        let proj_dir = project.path().join(".claude/agents");
        std::fs::create_dir_all(&user_dir).unwrap();
        std::fs::create_dir_all(&proj_dir).unwrap();
        let file = |name: &str, tools: &str| {
            format!("---\nname: {name}\ndescription: d\ntools: {tools}\n---\nbody\n")
        };
        std::fs::write(user_dir.join("rev.md"), file("reviewer", "Read")).unwrap();
        std::fs::write(proj_dir.join("a.md"), file("reviewer", "Read, Grep")).unwrap();
        std::fs::write(
            proj_dir.join("b.md"),
            file("reviewer", "Read, Raed, WebSearch"),
        )
        .unwrap();
        let c = AgentCatalog::load(project.path(), Some(home.path()));
        let d = c.diagnostics.join("\n");
        assert!(d.contains("b.md (project) wins over"), "{d}");
        assert!(
            d.contains("a.md (project) wins over") && d.contains("rev.md (user)"),
            "{d}"
        );
        assert!(d.contains("b.md: `tools` names `Raed`"), "{d}");
        assert!(
            d.contains("b.md: `tools` names `WebSearch`, a Claude Code tool"),
            "{d}"
        );
        let winner = c.find(Some("reviewer")).unwrap();
        assert!(matches!(&winner.source, DefinitionSource::Project(p) if p.ends_with("b.md")));
        // The description lists only what the agent gets.
        let described = c.describe();
        assert!(described.contains("(Tools: Read)"), "{described}");
    }

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
