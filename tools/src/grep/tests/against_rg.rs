//! Grep compared with the real `rg` binary on a generated tree of a few
//! thousand files, with ignored, hidden and binary files among them.
//! `rg` gets `--no-require-git` because Grep honours `.gitignore` outside
//! git repositories, and the tree is not one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::registry::BuiltinConfig;
use crate::test_support::Harness;

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "needle",
    "Needle",
    "NEEDLE",
    "haystack",
    "fn main()",
    "fn helper(x: u32)",
    "start here",
    "the end",
    "delta",
    "needles",
    "epsilon",
    "import os",
    "def run(self):",
    "TODO fix",
    "zeta",
    "eta",
    "theta",
    "    indented needle",
];

/// A tiny deterministic generator, so a failure can be reproduced.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn text(rng: &mut Lcg) -> String {
    let lines = 3 + rng.below(25);
    let mut out = String::new();
    for _ in 0..lines {
        let words = 1 + rng.below(5);
        let line: Vec<&str> = (0..words)
            .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
            .collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    out
}

/// Writes about 3,000 files. Names avoid `:` and `-` so rg's output parses
/// unambiguously.
fn generate(root: &Path) -> usize {
    let mut rng = Lcg(0x5eed);
    let exts = ["rs", "py", "txt", "md", "log", "js"];
    let mut count = 0;
    let dirs: Vec<String> = (0..20)
        .flat_map(|d| (0..5).map(move |s| format!("d{d}/s{s}")))
        .chain(["build/out".to_string(), ".cache/x".to_string()])
        .collect();
    for dir in &dirs {
        fs::create_dir_all(root.join(dir)).unwrap();
        for f in 0..29 {
            let ext = exts[rng.below(exts.len() as u64) as usize];
            let path = root.join(dir).join(format!("f{f}.{ext}"));
            let mut body = text(&mut rng).into_bytes();
            if rng.below(40) == 0 {
                // Binary: a NUL byte among matching text.
                let at = rng.below(body.len() as u64) as usize;
                body.insert(at, 0);
            }
            fs::write(path, body).unwrap();
            count += 1;
        }
    }
    fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
    fs::write(root.join("d3/.gitignore"), "*.md\n").unwrap();
    fs::write(root.join("d4/s1/.ignore"), "f1*\n").unwrap();
    count
}

pub(super) fn rg(root: &Path, args: &[&str]) -> String {
    let out = Command::new("rg")
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .args([
            "--no-require-git",
            "--color",
            "never",
            "--no-heading",
            "--with-filename",
        ])
        .args(args)
        .arg(".")
        .output()
        .expect("rg must be installed (apt-get install ripgrep)");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "rg {args:?} failed: {out:?}"
    );
    String::from_utf8(out.stdout).unwrap()
}

fn strip<'a>(line: &'a str, prefix: &str) -> &'a str {
    line.strip_prefix(prefix).unwrap_or(line)
}

/// `(path, separator, line number, text)` of rg-style content lines.
pub(super) fn parse_content(output: &str, prefix: &str) -> BTreeSet<(String, char, u64, String)> {
    let mut set = BTreeSet::new();
    for line in output.lines().filter(|l| *l != "--") {
        let line = strip(line, prefix);
        let at = line
            .find([':', '-'])
            .unwrap_or_else(|| panic!("unparsable: {line}"));
        let sep = line.as_bytes()[at] as char;
        let rest = &line[at + 1..];
        let end = rest
            .find(sep)
            .unwrap_or_else(|| panic!("no number: {line}"));
        let number = rest[..end]
            .parse()
            .unwrap_or_else(|_| panic!("bad number: {line}"));
        set.insert((
            line[..at].to_string(),
            sep,
            number,
            rest[end + 1..].to_string(),
        ));
    }
    set
}

pub(super) fn parse_counts(output: &str, prefix: &str) -> BTreeMap<String, u64> {
    output
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let l = strip(l, prefix);
            let (path, n) = l.rsplit_once(':').unwrap();
            (path.to_string(), n.parse().unwrap())
        })
        .collect()
}

