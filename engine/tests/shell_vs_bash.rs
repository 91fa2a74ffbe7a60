//! Differential test of the read-only classifier against real bash.
//!
//! A generated corpus of command lines (here-documents, quoting, line
//! continuations, arithmetic, parameter expansions, substitutions,
//! redirections, comments, compound commands) is classified; every line
//! called read-only is then run by bash the way the Bash tool runs it
//! (`eval "$line"`), in a scratch directory, with an execution trace
//! (`set -x` to a separate descriptor). Every command bash executed must be
//! one the classifier saw, and the scratch directory must be unchanged.
//! Lines are batched, many per bash process, each in its own subshell with
//! a marker in the trace, so a failure names its line.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use baton_engine::shell::{is_read_only, parse};

/// Commands that read; the `{X}` slots of templates are filled from these.
const READERS: &[&str] = &[
    "ls",
    "echo hi",
    "cat f1",
    "grep -c a f1",
    "wc -l f1",
    "true",
    "pwd",
    "head -n1 f1",
    "printf '%s\\n' x",
    "sort f1",
];

/// Writers hidden in the templates: if bash runs one the classifier did not
/// see, the trace shows it (and the directory changes).
const WRITERS: &[&str] = &["touch zz1", "mkdir zz2", "cp f1 zz3"];

/// Line shapes; `R` is a reader, `W` a writer, `N` a number.
const TEMPLATES: &[&str] = &[
    "R",
    "R && R",
    "R; R",
    "R | R",
    "R || W",
    "R\nR",
    "(R)",
    "{ R; }",
    "if R; then R; fi",
    "for i in 1 2; do R; done",
    "while false; do W; done",
    "case x in x) R;; y) W;; esac",
    "R # ; W",
    "R #\\\nW",
    "echo a#b; R",
    "echo 'a;W'",
    "echo \"a;W\"",
    "echo \\; W",
    "echo \\$(W)",
    "echo \"\\$(W)\"",
    "echo $'a\\'; W'",
    "echo $'\\x27'; R",
    "echo \"$(R)\"",
    "echo $(R)",
    "echo `R`",
    "echo \"`R`\"",
    "echo $(echo $(R))",
    "cat <(R)",
    "R > /dev/null",
    "R 2>&1",
    "R 2>/dev/null >&2",
    "cat < f1",
    "R <<< 'x'",
    "cat <<< \"$(R)\"",
    "cat <<EOF\nx\nEOF\nR",
    "cat <<EOF\n$(R)\nEOF",
    "cat <<'EOF'\n$(W)\nEOF",
    "cat <<\"EOF\"\n$(W)\nEOF",
    "cat <<\\EOF\n$(W)\nEOF",
    "cat <<-EOF\n\tx\n\tEOF\nR",
    "cat <<E\"O\"F\nEOF\nW\nE\"O\"F",
    "cat <<E'O'F\nEOF\nW\nE'O'F",
    "cat <<E\\OF\nEOF\nW\nE\\OF",
    "cat <<EOF; R\nx\nEOF",
    "cat <<A <<B\nW\nA\nx\nB",
    "cat <<A; cat <<B\nx\nA\ny\nB\nR",
    "cat <<EOF\nEOF \nW\nEOF",
    "cat <<EOF\n EOF\nW\nEOF",
    "cat <<EOF\n\tEOF\nW\nEOF",
    "cat <<-EOF\n\t\tEOF\nR",
    "cat <<-EOF\n \tEOF\nW\nEOF",
    "cat <<EOF | R\nx\nEOF",
    "cat <<EOF\nx\nEOF | R\nW\nEOF",
    "cat <<EOF\nx\nEOF;\nR",
    "cat <<EOF\nx\nEOF\n\nR",
    "cat <<EOF\nx\\\nEOF\nW\nEOF",
    "cat <<'EOF'\nx\\\nEOF\nR",
    "echo $(cat <<EOF\nx\nEOF\n)",
    "echo \"$(cat <<'EOF'\n)\nEOF\n)\"; R",
    "ec\\\nho hi",
    "echo a \\\n; R",
    "echo a\\\\\nR",
    "R \\\n  f1",
    "echo 'a\\\nb'",
    "echo \"a\\\nb\"; R",
    "echo $((N + N))",
    "echo $[N * N]",
    "(( N )) && R",
    "[[ N -eq N ]] && R",
    "[[ a == a ]] && R",
    "[ -f f1 ] && R",
    "test -n x && R",
    "true 'a[$(W)]'; [[ $_ -eq 1 ]]",
    "true 'a[$(W)]'; echo $(( $_ ))",
    "true 'a[$(W)]'; echo ${x[$_]}",
    "true 'a[$(W)]'; test -v \"$_\"",
    "true '$(W)'; echo ${_@P}",
    "true 'a[$(W)]'; echo ${x:$_}",
    "for v in 'a[$(W)]'; do echo $((v)); done",
    "echo ${x:-$(R)}",
    "echo ${x:-'$(W)'}",
    "echo \"${x:-$(R)}\"",
    "echo ${#x} ${x%.*} ${x/a/b} ${x^^}",
    "echo ${x:1:2} ${x: -1}",
    "echo ${!x}",
    "echo ${HOME@P}",
    "echo ~ ~/x",
    "echo *",
    "echo f?",
    "echo {a,b}",
    "echo $'\\u0041'; R",
    "echo \"a\"'b'c; R",
    "R;;",
    "R &&\nR",
    "R |\nR",
    "! R",
    "time R",
    "\\R",
    "R\n\\R",
    "echo {a,b}\n\\R",
    "\"R\"",
    "echo \"$(echo ')'; R)\"",
    "echo $(echo ')' # ); W\n)",
    "echo `echo \\`W\\``",
    "echo $(case x in x) echo y;; esac)",
    "echo \"${x-\"}\"}\"; R",
    "cat <<EOF\n`R`\nEOF",
    "R >/dev/null <<EOF\nx\nEOF",
    "{ R; } 2>/dev/null",
    "R | while false; do W; done",
];

