//! `Skill {skill, args?}`: the model invokes one of the session's skills
//! (see [`catalog`]) by name.
//!
//! Inline (the default), the result is the skill's instructions with the
//! arguments put in ([`args`]), for the model to follow next. With
//! `context: fork` the instructions are handed to a subagent (the
//! skill's `agent` type, general-purpose otherwise) through the same
//! machinery as an `Agent` call, and the result is the subagent's report.
//! Either way the structured result (`tool_response`) is Claude Code's
//! shape: `success`, `commandName`, `allowedTools`, `model`, `status`, so
//! a host can switch models or narrow tools while the skill runs.

pub(crate) mod args;
pub(crate) mod catalog;
pub(crate) mod shell;

use std::sync::Arc;

use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput, WorkKind,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

pub use catalog::{Skill, SkillCatalog};

use crate::agent::{AgentCatalog, AgentInput};

#[cfg(test)]
mod tests;

/// Claude Code's `Skill` input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill name. E.g., "commit", "review-pr", or "pdf"
    pub skill: String,
    /// Optional arguments for the skill
    #[serde(default)]
    pub args: Option<String>,
}

struct SkillTool {
    skills: Arc<SkillCatalog>,
    agents: Arc<AgentCatalog>,
}

/// The `Skill` tool over `skills`; forked skills run as one of `agents`.
pub fn tool(
    skills: SkillCatalog,
    agents: AgentCatalog,
) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let mut listed = String::new();
    for s in skills.skills().iter().filter(|s| !s.user_only) {
        listed.push_str(&format!(
            "- {}: {}\n",
            s.name,
            s.description.replace('\n', " ")
        ));
    }
    if listed.is_empty() {
        listed.push_str("(no skills are installed in this session)\n");
    }
    let description = format!(
        "Runs a skill: a packaged set of instructions for a kind of task. When the user's \
         request matches a skill below, invoke it by name before doing the task yourself, \
         and pass anything the skill needs in `args`. The result holds the skill's \
         instructions; follow them. Invoke only skills listed here.\n\nAvailable skills:\n{listed}"
    );
    let def = ToolDef::new("Skill", description)
        .search_hint("run a skill slash command instructions")
        .work_kind(WorkKind::Wait);
    Tool::typed::<SkillInput, _>(
        def,
        SkillTool {
            skills: Arc::new(skills),
            agents: Arc::new(agents),
        },
    )
}

#[async_trait]
impl ToolLogic<SkillInput> for SkillTool {
    fn is_concurrency_safe(&self, _input: &SkillInput) -> bool {
        true
    }

    // Returning instructions changes nothing; a forked skill's subagent
    // has each of its own calls judged, as an Agent call's does.
    fn is_read_only(&self, _input: &SkillInput) -> bool {
        true
    }

    fn label(&self, input: &SkillInput) -> Option<String> {
        Some(format!("Skill({})", input.skill))
    }

    async fn validate_input(&self, input: &SkillInput, _ctx: &ToolContext) -> Result<(), String> {
        let names: Vec<&str> = self
            .skills
            .skills()
            .iter()
            .filter(|s| !s.user_only)
            .map(|s| s.name.as_str())
            .collect();
        match self.skills.find(&input.skill) {
            Some(s) if s.user_only => Err(format!(
                "Skill `{}` can only be invoked by the user (disable-model-invocation, or a command without a description).",
                s.name
            )),
            Some(_) => Ok(()),
            None if names.is_empty() => Err(format!(
                "Unknown skill `{}`: this session has no skills.",
                input.skill
            )),
            None => Err(format!(
                "Unknown skill `{}`. Available skills: {}",
                input.skill,
                names.join(", ")
            )),
        }
    }

    async fn call(&self, input: SkillInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let skill = self
            .skills
            .find(&input.skill)
            .ok_or_else(|| ToolError::new(format!("Unknown skill `{}`", input.skill)))?
            .clone();
        let body = args::substitute(
            &skill.body,
            input.args.as_deref().unwrap_or(""),
            &skill.dir.display().to_string(),
            ctx.session.id(),
        );
        let body = if self.skills.shell_disabled {
            let found = shell::blocks(&body);
            let notes = vec![shell::DISABLED.to_string(); found.len()];
            shell::replace(&body, &found, &notes)
        } else {
            shell::expand(&body, &skill.name, &ctx).await
        };
        let mut response = json!({
            "success": true,
            "commandName": skill.name,
            "allowedTools": skill.allowed_tools,
            "model": skill.model,
        });
        if !skill.fork {
            response["status"] = json!("inline");
            let text = format!(
                "Base directory for this skill: {}\n\n{}",
                skill.dir.display(),
                body
            );
            return Ok(ToolOutput::text(text).with_response(response));
        }
        let agent = AgentInput {
            description: format!("skill {}", skill.name),
            prompt: body,
            subagent_type: skill.agent.clone(),
            model: skill.model.clone(),
            run_in_background: None,
            name: None,
            isolation: None,
            effort: None,
            team_name: None,
            mode: None,
        };
        let mut out = crate::agent::run_agent(&self.agents, agent, ctx).await?;
        response["status"] = json!("forked");
        response["result"] = json!(out
            .content
            .iter()
            .filter_map(|b| b.as_text())
            .collect::<Vec<_>>()
            .join("\n"));
        out.response = Some(response);
        Ok(out)
    }
}
