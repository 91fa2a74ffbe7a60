//! The Claude Code-compatible rule policy.
//!
//! Evaluation order (SPEC §11): deny rules, then the mode's hard limits
//! (plan mode refuses anything not read-only, bypassPermissions allows the
//! rest), then ask rules, then allow rules, then the mode's default. Deny is
//! looked up first and nothing after it consults the deny list, so adding a
//! deny rule can only ever make a decision stricter.
//!
//! Deny and ask lookups are generous (any spelling of the call that matches
//! counts: the command as a whole, each parsed part, each crudely split
//! piece; a path as written and as resolved). Allow lookups are strict
//! (every parsed part of a command must be allowed; a path must match after
//! symlinks are resolved).

use std::path::{Path, PathBuf};

use super::bash::CommandParts;
use super::paths::{absolute, Base, PathPattern};
use super::protected::protected_reason_any;
use super::rules::{Rule, RuleError, RuleKind, Specifier};
use super::web::host_of;
use super::{
    AskSource, FileAccess, PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionTarget,
};
use baton_tool::context::Context;
use baton_tool::paths::{normalize, resolve};

/// Rules from settings files, evaluated like Claude Code's.
#[derive(Clone, Debug, Default)]
pub struct RulePolicy {
    deny: Vec<Rule>,
    ask: Vec<Rule>,
    allow: Vec<Rule>,
    /// Set by `permissions.disableBypassPermissionsMode: "disable"`: where
    /// it was set, for messages.
    bypass_disabled_by: Option<String>,
}

impl RulePolicy {
    /// A policy without rules: the mode's defaults decide everything.
    pub fn new() -> Self {
        RulePolicy::default()
    }

    /// Parses three lists of rule strings; every bad rule is reported.
    pub fn parse(
        allow: &[&str],
        ask: &[&str],
        deny: &[&str],
        home: Option<&Path>,
        project: &Path,
    ) -> Result<RulePolicy, Vec<RuleError>> {
        let mut policy = RulePolicy::new();
        let mut errors = Vec::new();
        for (kind, list) in [
            (RuleKind::Allow, allow),
            (RuleKind::Ask, ask),
            (RuleKind::Deny, deny),
        ] {
            for text in list {
                match Rule::parse(text, kind, home, project) {
                    Ok(rule) => policy.push(rule),
                    Err(e) => errors.push(e),
                }
            }
        }
        if errors.is_empty() {
            Ok(policy)
        } else {
            Err(errors)
        }
    }

    /// Adds `rule` to its list (after the rules already there).
    pub fn push(&mut self, rule: Rule) {
        match rule.kind() {
            RuleKind::Allow => self.allow.push(rule),
            RuleKind::Ask => self.ask.push(rule),
            RuleKind::Deny => self.deny.push(rule),
        }
    }

    /// The rules of one list, in the order they were added.
    pub fn rules(&self, kind: RuleKind) -> &[Rule] {
        match kind {
            RuleKind::Allow => &self.allow,
            RuleKind::Ask => &self.ask,
            RuleKind::Deny => &self.deny,
        }
    }

    /// Whether no list has a rule.
    pub fn is_empty(&self) -> bool {
        self.deny.is_empty() && self.ask.is_empty() && self.allow.is_empty()
    }

    /// Makes bypassPermissions unavailable; `source` says who decided (a
    /// settings file), for the message a host or user sees.
    pub fn disable_bypass(&mut self, source: impl Into<String>) {
        self.bypass_disabled_by = Some(source.into());
    }
}

impl PermissionPolicy for RulePolicy {
    fn decide(&self, request: &PermissionRequest<'_>) -> PermissionDecision {
        let call = Call::new(request);
        if let Some(rule) = self.deny.iter().find(|r| call.suspected_by(r)) {
            return PermissionDecision::Deny {
                reason: format!("{} matches this call", rule.describe()),
            };
        }
        // A read the deny rules cover is denied here, like any deny match;
        // a read they may cover asks below, beside the other unknowns.
        let reads = call.bash_reads_denied(&self.deny, request.context.permission_mode);
        if let Some(decision @ PermissionDecision::Deny { .. }) = reads {
            return decision;
        }
        let mode = match request.context.permission_mode {
            // Refused when the engine is built; should the mode arrive some
            // other way, it is the default mode, never a bypass.
            PermissionMode::BypassPermissions if self.bypass_disabled_by.is_some() => {
                PermissionMode::Default
            }
            mode => mode,
        };
        if mode == PermissionMode::Plan && !request.read_only {
            return PermissionDecision::Deny {
                reason: "the session is in plan mode, where only read-only calls run; finish the plan and let the user switch modes before making changes".into(),
            };
        }
        if let Some(reason) = call.opaque_for(&self.deny) {
            return ask(mode, reason, AskSource::Rule, None);
        }
        if let Some(decision) = reads {
            return decision;
        }
        if mode == PermissionMode::BypassPermissions {
            return PermissionDecision::Allow;
        }
        if let Some(reason) = call.protected() {
            return ask(mode, reason, AskSource::Rule, None);
        }
        if let Some(reason) = call.opaque_for(&self.ask) {
            return ask(mode, reason, AskSource::Rule, None);
        }
        if let Some(rule) = self.ask.iter().find(|r| call.suspected_by(r)) {
            return ask(
                mode,
                format!("{} matches this call", rule.describe()),
                AskSource::Rule,
                None,
            );
        }
        let unallowed = match call.first_unallowed(&self.allow) {
            None => return PermissionDecision::Allow,
            Some(part) => part,
        };
        call.mode_default(mode, unallowed)
    }

