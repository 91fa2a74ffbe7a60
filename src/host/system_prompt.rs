//! The system prompt `baton agent` sends: where the model is (working
//! directory, platform, date) and how the tools are used, so it does not
//! have to discover them with calls. Hosts replace it (`--system-prompt
//! FILE`) or add to it (`--append-system-prompt TEXT`).

use std::path::Path;
use std::time::SystemTime;

use baton_engine::wire::ToolSet;

/// The default prompt for a session in `cwd`.
pub fn default_prompt(cwd: &Path, set: ToolSet) -> String {
    let (y, m, d) = civil_date(SystemTime::now());
    let shell = match set {
        ToolSet::Codex => "`shell_command` (or `shell` with an argv)",
        _ => "`Bash`",
    };
    let edit = match set {
        ToolSet::Codex => "`apply_patch` (paths relative to the working directory)",
        _ => "`Edit` and `Write` (absolute paths; read a file with `Read` before changing it)",
    };
    format!(
        "You are a software engineering agent working on the user's machine through tools.\n\
         \n\
         Environment:\n\
         - Working directory: {cwd}\n\
         - Platform: {os} ({arch})\n\
         - Date: {y:04}-{m:02}-{d:02} (UTC)\n\
         \n\
         Using the tools:\n\
         - Run commands with {shell}; each runs in the working directory unless told otherwise.\n\
         - Change files with {edit}.\n\
         - Calls you make in one message may run at the same time; put calls that depend on \
           each other's results in separate messages.\n\
         - A call can be refused by the user's permission rules or hooks; the result says why. \
           Do not retry a refused call unchanged.\n\
         - Tools not listed can be found with ToolSearch when it is offered.\n\
         - When the task is done, answer with a short summary and make no further calls.",
        cwd = cwd.display(),
        os = std::env::consts::OS,
        arch = std::env::consts::ARCH,
    )
}

/// The prompt a run sends: `replace` (a file's text) or the default, with
/// `append` after it.
pub fn compose(base: String, append: Option<&str>) -> String {
    match append.map(str::trim).filter(|a| !a.is_empty()) {
        Some(extra) => format!("{}\n\n{extra}", base.trim_end()),
        None => base,
    }
}

/// Year, month, day (UTC) of `t`; the epoch for times before it.
fn civil_date(t: SystemTime) -> (i64, u32, u32) {
    let days = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    crate::timestamp::date(days)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_are_right_around_leap_days_and_centuries() {
        let at = |secs: u64| civil_date(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), (1970, 1, 1));
        assert_eq!(at(951_782_400), (2000, 2, 29));
        assert_eq!(at(1_709_164_800), (2024, 2, 29));
        assert_eq!(at(1_764_115_200), (2025, 11, 26));
        assert_eq!(at(4_107_542_400), (2100, 3, 1));
    }

    #[test]
    fn the_prompt_names_the_place_and_the_tools() {
        let p = default_prompt(Path::new("/work/x"), ToolSet::Codex);
        assert!(p.contains("Working directory: /work/x"));
        assert!(p.contains(std::env::consts::OS));
        assert!(p.contains("apply_patch"));
        assert_eq!(compose("a\n".into(), Some(" b ")), "a\n\nb");
        assert_eq!(compose("a".into(), Some("  ")), "a");
    }
}