pub(super) fn parse_files(output: &str, prefix: &str) -> BTreeSet<String> {
    output
        .lines()
        .filter(|l| !l.starts_with("Found ") && !l.is_empty())
        .map(|l| strip(l, prefix).to_string())
        .collect()
}

/// A name and a test for paths of one kind of skipped file.
type Kind = (&'static str, fn(&str) -> bool);

/// One comparison: rg's arguments (without the output-mode flag) and the
/// same search as Grep input (without `output_mode`).
#[derive(Debug)]
struct Case {
    rg: Vec<String>,
    grep: Value,
}

fn case(rg: &[&str], grep: Value) -> Case {
    Case {
        rg: rg.iter().map(|s| s.to_string()).collect(),
        grep,
    }
}

/// Fixed cases covering each option at least once.
fn fixed_cases() -> Vec<Case> {
    vec![
        case(&["needle"], json!({"pattern": "needle"})),
        case(&["-i", "needle"], json!({"pattern": "needle", "-i": true})),
        case(
            &["-g", "*.rs", "Needle"],
            json!({"pattern": "Needle", "glob": "*.rs"}),
        ),
        case(
            &["-g", "!*.txt", "NEEDLE"],
            json!({"pattern": "NEEDLE", "glob": "!*.txt"}),
        ),
        case(
            &["-g", "*.log", "needle"],
            json!({"pattern": "needle", "glob": "*.log"}),
        ),
        case(
            &["-t", "py", "def \\w+\\("],
            json!({"pattern": "def \\w+\\(", "type": "py"}),
        ),
        case(
            &["-t", "rust", "^fn"],
            json!({"pattern": "^fn", "type": "rust"}),
        ),
        case(
            &["-C", "2", "the end$"],
            json!({"pattern": "the end$", "-C": 2}),
        ),
        case(
            &["-A", "1", "-B", "3", "-i", "todo"],
            json!({"pattern": "todo", "-i": true, "-A": 1, "-B": 3}),
        ),
        case(
            &["needles?\\s+\\w+"],
            json!({"pattern": "needles?\\s+\\w+"}),
        ),
        case(
            &["-U", "--multiline-dotall", "alpha\\nbeta"],
            json!({"pattern": "alpha\\nbeta", "multiline": true}),
        ),
    ]
}

/// Random combinations of pattern, case, glob, type and context.
fn random_cases(rng: &mut Lcg, n: usize) -> Vec<Case> {
    const PATTERNS: &[&str] = &[
        "needle",
        "Needle",
        "^fn",
        "end$",
        "\\bbeta\\b",
        "hay\\w+",
        "(alpha|gamma) \\w+",
        "TODO",
        "def run",
        "^\\s+indented",
        "x: u32",
    ];
    const GLOBS: &[&str] = &["*.rs", "*.{py,js}", "!*.md", "d1*/**", "**/s2/*"];
    const TYPES: &[&str] = &["rust", "py", "js", "md", "txt"];
    let pick = |rng: &mut Lcg, list: &[&'static str]| list[rng.below(list.len() as u64) as usize];
    (0..n)
        .map(|_| {
            let pattern = pick(rng, PATTERNS);
            let mut rg: Vec<String> = Vec::new();
            let mut grep = json!({"pattern": pattern});
            if rng.below(2) == 0 {
                rg.push("-i".into());
                grep["-i"] = json!(true);
            }
            if rng.below(3) == 0 {
                let glob = pick(rng, GLOBS);
                rg.extend(["-g".to_string(), glob.to_string()]);
                grep["glob"] = json!(glob);
            }
            if rng.below(3) == 0 {
                let ty = pick(rng, TYPES);
                rg.extend(["-t".to_string(), ty.to_string()]);
                grep["type"] = json!(ty);
            }
            // Later flags win in rg; Grep lets -A/-B win over -C.
            for flag in ["-C", "-A", "-B"] {
                if rng.below(4) == 0 {
                    let n = rng.below(4);
                    rg.extend([flag.to_string(), n.to_string()]);
                    grep[flag] = json!(n);
                }
            }
            rg.push(pattern.to_string());
            Case { rg, grep }
        })
        .collect()
}

/// Runs one case in one mode with both tools; `Err` describes a mismatch.
/// `Ok(false)`: both found nothing.
async fn compare(
    tool: &baton_engine::Tool,
    h: &Harness,
    root: &Path,
    case: &Case,
    mode: &str,
) -> Result<bool, String> {
    let mut input = case.grep.clone();
    input["output_mode"] = json!(mode);
    input["head_limit"] = json!(0);
    let parsed = tool.parse(&input).map_err(|e| format!("{input}: {e:?}"))?;
    let ours = tool
        .call(parsed, h.context(root))
        .await
        .map_err(|e| e.message)?;
    if ours.is_error {
        return Err(format!("{input}: error result"));
    }
    let mut ours = baton_engine::content::joined_text(&ours.content);
    if ours.starts_with("No matches found") {
        ours.clear();
    }
    let ours_prefix = format!("{}/", root.display());
    let flag = match mode {
        "content" => "--line-number",
        "files_with_matches" => "--files-with-matches",
        _ => "--count",
    };
    let mut args: Vec<&str> = vec![flag];
    args.extend(case.rg.iter().map(String::as_str));
    let theirs = rg(root, &args);
    let same = match mode {
        "content" => parse_content(&ours, &ours_prefix) == parse_content(&theirs, "./"),
        "count" => parse_counts(&ours, &ours_prefix) == parse_counts(&theirs, "./"),
        _ => parse_files(&ours, &ours_prefix) == parse_files(&theirs, "./"),
    };
    if !same {
        return Err(format!("rg {args:?} differs from Grep {input}"));
    }
    Ok(!theirs.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matches_ripgrep_on_a_generated_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    assert!(generate(&root) > 2_500);
    // Called directly, not through the pipeline: the engine would spill
    // these large outputs to files.
    let tool = crate::grep::tool(&BuiltinConfig::default()).unwrap();
    let h = Harness::new(Vec::new());

    let mut failures = Vec::new();
    let mut compared = 0;
    for c in fixed_cases() {
        let has_context =
            c.rg.iter()
                .any(|a| ["-A", "-B", "-C"].contains(&a.as_str()));
        let modes: &[&str] = if has_context {
            &["content"]
        } else {
            &["content", "files_with_matches", "count"]
        };
        for mode in modes {
            match compare(&tool, &h, &root, &c, mode).await {
                Ok(true) => compared += 1,
                Ok(false) => failures.push(format!("fixed case matches nothing: {c:?}")),
                Err(e) => failures.push(e),
            }
        }
    }
    assert_eq!(compared, 29, "{failures:#?}");

    let mut rng = Lcg(0xc0ffee);
    let mut non_empty = 0;
    let cases = random_cases(&mut rng, 30);
    for c in &cases {
        let has_context =
            c.rg.iter()
                .any(|a| ["-A", "-B", "-C"].contains(&a.as_str()));
        let mode = if has_context {
            "content"
        } else {
            ["content", "files_with_matches", "count"][rng.below(3) as usize]
        };
        match compare(&tool, &h, &root, c, mode).await {
            Ok(found) => non_empty += usize::from(found),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        non_empty >= 10,
        "too few random cases matched anything: {non_empty}"
    );

    // The tree really exercises the filters: ignored, hidden and binary files
    // hold matches that both tools left out.
    let everything = parse_files(&rg(&root, &["-l", "-uuu", "needle"]), "./");
    let filtered = parse_files(&rg(&root, &["-l", "needle"]), "./");
    let skipped: Vec<&String> = everything.difference(&filtered).collect();
    let kinds: [Kind; 5] = [
        ("build/", |p| p.starts_with("build/")),
        (".cache/", |p| p.starts_with(".cache/")),
        ("*.log", |p| p.ends_with(".log")),
        ("d3/**/*.md", |p| p.starts_with("d3/") && p.ends_with(".md")),
        ("d4/s1/f1*", |p| p.starts_with("d4/s1/f1")),
    ];
    for (name, is_kind) in kinds {
        assert!(
            skipped.iter().any(|p| is_kind(p)),
            "no skipped match of kind {name}"
        );
    }
    let as_text = parse_files(&rg(&root, &["-l", "-a", "needle"]), "./");
    assert!(
        as_text.len() > filtered.len(),
        "no binary file with a match"
    );
}
