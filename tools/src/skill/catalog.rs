//! Skills on disk: `<dir>/<name>/SKILL.md`, a Markdown file whose YAML
//! frontmatter says what the skill is for and how it runs.
//!
//! Claude Code reads them from `~/.claude/skills` (personal),
//! `.claude/skills` of the project, and enabled plugins' `skills/`
//! directories (named `plugin:skill`). When a personal and a project skill
//! share a name, the personal one wins, as Claude Code documents; the
//! other is reported. A broken file is reported and skipped, never hides
//! the others.
//!
//! Custom slash commands (`commands/<name>.md`, and `commands/<dir>/<name>.md`
//! named `dir:name`) are skills too in Claude Code 2.x, loaded after the
//! skills (a skill of the same name wins). The model may invoke one only
//! when its frontmatter gives a `description`, as Claude Code lists only
//! those.

use std::path::{Path, PathBuf};

use yaml_serde::Value;

use crate::agent::definitions::{key_by_key, scalar, split_frontmatter, tool_list};

/// One skill.
#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    /// What the model passes as `skill`.
    pub name: String,
    /// The frontmatter's `description`: when to use the skill.
    pub description: String,
    /// `allowed-tools`: tools the skill expects to use.
    pub allowed_tools: Vec<String>,
    /// `model`: the model the host should use while the skill runs.
    pub model: Option<String>,
    /// `context: fork`: run as a subagent rather than inline.
    pub fork: bool,
    /// `agent`: the subagent type a forked skill runs as.
    pub agent: Option<String>,
    /// `disable-model-invocation: true`: only the user may invoke it.
    pub user_only: bool,
    /// The directory holding SKILL.md (`${CLAUDE_SKILL_DIR}`).
    pub dir: PathBuf,
    /// The instructions below the frontmatter.
    pub body: String,
}

/// The skills a session offers, with what went wrong loading them.
#[derive(Clone, Debug, Default)]
pub struct SkillCatalog {
    skills: Vec<Skill>,
    /// Skill files that could not be loaded, and why.
    pub diagnostics: Vec<String>,
    /// The settings' `disableSkillShellExecution`: shell blocks are
    /// replaced by a note instead of run (see [`super::shell`]).
    pub shell_disabled: bool,
}

impl SkillCatalog {
    /// Personal skills (`home`), then the project's, then each plugin's
    /// (`(plugin name, plugin root)`).
    pub fn load(project: &Path, home: Option<&Path>, plugins: &[(String, PathBuf)]) -> Self {
        let mut catalog = SkillCatalog::default();
        if let Some(home) = home {
            catalog.add_dir(&home.join(".claude").join("skills"), None);
        }
        catalog.add_dir(&project.join(".claude").join("skills"), None);
        for (plugin, root) in plugins {
            catalog.add_dir(&root.join("skills"), Some(plugin));
        }
        if let Some(home) = home {
            catalog.add_commands(&home.join(".claude").join("commands"), None);
        }
        catalog.add_commands(&project.join(".claude").join("commands"), None);
        for (plugin, root) in plugins {
            catalog.add_commands(&root.join("commands"), Some(plugin));
        }
        catalog
    }

