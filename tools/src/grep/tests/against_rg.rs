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

fn rg(root: &Path, args: &[&str]) -> String {
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
fn parse_content(output: &str, prefix: &str) -> BTreeSet<(String, char, u64, String)> {
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

fn parse_counts(output: &str, prefix: &str) -> BTreeMap<String, u64> {
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

fn parse_files(output: &str, prefix: &str) -> BTreeSet<String> {
    output
        .lines()
        .filter(|l| !l.starts_with("Found ") && !l.is_empty())
        .map(|l| strip(l, prefix).to_string())
        .collect()
}

/// A name and a test for paths of one kind of skipped file.
type Kind = (&'static str, fn(&str) -> bool);

struct Case {
    rg: Vec<&'static str>,
    grep: Value,
}

fn case(rg: &[&'static str], grep: Value) -> Case {
    Case {
        rg: rg.to_vec(),
        grep,
    }
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
    let ours_prefix = format!("{}/", root.display());

    let cases = [
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
    ];

    let mut checked = 0;
    for c in &cases {
        let has_context = c.rg.iter().any(|a| ["-A", "-B", "-C"].contains(a));
        let mut modes = vec!["content"];
        if !has_context {
            modes.extend(["files_with_matches", "count"]);
        }
        for mode in modes {
            let mut input = c.grep.clone();
            input["output_mode"] = json!(mode);
            input["head_limit"] = json!(0);
            let parsed = tool.parse(&input).unwrap();
            let ours = tool.call(parsed, h.context(&root)).await.unwrap();
            assert!(!ours.is_error, "{input}");
            let ours = baton_engine::content::joined_text(&ours.content);
            let mut args = c.rg.clone();
            match mode {
                "content" => args.insert(0, "--line-number"),
                "files_with_matches" => args.insert(0, "--files-with-matches"),
                _ => args.insert(0, "--count"),
            }
            let theirs = rg(&root, &args);
            assert!(!theirs.is_empty(), "case matches nothing: {args:?}");
            match mode {
                "content" => {
                    let (a, b) = (
                        parse_content(&ours, &ours_prefix),
                        parse_content(&theirs, "./"),
                    );
                    assert_eq!(a.len(), b.len(), "{args:?}");
                    assert!(
                        a == b,
                        "{args:?}: first difference {:?}",
                        a.symmetric_difference(&b).next()
                    );
                }
                "count" => assert_eq!(
                    parse_counts(&ours, &ours_prefix),
                    parse_counts(&theirs, "./"),
                    "{args:?}"
                ),
                _ => assert_eq!(
                    parse_files(&ours, &ours_prefix),
                    parse_files(&theirs, "./"),
                    "{args:?}"
                ),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 29);

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
