//! The judge of interactive input against a real interactive bash.
//!
//! Every case starts `bash -i` on a PTY through the real `exec_command`
//! (approved by the test's approver) and then offers a sequence of writes
//! to the real `write_stdin`, under real permission rules. What the
//! pipeline lets through is typed into that bash; what it refuses never
//! reaches it. The writes are generated from a seed and mix history
//! expansion (`!`, `^`), quotes, command substitutions, comments, control
//! characters, partial lines, line continuations and foreground programs
//! (`cat`, `head -c`, `sleep`).
//!
//! The oracle is a marker file: every `touch mN` in a case names a file of
//! its own, and no rule allows `touch`. The judge therefore never lets a
//! write through whose commands, as it reads them, create a marker; a
//! marker that appears was created by something bash ran that the judge
//! did not see (an expansion, a line joined or split differently, input
//! read by another program). Each case is checked after its writes and a
//! pause for whatever they started.
//!
//! The seed is fixed so CI runs the same cases; `BATON_PTY_SEED` and
//! `BATON_PTY_CASES` explore others.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::permission::{Approval, ApprovalRequest, Approver, RulePolicy};
use baton_engine::{Pipeline, ToolPool};
use futures::StreamExt;
use serde_json::json;

use super::*;
use crate::test_support::Harness;

/// Approves starting the test's shells and nothing else: every write the
/// rules do not allow is refused.
struct StartsOnly;

#[baton_engine::async_trait]
impl Approver for StartsOnly {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        let cmd = request.input.get("cmd").and_then(|c| c.as_str());
        if request.tool_name == "exec_command" && cmd.is_some_and(|c| c.contains("bash")) {
            Approval::Allow
        } else {
            Approval::Deny { reason: None }
        }
    }
}

/// The rules a case runs under.
#[derive(Clone, Copy, Debug)]
enum Rules {
    /// A few harmless programs, `touch` not among them.
    Narrow,
    /// Everything but `touch`.
    AllButTouch,
}

impl Rules {
    fn policy(self, dir: &Path) -> RulePolicy {
        let (allow, deny): (&[&str], &[&str]) = match self {
            Rules::Narrow => (
                &[
                    "Bash(echo:*)",
                    "Bash(cat:*)",
                    "Bash(head:*)",
                    "Bash(sleep:*)",
                ],
                &[],
            ),
            Rules::AllButTouch => (&["Bash(*)"], &["Bash(touch:*)"]),
        };
        match RulePolicy::parse(allow, &[], deny, None, dir) {
            Ok(policy) => policy,
            Err(errors) => panic!("test rules do not parse: {errors:?}"),
        }
    }
}

/// One case: the shell to start and what to type into it.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    rules: Rules,
    shell: &'static str,
    writes: Vec<String>,
}

/// splitmix64: small, seedable, the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces a write is made of; `@M` becomes a fresh marker name.
const PIECES: &[&str] = &[
    "echo ",
    "echo x ",
    "echo 'a/$(touch @M)' ",
    "'a/$(touch @M)'",
    "'$(touch @M) ;'\\'",
    "\"a\"'$(touch @M)'",
    "#$(touch @M)",
    "# ;touch @M",
    "touch @M",
    "$(touch @M)",
    "tou\t@M ",
    "e ",
    "fc -s a=b ",
    "!!",
    "!!:1",
    ":t",
    "\\'",
    "!$",
    "!#",
    "!#:1:t",
    "!-2",
    "!e",
    "!?a?",
    "^",
    "^a^b^",
    "^'$^$^'",
    " ",
    "; ",
    "\\",
    "'",
    "\"",
    "#",
    "\t",
    "\u{3}",
    "\u{4}",
    "\u{15}",
    "\u{17}",
    "\u{16}",
    "\u{7f}",
    "\u{1b}[A",
    "\u{1b}.",
    "\r",
];

/// Whole lines that leave something running in the foreground, or in
/// history, for the next write.
const OPENERS: &[&str] = &[
    "cat\n",
    "head -c 6\n",
    "sleep 0.3\n",
    "echo 'a/$(touch @M)'\n",
    "echo '$(touch @M)'\n",
    "echo x\\\n",
    "echo x\n",
    "alias e='touch @M'\n",
    "trap 'touch @M' DEBUG\n",
    "export PS1='$(touch @M)'\n",
];

