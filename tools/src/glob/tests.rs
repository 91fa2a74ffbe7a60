use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use baton_engine::call::Outcome;
use baton_engine::permission::FileAccess;
use baton_engine::PermissionTarget;
use serde_json::json;

use crate::registry::BuiltinConfig;
use crate::test_support::Harness;

fn harness() -> Harness {
    Harness::new(vec![super::tool(&BuiltinConfig::default()).unwrap()])
}

fn write(root: &Path, rel: &str, age_secs: u64) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, rel).unwrap();
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
        .unwrap();
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[tokio::test]
async fn lists_matches_newest_first_and_honours_gitignore_without_git() {
    let h = harness();
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "old.rs", 300);
    write(r, "src/new.rs", 10);
    write(r, "src/mid.rs", 100);
    write(r, "src/notes.txt", 5);
    write(r, "target/debug/gen.rs", 1);
    write(r, ".hidden/cfg.rs", 50);
    write(r, ".git/hooks/x.rs", 1);
    fs::write(r.join(".gitignore"), "target/\n").unwrap();
    assert!(!r.join(".git/HEAD").exists(), "not a git repository");

    let all = h.run("Glob", json!({"pattern": "**/*.rs"}), r).await;
    assert!(!all.is_error, "{}", all.text());
    let expected: Vec<String> = ["src/new.rs", ".hidden/cfg.rs", "src/mid.rs", "old.rs"]
        .iter()
        .map(|p| r.join(p).display().to_string())
        .collect();
    assert_eq!(lines(&all.text()), expected);

    let top = h.run("Glob", json!({"pattern": "*.rs"}), r).await;
    assert_eq!(
        lines(&top.text()),
        vec![r.join("old.rs").display().to_string()]
    );

    let in_src = h
        .run("Glob", json!({"pattern": "*.{rs,txt}", "path": "src"}), r)
        .await;
    assert_eq!(lines(&in_src.text()).len(), 3, "{}", in_src.text());
    assert!(in_src
        .text()
        .starts_with(&r.join("src/notes.txt").display().to_string()));

    let prefixed = h.run("Glob", json!({"pattern": "src/m*.rs"}), r).await;
    assert_eq!(
        lines(&prefixed.text()),
        vec![r.join("src/mid.rs").display().to_string()]
    );

    let absolute = h
        .run(
            "Glob",
            json!({"pattern": format!("{}/src/*.txt", r.display())}),
            Path::new("/"),
        )
        .await;
    assert_eq!(
        lines(&absolute.text()),
        vec![r.join("src/notes.txt").display().to_string()]
    );

    let none = h.run("Glob", json!({"pattern": "**/*.zig"}), r).await;
    assert!(!none.is_error);
    assert!(none.text().starts_with("No files found"), "{}", none.text());
}

#[tokio::test]
async fn caps_the_list_and_says_so() {
    let config = BuiltinConfig {
        glob_max_results: 20,
        ..BuiltinConfig::default()
    };
    let h = Harness::new(vec![super::tool(&config).unwrap()]);
    let root = tempfile::tempdir().unwrap();
    for i in 0..35 {
        write(root.path(), &format!("d{}/f{i}.txt", i % 4), i);
    }
    let result = h
        .run("Glob", json!({"pattern": "**/*.txt"}), root.path())
        .await;
    let out = lines(&result.text());
    assert_eq!(out.len(), 21, "{}", result.text());
    assert!(out[0].ends_with("f0.txt"), "newest first: {}", out[0]);
    assert!(
        out[20].contains("20 most recently modified of 35"),
        "{}",
        out[20]
    );
}

#[tokio::test]
async fn bad_inputs_are_clear_errors() {
    let h = harness();
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "a.txt", 0);

    let invalid = h
        .run("Glob", json!({"pattern": "src/[a-"}), root.path())
        .await;
    assert!(invalid.is_error);
    assert_eq!(invalid.outcome, Outcome::ValidationFailed);
    assert!(
        invalid.text().contains("not a valid glob"),
        "{}",
        invalid.text()
    );

    let missing = h
        .run("Glob", json!({"pattern": "*", "path": "nope"}), root.path())
        .await;
    assert!(missing.is_error);
    assert!(
        missing.text().contains("does not exist"),
        "{}",
        missing.text()
    );

    let file = h
        .run(
            "Glob",
            json!({"pattern": "*", "path": "a.txt"}),
            root.path(),
        )
        .await;
    assert!(file.is_error);
    assert!(file.text().contains("not a directory"), "{}", file.text());

    let empty = h.run("Glob", json!({"pattern": " "}), root.path()).await;
    assert!(empty.is_error);
    assert!(empty.text().contains("empty"), "{}", empty.text());

    let unknown = h
        .run("Glob", json!({"pattern": "*", "depth": 3}), root.path())
        .await;
    assert_eq!(unknown.outcome, Outcome::InvalidInput);
}

#[tokio::test]
async fn is_safe_and_asks_to_read_the_search_directory() {
    let h = harness();
    let root = tempfile::tempdir().unwrap();
    fs::create_dir(root.path().join("sub")).unwrap();
    let tool = super::tool(&BuiltinConfig::default()).unwrap();
    let ctx = h.context(root.path());
    let input = tool
        .parse(&json!({"pattern": "**/*.rs", "path": "sub/../sub"}))
        .unwrap();
    assert!(tool.is_concurrency_safe(&input));
    assert!(tool.is_read_only(&input));
    assert_eq!(
        tool.permission_target(&input, &ctx),
        PermissionTarget::Path {
            path: root.path().canonicalize().unwrap().join("sub"),
            access: FileAccess::Read,
        }
    );
    let escaping = tool.parse(&json!({"pattern": "/etc/*.conf"})).unwrap();
    assert_eq!(
        tool.permission_target(&escaping, &ctx),
        PermissionTarget::Path {
            path: Path::new("/etc").canonicalize().unwrap(),
            access: FileAccess::Read,
        }
    );
}

proptest::proptest! {
    /// Keeping the newest `max` while walking gives the same list as sorting
    /// everything, ties on modification time broken by path.
    #[test]
    fn bounded_selection_equals_full_sort(
        files in proptest::collection::vec((0u64..20, 0u32..1000), 0..80),
        max in 1usize..30,
    ) {
        let mut matches = super::Matches { newest: Default::default(), total: 0, hidden: 0 };
        let mut all = Vec::new();
        for (age, name) in &files {
            let path = std::path::PathBuf::from(format!("f{name}"));
            let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 - age);
            matches.add(path.clone(), time, max);
            all.push((time, path));
        }
        all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let expected: Vec<_> = all.into_iter().take(max).map(|(_, p)| p).collect();
        proptest::prop_assert_eq!(matches.total, files.len());
        proptest::prop_assert_eq!(matches.into_paths(), expected);
    }
}