    /// The custom commands under `dir`: every `.md` file at any depth (up
    /// to [`COMMAND_DEPTH`] folders), named by its path with `:` between
    /// folders; a `SKILL.md` is named by its folder.
    pub fn add_commands(&mut self, dir: &Path, plugin: Option<&str>) {
        let mut files = Vec::new();
        self.command_files(dir, &mut Vec::new(), &mut files);
        files.sort();
        for (file, parts) in files {
            let name = parts.join(":");
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) => {
                    self.diagnostics
                        .push(format!("{}: cannot read: {e}", file.display()));
                    continue;
                }
            };
            match parse(&text, &file, plugin, Some(name)) {
                Ok((skill, notes)) => {
                    self.diagnostics.extend(notes);
                    self.insert(skill, &file);
                }
                Err(problem) => self.diagnostics.push(problem),
            }
        }
    }

    /// The entries of `dir` (`what` it holds names it in a diagnostic);
    /// `None` when it does not exist or cannot be listed.
    fn listed(&mut self, dir: &Path, what: &str) -> Option<std::fs::ReadDir> {
        match std::fs::read_dir(dir) {
            Ok(entries) => Some(entries),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.diagnostics
                    .push(format!("{}: cannot list {what}: {e}", dir.display()));
                None
            }
        }
    }

    /// Collects `(file, name parts)` below `dir`; symbolic links to
    /// folders are not followed (no cycles), and depth is bounded.
    fn command_files(
        &mut self,
        dir: &Path,
        parts: &mut Vec<String>,
        out: &mut Vec<(PathBuf, Vec<String>)>,
    ) {
        let Some(entries) = self.listed(dir, "commands") else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if parts.len() < COMMAND_DEPTH && !name.starts_with('.') {
                    parts.push(name);
                    self.command_files(&path, parts, out);
                    parts.pop();
                }
            } else if name.eq_ignore_ascii_case("SKILL.md") {
                if !parts.is_empty() {
                    out.push((path, parts.clone()));
                }
            } else if let Some(stem) = name.strip_suffix(".md").filter(|s| !s.is_empty()) {
                let mut named = parts.clone();
                named.push(stem.to_string());
                out.push((path, named));
            }
        }
    }

    /// The skills of one directory (`<dir>/<name>/SKILL.md`), in name order.
    pub fn add_dir(&mut self, dir: &Path, plugin: Option<&str>) {
        let Some(entries) = self.listed(dir, "skills") else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join("SKILL.md")))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            match std::fs::read_to_string(&file) {
                Ok(text) => match parse(&text, &file, plugin, None) {
                    Ok((skill, notes)) => {
                        self.diagnostics.extend(notes);
                        self.insert(skill, &file);
                    }
                    Err(problem) => self.diagnostics.push(problem),
                },
                Err(e) => self
                    .diagnostics
                    .push(format!("{}: cannot read: {e}", file.display())),
            }
        }
    }

    /// Adds `skill` unless one of its name is there already (the earlier
    /// source wins: personal before project).
    fn insert(&mut self, skill: Skill, file: &Path) {
        if let Some(old) = self.skills.iter().find(|s| s.name == skill.name) {
            self.diagnostics.push(format!(
                "skill `{}` is defined twice: {} wins over {}",
                skill.name,
                old.dir.join("SKILL.md").display(),
                file.display()
            ));
            return;
        }
        self.skills.push(skill);
    }

    /// A skill the host defines itself.
    pub fn with(mut self, skill: Skill) -> Self {
        self.skills.retain(|s| s.name != skill.name);
        self.skills.push(skill);
        self
    }

    /// Every skill, in load order (a later skill of the same name replaced
    /// the earlier one).
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill `name` names; a leading `/` (as a user types it) is
    /// accepted.
    pub fn find(&self, name: &str) -> Option<&Skill> {
        let name = name.trim().trim_start_matches('/');
        self.skills.iter().find(|s| s.name == name)
    }
}

/// How deep command folders are read.
pub(crate) const COMMAND_DEPTH: usize = 8;

/// One SKILL.md, or one command file when `command` names it; `Err` says
/// why it is skipped.
fn parse(
    text: &str,
    file: &Path,
    plugin: Option<&str>,
    command: Option<String>,
) -> Result<(Skill, Vec<String>), String> {
    let label = file.display().to_string();
    let mut notes = Vec::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = split_frontmatter(text).unwrap_or(("", text));
    let map = match yaml_serde::from_str::<Value>(front) {
        Ok(Value::Mapping(map)) => map,
        Ok(Value::Null) => yaml_serde::Mapping::new(),
        Ok(_) => {
            return Err(format!(
                "{label}: the frontmatter is not a mapping; skipped"
            ))
        }
        Err(e) => key_by_key(front)
            .ok_or_else(|| format!("{label}: the frontmatter is not valid YAML ({e}); skipped"))?,
    };
    let get = |key: &str| map.get(Value::String(key.into()));
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let dir_name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let named = get("name")
        .and_then(scalar)
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty());
    // A command is named by its path, as Claude Code names it.
    let is_command = command.is_some();
    let base = command.or(named).unwrap_or(dir_name);
    if base.is_empty() {
        return Err(format!("{label}: no name; skipped"));
    }
    let name = match plugin {
        Some(p) => format!("{p}:{base}"),
        None => base,
    };
    let body = body.trim().to_string();
    // Without a description Claude Code shows the body's first paragraph.
    let written = get("description")
        .and_then(scalar)
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty());
    // A command without a description of its own is not offered to the
    // model (Claude Code lists only described commands).
    let unlisted = is_command && written.is_none();
    let description =
        written.unwrap_or_else(|| body.split("\n\n").next().unwrap_or("").trim().to_string());
    let allowed_tools = get("allowed-tools")
        .and_then(|v| tool_list(v, "allowed-tools", &label, &mut notes))
        .unwrap_or_default();
    let fork = match get("context").and_then(scalar).as_deref().map(str::trim) {
        None | Some("") | Some("inline") => false,
        Some("fork") => true,
        Some(other) => {
            notes.push(format!(
                "{label}: context `{other}` is not `fork`; the skill runs inline"
            ));
            false
        }
    };
    let flag = |key: &str| get(key).and_then(Value::as_bool).unwrap_or(false);
    let text_of = |key: &str| {
        get(key)
            .and_then(scalar)
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty() && m != "inherit")
    };
    Ok((
        Skill {
            name,
            description,
            allowed_tools,
            model: text_of("model"),
            fork,
            agent: text_of("agent"),
            user_only: flag("disable-model-invocation") || unlisted,
            dir,
            body,
        },
        notes,
    ))
}