/// How the cases start bash: plain, with the user's startup files, with
/// history expansion set back to `!` and `^` (as a startup file may), and
/// with readline (as when a startup file turns line editing on).
const SHELLS: &[&str] = &[
    "bash --norc -i",
    "bash -i",
    "bash --norc",
    HISTORY_BACK,
    READLINE,
];
const HISTORY_BACK: &str = "histchars='!^#' bash --norc -i";
const READLINE: &str = "env -u INSIDE_EMACS TERM=xterm bash --norc -i";

fn generate(seed: u64, count: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for n in 0..count {
        let mut writes = Vec::new();
        for _ in 0..2 + rng.below(4) {
            let write = match rng.below(10) {
                0..=2 => rng.pick(OPENERS).to_string(),
                3 => rng.pick(&["\u{3}", "\u{4}"]).to_string(),
                _ => {
                    let mut text = String::new();
                    if rng.below(2) == 0 {
                        text.push_str("echo ");
                    }
                    for _ in 0..1 + rng.below(5) {
                        text.push_str(rng.pick(PIECES));
                    }
                    if rng.below(10) < 7 {
                        text.push('\n');
                    }
                    if rng.below(6) == 0 {
                        // Two lines in one write.
                        text.push_str(rng.pick(OPENERS));
                    }
                    text
                }
            };
            writes.push(write);
        }
        cases.push(Case {
            name: format!("generated-{n}"),
            rules: if n % 2 == 0 {
                Rules::Narrow
            } else {
                Rules::AllButTouch
            },
            shell: rng.pick(SHELLS),
            writes,
        });
    }
    cases
}

/// The escapes found by review, and their close relatives.
fn fixed_cases() -> Vec<Case> {
    let case = |name: &str, rules, writes: &[&str]| Case {
        name: name.to_string(),
        rules,
        shell: "bash --norc -i",
        writes: writes.iter().map(|w| w.to_string()).collect(),
    };
    let base = vec![
        case(
            "history-tail",
            Rules::Narrow,
            &["echo 'a/$(touch @M)'\n", "echo !!:1:t\\'\n"],
        ),
        case(
            "history-current-line",
            Rules::Narrow,
            &["echo 'a/$(touch @M)' !#:1:t\\'\n"],
        ),
        case(
            "quick-substitution",
            Rules::AllButTouch,
            &["echo '$(touch @M)'\n", "^'$^$^'\n"],
        ),
        case(
            "eof-to-cat",
            Rules::Narrow,
            &["cat\n", "echo x #\u{4}\u{4}touch @M\n"],
        ),
        case(
            "typed-ahead-for-head",
            Rules::Narrow,
            &["head -c 6\n", "echo '$(touch @M) ;'\\'\n"],
        ),
        case(
            "two-lines-one-write",
            Rules::Narrow,
            &["head -c 6\necho '$(touch @M) ;'\\'\n"],
        ),
        case(
            "line-continuation",
            Rules::AllButTouch,
            &["echo x\\\n", "#;touch @M\n"],
        ),
        case(
            "interrupt-mid-write",
            Rules::Narrow,
            &["sleep 0.3\n", "echo x #\u{3}touch @M\n"],
        ),
        case("tab-completion", Rules::AllButTouch, &["tou\t@M\n"]),
        case(
            "prompt-command",
            Rules::AllButTouch,
            &["PROMPT_COMMAND='touch @M'\n", "echo x\n"],
        ),
        case(
            "prompt-string",
            Rules::AllButTouch,
            &["PS1='$(touch @M)'\n", "echo x\n"],
        ),
        case(
            "ps0",
            Rules::AllButTouch,
            &["PS0='$(touch @M)'\n", "echo x\n"],
        ),
        case(
            "debug-trap",
            Rules::AllButTouch,
            &["trap 'touch @M' DEBUG\n", "echo x\n"],
        ),
        case(
            "export-prompt",
            Rules::AllButTouch,
            &["export PROMPT_COMMAND='touch @M'\n", "echo x\n"],
        ),
        case(
            "declare-prompt",
            Rules::AllButTouch,
            &["declare PS1='$(touch @M)'\n", "echo x\n"],
        ),
        case(
            "alias",
            Rules::AllButTouch,
            &["alias e='touch @M'\n", "e\n"],
        ),
        case(
            "reader-in-another-session",
            Rules::AllButTouch,
            &["setsid -f head -c 6\n", "echo '$(touch @M) ;'\\'\n"],
        ),
        case(
            "fc",
            Rules::AllButTouch,
            &["echo '$(touch @M)' \\'\n", "fc -s \"'\\$=\\$\"\n"],
        ),
        case(
            "histchars",
            Rules::AllButTouch,
            &[
                "echo 'a/$(touch @M)'\n",
                "histchars='%'\n",
                "echo %-2:1:t\\'\n",
            ],
        ),
    ];
    // The same with history expansion back on `!` and `^`, and with
    // readline, as a user's startup file can have it.
    let mut cases = base.clone();
    for shell in [HISTORY_BACK, READLINE] {
        cases.extend(base.iter().map(|c| Case {
            name: format!("{} ({shell})", c.name),
            shell,
            ..c.clone()
        }));
    }
    cases
}