/// What xtrace prints for compound commands; the commands inside them are
/// traced on their own.
const KEYWORDS: &[&str] = &["((", "[[", "for", "case", "select", "time"];

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = String::new();
    for c in template.chars() {
        match c {
            'R' => {
                // Wrap the reader in quotes sometimes: `"ls"` or `l\s`.
                let r = rng.pick(READERS);
                out.push_str(r);
            }
            'W' => out.push_str(rng.pick(WRITERS)),
            'N' => out.push_str(&(rng.next() % 9).to_string()),
            c => out.push(c),
        }
    }
    out
}

fn corpus(count: usize) -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut lines = BTreeSet::new();
    // Every template alone first, then random combinations.
    for t in TEMPLATES {
        lines.insert(fill(&mut rng, t));
    }
    const OPS: &[&str] = &[" && ", "; ", "\n", " | ", " || "];
    while lines.len() < count {
        let n = 1 + (rng.next() % 3) as usize;
        let mut line = String::new();
        for i in 0..n {
            if i > 0 {
                line.push_str(rng.pick(OPS));
            }
            let t = rng.pick(TEMPLATES);
            line.push_str(&fill(&mut rng, t));
        }
        lines.insert(line);
    }
    lines.into_iter().collect()
}

/// Runs `lines` in one bash process; returns, per line, the names of the
/// commands bash executed.
fn run_batch(scratch: &Path, lines: &[&String]) -> Vec<BTreeSet<String>> {
    let input = scratch.with_extension("lines");
    let trace = scratch.with_extension("trace");
    let mut data = Vec::new();
    for line in lines {
        data.extend_from_slice(line.as_bytes());
        data.push(0);
    }
    std::fs::write(&input, data).unwrap();
    let _ = std::fs::remove_file(&trace);
    // Each line in its own subshell, as the Bash tool runs it (`eval`),
    // with xtrace on descriptor 9. PS4's first character repeats per
    // nesting level; \x01 cannot appear in a traced command by accident.
    let driver = r#"
exec 9>>"$2"
i=0
while IFS= read -r -d '' __line; do
  printf '\002%d\n' "$i" >&9
  ( PS4=$'\001 '; BASH_XTRACEFD=9; set -x; eval "$__line" ) </dev/null >/dev/null 2>&1
  i=$((i+1))
done <"$1"
"#;
    let status = Command::new("bash")
        .arg("-c")
        .arg(driver)
        .arg("bash")
        .arg(&input)
        .arg(&trace)
        .current_dir(scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .status()
        .expect("bash must be installed to run the differential test");
    assert!(status.success(), "the driver failed: {status}");
    let text = std::fs::read(&trace).unwrap();
    let text = String::from_utf8_lossy(&text);
    let mut out: Vec<BTreeSet<String>> = vec![BTreeSet::new(); lines.len()];
    let mut current: Option<usize> = None;
    let mut first = false;
    for row in text.split('\n') {
        if let Some(index) = row.strip_prefix('\u{2}') {
            current = index.parse().ok();
            first = true;
            continue;
        }
        let Some(rest) = row.strip_prefix('\u{1}') else {
            continue; // a continuation line of a multi-line argument
        };
        let command = rest.trim_start_matches('\u{1}').trim_start_matches(' ');
        if std::mem::take(&mut first) {
            continue; // the `eval` itself
        }
        let name = command.split(' ').next().unwrap_or("");
        let name = name.trim_matches('\'');
        if let Some(set) = current.and_then(|i| out.get_mut(i)) {
            set.insert(name.to_string());
        }
    }
    out
}

/// What bash ran for each line of a batch, the batch, its directory.
type BatchRun<'a> = (Vec<BTreeSet<String>>, &'a [&'a String], &'a Path);

fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_command_bash_runs_was_seen_by_the_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut f = std::fs::File::create(scratch.join("f1")).unwrap();
    writeln!(f, "a\nb").unwrap();
    let before = listing(&scratch);

    let lines = corpus(4000);
    let read_only: Vec<&String> = lines.iter().filter(|l| is_read_only(l)).collect();
    let mut failures = Vec::new();
    // Two bash processes at a time (each in its own scratch directory).
    let scratch2 = dir.path().join("scratch2");
    std::fs::create_dir(&scratch2).unwrap();
    std::fs::copy(scratch.join("f1"), scratch2.join("f1")).unwrap();
    let batches: Vec<&[&String]> = read_only.chunks(250).collect();
    for pair in batches.chunks(2) {
        let results: Vec<BatchRun<'_>> = std::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .zip([scratch.as_path(), scratch2.as_path()])
                .map(|(batch, dir)| s.spawn(move || (run_batch(dir, batch), *batch, dir)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (executed, batch, dir) in results {
            for (line, ran) in batch.iter().zip(&executed) {
                let script = parse(line).unwrap();
                let seen: BTreeSet<&str> =
                    script.commands().iter().filter_map(|c| c.name()).collect();
                let unseen: Vec<&String> = ran
                    .iter()
                    .filter(|n| !KEYWORDS.contains(&n.as_str()) && !seen.contains(n.as_str()))
                    .collect();
                if !unseen.is_empty() {
                    failures.push(format!(
                        "{line:?}: bash ran {unseen:?}, the classifier saw {seen:?}"
                    ));
                }
            }
            let after = listing(dir);
            if after != before {
                failures.push(format!(
                    "a batch changed the scratch directory: {:?}",
                    after.symmetric_difference(&before).collect::<Vec<_>>()
                ));
                for name in after.difference(&before) {
                    let path = dir.join(name);
                    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                }
            }
        }
    }
    eprintln!(
        "differential test: {} generated lines, {} classified read-only and run by bash, {} unseen",
        lines.len(),
        read_only.len(),
        failures.len()
    );
    assert!(
        read_only.len() >= 1000,
        "only {} read-only lines: the generator is too weak",
        read_only.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The trace really sees hidden commands: the lines the classifier rejects
/// for being unclear do run writers under bash (so the test above is not
/// vacuous for them).
#[test]
fn the_trace_catches_hidden_commands() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let lines: Vec<String> = [
        "echo hi <<E\"O\"F\nEOF\ntouch zz1\nE\"O\"F",
        "true 'a[$(touch zz1)]'; [[ $_ -eq 1 ]]",
        "echo a \\\n; touch zz1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let refs: Vec<&String> = lines.iter().collect();
    let ran = run_batch(&scratch, &refs);
    for (line, names) in lines.iter().zip(&ran) {
        assert!(names.contains("touch"), "{line:?}: trace {names:?}");
        assert!(!is_read_only(line), "{line:?}");
    }
}
