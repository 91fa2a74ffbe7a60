//! Lines longer than ripgrep's searcher is allowed to hold (1 MiB), compared
//! with the real `rg`, which holds them whole: a match at the start, in the
//! middle or at the end of a 3 MiB line is found by both, on the same line
//! numbers, with the same counts and files, and context lines around them.
//! Only the printed text of a long line differs (Grep shows its head and
//! the match, rg the whole line).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use super::against_rg::{parse_content, parse_counts, parse_files, rg};
use crate::registry::BuiltinConfig;
use crate::test_support::Harness;

const LONG: usize = 3 << 20;

/// A 3 MiB line with `insert` at `at` (0.0 start, 0.5 middle, 1.0 end).
fn long_line(insert: &str, at: f64) -> String {
    let filler = "abc xyz 0123 ";
    let mut body = filler.repeat(LONG / filler.len());
    let pos = ((body.len() as f64) * at) as usize;
    let pos = pos.min(body.len());
    body.insert_str(pos, insert);
    body
}

fn generate(root: &Path) {
    let files: Vec<(&str, String)> = vec![
        (
            "start.txt",
            format!("short one\n{}\nafter needle\n", long_line("needle", 0.0)),
        ),
        (
            "middle.txt",
            format!("{}\nplain\nplain\n", long_line(" needle ", 0.5)),
        ),
        (
            "end.txt",
            format!("before\n{}\nneedle again\n", long_line("needle", 1.0)),
        ),
        (
            "none.txt",
            format!("nothing\n{}\nnothing\n", long_line("", 0.5)),
        ),
        (
            "several.txt",
            format!(
                "x\n{}\n{}\nx\nNEEDLE\n{}",
                long_line("needle", 0.9),
                long_line("", 0.1),
                long_line("Needle", 1.0)
            ),
        ),
    ];
    for (name, text) in files {
        fs::write(root.join(name), text).unwrap();
    }
}

/// Content lines without the text of long lines, which only rg prints whole.
fn without_long_text(
    set: BTreeSet<(String, char, u64, String)>,
) -> BTreeSet<(String, char, u64, String)> {
    set.into_iter()
        .map(|(p, s, n, t)| {
            let t = if t.len() > 100_000 || t.contains(" [… ") {
                String::new()
            } else {
                t
            };
            (p, s, n, t)
        })
        .collect()
}

async fn ours(root: &Path, input: &Value) -> String {
    let tool = crate::grep::tool(&BuiltinConfig::default()).unwrap();
    let h = Harness::new(Vec::new());
    let parsed = tool.parse(input).unwrap();
    let out = tool.call(parsed, h.context(root)).await.unwrap();
    assert!(!out.is_error, "{input}");
    let text = baton_engine::content::joined_text(&out.content);
    if text.starts_with("No matches found") {
        String::new()
    } else {
        text
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_lines_match_ripgrep() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    generate(&root);
    let prefix = format!("{}/", root.display());
    let cases: Vec<(Vec<&str>, Value)> = vec![
        (vec!["needle"], json!({"pattern": "needle"})),
        (
            vec!["-i", "needle"],
            json!({"pattern": "needle", "-i": true}),
        ),
        (vec!["^needle"], json!({"pattern": "^needle"})),
        (vec!["needle$"], json!({"pattern": "needle$"})),
        (vec!["3 needle"], json!({"pattern": "3 needle"})),
        (vec!["\\bneedle\\b"], json!({"pattern": "\\bneedle\\b"})),
        (vec!["n[e]+dle a"], json!({"pattern": "n[e]+dle a"})),
        (vec!["xyz 0123 $"], json!({"pattern": "xyz 0123 $"})),
        (vec!["absent"], json!({"pattern": "absent"})),
        (
            vec!["-C", "1", "needle"],
            json!({"pattern": "needle", "-C": 1}),
        ),
        (
            vec!["-B", "2", "-i", "needle$"],
            json!({"pattern": "needle$", "-B": 2, "-i": true}),
        ),
    ];
    let mut failures = Vec::new();
    let mut found_any = 0;
    for (args, input) in &cases {
        let context = args.iter().any(|a| a.starts_with('-') && *a != "-i");
        let modes: &[&str] = if context {
            &["content"]
        } else {
            &["content", "count", "files_with_matches"]
        };
        for mode in modes {
            let mut input = input.clone();
            input["output_mode"] = json!(mode);
            input["head_limit"] = json!(0);
            let ours = ours(&root, &input).await;
            let flag = match *mode {
                "content" => "--line-number",
                "count" => "--count",
                _ => "--files-with-matches",
            };
            let mut rg_args = vec![flag];
            rg_args.extend(args.iter().copied());
            let theirs = rg(&root, &rg_args);
            found_any += usize::from(!theirs.is_empty());
            let same = match *mode {
                "content" => {
                    without_long_text(parse_content(&ours, &prefix))
                        == without_long_text(parse_content(&theirs, "./"))
                }
                "count" => {
                    let a: BTreeMap<_, _> = parse_counts(&ours, &prefix);
                    a == parse_counts(&theirs, "./")
                }
                _ => parse_files(&ours, &prefix) == parse_files(&theirs, "./"),
            };
            if !same {
                failures.push(format!(
                    "rg {rg_args:?} differs from Grep {input}:\nours: {}\ntheirs: {}",
                    &ours.chars().take(3000).collect::<String>(),
                    &theirs.chars().take(3000).collect::<String>()
                ));
            }
            assert!(ours.len() < 200_000, "long lines are printed cut");
            assert!(!ours.contains("could not be searched"), "{ours}");
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(found_any >= 20, "too few cases matched: {found_any}");
}

/// The printed text of a long match shows the match itself, however far
/// into the line it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_far_into_a_long_line_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    generate(&root);
    let input = json!({"pattern": "needle", "path": "end.txt", "output_mode": "content"});
    let text = ours(&root, &input).await;
    let first = text.lines().find(|l| l.starts_with("2:")).expect(&text);
    assert!(first.starts_with("2:abc xyz"), "{first}");
    assert!(first.contains("characters …]"), "{first}");
    assert!(first.contains("0123 needle"), "{first}");
    assert!(first.len() < 4_000, "{}", first.len());
    assert!(text.contains("3:needle again"), "{text}");
}