    fn denies_whole_tool(&self, tool_name: &str) -> bool {
        self.deny.iter().any(|r| r.names_whole_tool(tool_name))
    }

    fn bypass_disabled(&self) -> Option<String> {
        self.bypass_disabled_by.clone()
    }

    fn hides_from_search(&self, tool_name: &str, path: &Path, context: &Context) -> bool {
        let target = PermissionTarget::Path {
            path: path.to_path_buf(),
            access: FileAccess::Read,
        };
        // Most searches meet no path rule at all: then nothing is resolved.
        let patterns: Vec<&PathPattern> = self
            .deny
            .iter()
            .chain(&self.ask)
            .filter(|rule| rule.covers_tool(tool_name, &target))
            .filter_map(|rule| match &rule.spec {
                Some(Specifier::Path(p)) => Some(p),
                _ => None,
            })
            .collect();
        if patterns.is_empty() {
            return false;
        }
        let working_dir = working_dir(context);
        patterns
            .iter()
            .any(|p| path_suspected(p, path, &working_dir))
    }
}

/// The working directory `./` rules are anchored to: the session's first
/// root (its original directory), so a `cd` does not move the rules.
fn working_dir(ctx: &Context) -> PathBuf {
    absolute(ctx.roots.first().unwrap_or(&ctx.cwd))
}

fn base_of(pattern: &PathPattern, working_dir: &Path) -> PathBuf {
    match pattern.base() {
        Base::Fixed(dir) => dir.clone(),
        Base::WorkingDir => working_dir.to_path_buf(),
    }
}

/// Deny/ask lookup for a path: as written or as resolved, either counts.
pub(super) fn path_suspected(pattern: &PathPattern, path: &Path, working_dir: &Path) -> bool {
    let base = base_of(pattern, working_dir);
    pattern.matches_at(&normalize(path), &normalize(&base))
        || pattern.matches_at(&resolve(path), &resolve(&base))
}

fn ask(
    mode: PermissionMode,
    reason: String,
    source: AskSource,
    suggestion: Option<String>,
) -> PermissionDecision {
    if mode == PermissionMode::DontAsk {
        return PermissionDecision::Deny {
            reason: format!(
                "{reason}; that needs approval, and in dontAsk mode anything that would ask is denied"
            ),
        };
    }
    PermissionDecision::Ask {
        reason,
        source,
        suggestion,
    }
}

/// One request, pre-digested for rule lookups.
struct Call<'a> {
    request: &'a PermissionRequest<'a>,
    tool_name: &'a str,
    command: Option<CommandParts>,
    /// The working directory `./` rules are anchored to: the session's first
    /// root (its original directory), so a `cd` does not move the rules.
    working_dir: PathBuf,
}