/// Replaces each `@M` standing for a marker with a name of its own.
fn with_markers(text: &str, case: usize, next: &mut usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("@M") {
        out.push_str(&rest[..i]);
        out.push_str(&format!("m{case}x{next}"));
        *next += 1;
        rest = &rest[i + "@M".len()..];
    }
    out.push_str(rest);
    out
}

/// Runs one case; `Err` describes the markers that appeared.
async fn run_case(index: usize, case: Case) -> Result<usize, String> {
    let marks = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut h = Harness::new(tools(&ExecConfig::default()).map_err(|e| e.to_string())?);
    h.pipeline = Pipeline::new(ToolPool::of(
        tools(&ExecConfig::default()).map_err(|e| e.to_string())?,
    ))
    .with_policy(Arc::new(case.rules.policy(marks.path())))
    .with_approver(Arc::new(StartsOnly));
    let started = h
        .run(
            "exec_command",
            json!({"cmd": case.shell, "tty": true, "yield_time_ms": 250}),
            marks.path(),
        )
        .await;
    let reply = super::tests::text(&started);
    let id: i32 = reply
        .lines()
        .find_map(|l| l.strip_prefix("Process running with session ID "))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("{}: the shell did not start: {reply}", case.name))?;
    let mut next = 0;
    let mut log = Vec::new();
    let mut allowed = 0;
    for write in &case.writes {
        let chars = with_markers(write, index, &mut next);
        let r = h
            .run(
                "write_stdin",
                json!({"session_id": id, "chars": chars, "yield_time_ms": 250}),
                marks.path(),
            )
            .await;
        if !r.is_error {
            allowed += 1;
        }
        log.push(format!(
            "  {} {chars:?}",
            if r.is_error { "refused" } else { "SENT   " }
        ));
    }
    // Whatever the writes started (a `sleep`, a command typed ahead) has
    // time to run before the markers are counted.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let found: Vec<String> = std::fs::read_dir(marks.path())
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ExecSessions::of(&h.session).stop_all().await;
    if found.is_empty() {
        Ok(allowed)
    } else {
        Err(format!(
            "{} ({:?}, `{}`): bash created {found:?}, which the judge never let run:\n{}",
            case.name,
            case.rules,
            case.shell,
            log.join("\n")
        ))
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_runs_nothing_the_judge_did_not_see() {
    let seed = env_number("BATON_PTY_SEED", 0x35_0001);
    let count = env_number("BATON_PTY_CASES", 64) as usize;
    let mut cases = fixed_cases();
    cases.extend(generate(seed, count));
    let total = cases.len();
    let results: Vec<Result<usize, String>> = futures::stream::iter(
        cases
            .into_iter()
            .enumerate()
            .map(|(i, case)| run_case(i, case)),
    )
    .buffer_unordered(6)
    .collect()
    .await;
    let mut failures = Vec::new();
    let mut sent = 0;
    for result in results {
        match result {
            Ok(n) => sent += n,
            Err(why) => failures.push(why),
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed:#x}: {} of {total} cases ran a marker:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("seed {seed:#x}: {total} cases, {sent} writes sent to bash");
    // The generator must also produce input the judge accepts, or the
    // test would pass by refusing everything.
    assert!(
        sent >= total / 4,
        "only {sent} writes were sent in {total} cases"
    );
}