impl<'a> Call<'a> {
    fn new(request: &'a PermissionRequest<'a>) -> Call<'a> {
        let ctx = request.context;
        Call {
            request,
            tool_name: request.tool.name(),
            command: match request.target {
                PermissionTarget::Command(c) => Some(CommandParts::new(c)),
                _ => None,
            },
            working_dir: working_dir(ctx),
        }
    }

    fn base_of(&self, pattern: &PathPattern) -> PathBuf {
        base_of(pattern, &self.working_dir)
    }

    /// Why this call writes a protected path (see [`super::protected`]),
    /// judged on the path as resolved and as the model spelled it.
    fn protected(&self) -> Option<String> {
        let PermissionTarget::Path {
            path,
            access: FileAccess::Write,
        } = self.request.target
        else {
            return None;
        };
        let ctx = self.request.context;
        let spelled = ["file_path", "notebook_path", "path"]
            .iter()
            .find_map(|key| self.request.input.get(key)?.as_str())
            .map(|raw| normalize(&ctx.absolute(raw)));
        let readable = ctx
            .readable
            .iter()
            .any(|dir| resolve(path).starts_with(resolve(dir)));
        if readable {
            return Some(format!(
                "it writes `{}`, in the session's state directory, where only Baton writes",
                path.display()
            ));
        }
        protected_reason_any(
            [Some(normalize(path)), Some(resolve(path)), spelled]
                .iter()
                .flatten()
                .map(PathBuf::as_path),
        )
    }

    /// Deny/ask lookup: does any spelling of this call match `rule`?
    fn suspected_by(&self, rule: &Rule) -> bool {
        if !rule.covers_tool(self.tool_name, self.request.target) {
            return false;
        }
        if rule.is_whole_tool() {
            return true;
        }
        match (&rule.spec, self.request.target) {
            (Some(Specifier::Command(p) | Specifier::Other(p)), PermissionTarget::Command(_)) => {
                self.command
                    .as_ref()
                    .is_some_and(|parts| parts.suspects().any(|s| p.matches(s)))
            }
            (Some(Specifier::Path(p)), PermissionTarget::Path { path, .. }) => {
                path_suspected(p, path, &self.working_dir)
            }
            (Some(Specifier::Domain(d)), PermissionTarget::Url(url)) => d.matches_url(url),
            (Some(Specifier::Other(p)), target) => {
                other_text(target).is_some_and(|t| p.matches(&t))
            }
            _ => false,
        }
    }

    /// `Read(…)` deny rules against the files a shell command reads (see
    /// `reads.rs`).
    fn bash_reads_denied(&self, deny: &[Rule], mode: PermissionMode) -> Option<PermissionDecision> {
        let parts = self.command.as_ref()?;
        let verdict = super::reads::judge(parts, deny, self.request.context, &self.working_dir)?;
        Some(match verdict {
            super::reads::Verdict::Denied(reason) => PermissionDecision::Deny { reason },
            super::reads::Verdict::Unsure(reason) => ask(mode, reason, AskSource::Rule, None),
        })
    }

    /// Deny or ask rules for commands exist, but part of the command is
    /// not written out, so they cannot be checked (see `bash.rs`).
    fn opaque_for(&self, rules: &[Rule]) -> Option<String> {
        let parts = self.command.as_ref()?;
        parts.opaque_for(rules.iter().filter_map(|r| match &r.spec {
            Some(Specifier::Command(p)) if r.covers_tool(self.tool_name, self.request.target) => {
                Some(p)
            }
            _ => None,
        }))
    }

    /// Allow lookup. `None`: the allow rules cover the call. `Some(text)`:
    /// they do not; `text` is the part to suggest a rule for.
    fn first_unallowed(&self, allow: &[Rule]) -> Option<Unallowed> {
        let rules: Vec<&Rule> = allow
            .iter()
            .filter(|r| r.covers_tool(self.tool_name, self.request.target))
            .collect();
        if rules.iter().any(|r| r.is_whole_tool()) {
            return None;
        }
        match self.request.target {
            PermissionTarget::Command(_) => self.unallowed_command(&rules),
            PermissionTarget::Path { path, .. } => {
                let real = resolve(path);
                let hit = rules.iter().any(|r| match &r.spec {
                    Some(Specifier::Path(p)) => p.matches_at(&real, &resolve(&self.base_of(p))),
                    Some(Specifier::Other(p)) => p.matches(&real.to_string_lossy()),
                    _ => false,
                });
                (!hit).then_some(Unallowed::Target)
            }
            PermissionTarget::Url(url) => {
                let hit = rules.iter().any(|r| match &r.spec {
                    Some(Specifier::Domain(d)) => d.matches_url(url),
                    Some(Specifier::Other(p)) => p.matches(url),
                    _ => false,
                });
                (!hit).then_some(Unallowed::Target)
            }
            PermissionTarget::None => Some(Unallowed::Target),
        }
    }

    fn unallowed_command(&self, rules: &[&Rule]) -> Option<Unallowed> {
        let parts = self.command.as_ref()?;
        let patterns: Vec<_> = rules
            .iter()
            .filter_map(|r| match &r.spec {
                Some(Specifier::Command(p) | Specifier::Other(p)) => Some(p),
                _ => None,
            })
            .collect();
        // The user spelled out this exact compound command.
        if patterns
            .iter()
            .any(|p| p.is_exact() && p.allows(&parts.whole))
        {
            return None;
        }
        let Some(parsed) = &parts.parsed else {
            return Some(Unallowed::Part(parts.whole.clone()));
        };
        if parsed.is_empty() {
            return Some(Unallowed::Part(parts.whole.clone()));
        }
        let mut any_ruled = false;
        let mut unruled = Vec::new();
        for part in parsed {
            if part.allowed_by_any(&patterns) {
                any_ruled = true;
            } else if !part.read_only {
                return Some(Unallowed::Part(part.text.clone()));
            } else {
                unruled.extend(part.all().map(|p| &p.command));
            }
        }
        // Read-only parts beside allowed ones must stay inside too.
        if any_ruled && super::reach::reason_to_ask(&unruled, self.request.context).is_some() {
            return Some(Unallowed::Part(parts.whole.clone()));
        }
        // Every part is read-only and no rule was involved: that is the
        // mode default's call to make, not an allow rule's.
        (!any_ruled).then(|| Unallowed::Part(parts.whole.clone()))
    }

    /// No rule decided: the mode's default (SPEC §11).
    fn mode_default(&self, mode: PermissionMode, unallowed: Unallowed) -> PermissionDecision {
        let req = self.request;
        let suggestion = self.suggestion(&unallowed);
        let reason = match req.target {
            PermissionTarget::Path { path, access } => {
                if *access == FileAccess::Read && req.context.is_readable_extra(path) {
                    return PermissionDecision::Allow;
                } else if !req.context.is_inside_roots(path) {
                    format!(
                        "`{}` is outside the workspace ({})",
                        path.display(),
                        roots_list(&req.context.roots)
                    )
                } else if *access == FileAccess::Read
                    || req.read_only
                    || mode == PermissionMode::AcceptEdits
                {
                    return PermissionDecision::Allow;
                } else {
                    format!("it writes `{}` and no allow rule covers it", path.display())
                }
            }
            PermissionTarget::Url(url) => match host_of(url) {
                Some(host) => format!("it fetches from `{host}`, which no allow rule covers"),
                None => format!("it fetches `{url}`, which no allow rule covers"),
            },
            PermissionTarget::Command(_) if req.read_only => match self.outside_reference() {
                None => return PermissionDecision::Allow,
                Some(reason) => reason,
            },
            PermissionTarget::Command(_) => match &unallowed {
                Unallowed::Part(part) => format!(
                    "the command `{}` may change things and no allow rule covers it",
                    super::summary::first_line(part, 80)
                ),
                Unallowed::Target => "the command may change things".into(),
            },
            PermissionTarget::None if req.read_only => return PermissionDecision::Allow,
            PermissionTarget::None => format!(
                "`{}` may change things and no allow rule covers it",
                self.tool_name
            ),
        };
        ask(mode, reason, AskSource::ModeDefault, suggestion)
    }

    /// A read-only command is only harmless inside the workspace: `cat
    /// ~/.ssh/id_rsa` reads without writing. The reason to ask, if a part
    /// names a location outside the roots (or one that depends on a
    /// variable).
    fn outside_reference(&self) -> Option<String> {
        let Some(parts) = self.command.as_ref()?.parsed.as_ref() else {
            return Some("the command could not be fully analysed".into());
        };
        let commands: Vec<_> = parts
            .iter()
            .flat_map(|p| p.all())
            .map(|p| &p.command)
            .collect();
        super::reach::reason_to_ask(&commands, self.request.context)
    }

    /// A rule that would allow calls like this one.
    fn suggestion(&self, unallowed: &Unallowed) -> Option<String> {
        let tool = self.tool_name;
        match (self.request.target, unallowed) {
            (PermissionTarget::Command(_), Unallowed::Part(part)) => {
                let part = part.trim();
                (!part.contains('\n') && !part.is_empty()).then(|| format!("{tool}({part})"))
            }
            (PermissionTarget::Path { path, access }, _) => {
                let rule_tool = match access {
                    FileAccess::Write => "Edit",
                    FileAccess::Read => "Read",
                };
                let real = resolve(path);
                let spelled = match real.strip_prefix(resolve(&self.working_dir)) {
                    Ok(rel) if !rel.as_os_str().is_empty() => format!("./{}", rel.display()),
                    _ => format!("/{}", real.display()),
                };
                Some(format!("{rule_tool}({})", escape_glob(&spelled)))
            }
            (PermissionTarget::Url(url), _) => {
                host_of(url).map(|host| format!("{tool}(domain:{host})"))
            }
            _ => Some(tool.to_string()),
        }
    }
}

/// What the allow rules did not cover.
enum Unallowed {
    /// This simple command (or the whole command when it did not parse).
    Part(String),
    /// The call's target as a whole.
    Target,
}

/// The text a host tool's wildcard specifier is matched against.
fn other_text(target: &PermissionTarget) -> Option<String> {
    match target {
        PermissionTarget::Command(c) => Some(c.clone()),
        PermissionTarget::Path { path, .. } => Some(path.to_string_lossy().into_owned()),
        PermissionTarget::Url(u) => Some(u.clone()),
        PermissionTarget::None => None,
    }
}

fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn roots_list(roots: &[PathBuf]) -> String {
    roots
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
