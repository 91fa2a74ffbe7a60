//! The swap race, made deterministic: each tool's target is judged, then a
//! directory on the path is swapped for a link to the outside, then the
//! tool runs with the same call context, as the pipeline would. The tool
//! must act on what was judged or fail; it must never follow the new link.

use std::path::Path;
use std::sync::Arc;

use baton_engine::{PermissionTarget, Tool, ToolContext};
use serde_json::{json, Value};

use super::Env;
use crate::registry::BuiltinConfig;

const SECRET: &str = "outside secret";

struct Case {
    env: Env,
    outside: tempfile::TempDir,
}

impl Case {
    /// `d/f.txt` inside ("inside"); `f.txt` and `g.txt` outside (the secret).
    fn new() -> Case {
        let env = Env::new();
        env.write("d/f.txt", "inside\n");
        let outside = tempfile::tempdir().unwrap();
        for name in ["f.txt", "g.txt"] {
            std::fs::write(outside.path().join(name), SECRET).unwrap();
        }
        Case { env, outside }
    }

    fn tool(&self, name: &str) -> Arc<Tool> {
        let config = BuiltinConfig::default();
        match name {
            "apply_patch" => Arc::new(crate::apply_patch::tool().unwrap()),
            "Grep" => Arc::new(crate::grep::tool(&config).unwrap()),
            "Glob" => Arc::new(crate::glob::tool(&config).unwrap()),
            _ => self.env.pipeline.pool().get(name).unwrap().clone(),
        }
    }

    /// Judges `input`, swaps `d` for a link outside, then runs the call.
    /// Returns the judged path and the call's text (an error's included).
    async fn judged_then_swapped(&self, name: &str, input: Value) -> (String, String) {
        let tool = self.tool(name);
        let ctx: ToolContext = self.env.ctx();
        let parsed = tool.parse(&input).unwrap();
        tool.validate_input(&parsed, &ctx).await.unwrap();
        let PermissionTarget::Path { path, .. } = tool.permission_target(&parsed, &ctx) else {
            panic!("{name}: no path judged");
        };
        let d = self.env.path("d");
        std::fs::rename(&d, self.env.path("d-real")).unwrap();
        std::os::unix::fs::symlink(self.outside.path(), &d).unwrap();
        let out = match tool.call(parsed, ctx).await {
            Ok(out) => baton_engine::content::joined_text(&out.content),
            Err(e) => e.message,
        };
        std::fs::remove_file(&d).unwrap();
        std::fs::rename(self.env.path("d-real"), &d).unwrap();
        (path.display().to_string(), out)
    }

    fn outside_is_untouched(&self) {
        let mut names: Vec<String> = std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["f.txt", "g.txt"]);
        for name in names {
            let text = std::fs::read_to_string(self.outside.path().join(name)).unwrap();
            assert_eq!(text, SECRET);
        }
    }
}

fn assert_refused(name: &str, judged: &str, out: &str, inside: &Path) {
    assert!(
        judged.starts_with(&inside.display().to_string()),
        "{name} judged {judged}"
    );
    assert!(
        out.contains("changed while it was being opened"),
        "{name}: {out}"
    );
    assert!(!out.contains(SECRET), "{name}: {out}");
}

#[tokio::test]
async fn file_tools_act_on_the_judged_path_or_refuse() {
    let case = Case::new();
    let root = case.env.root.clone();
    let f = case.env.p("d/f.txt");
    case.env.read("d/f.txt").await;
    case.env.write("d/n.ipynb", super::notebook_tests::SAMPLE);
    case.env.read("d/n.ipynb").await;
    let patch = |body: &str| json!({ "input": format!("*** Begin Patch\n{body}\n*** End Patch") });
    let cases = [
        ("Read", json!({ "file_path": f })),
        (
            "Write",
            json!({ "file_path": case.env.p("d/new.txt"), "content": "x" }),
        ),
        (
            "Write",
            json!({ "file_path": case.env.p("d/g.txt"), "content": "x" }),
        ),
        (
            "Edit",
            json!({ "file_path": f, "old_string": "inside", "new_string": "edited" }),
        ),
        (
            "NotebookEdit",
            json!({ "notebook_path": case.env.p("d/n.ipynb"), "cell_id": "0", "new_source": "" }),
        ),
        (
            "apply_patch",
            patch(&format!("*** Add File: {}\n+x", case.env.p("d/added.txt"))),
        ),
        ("apply_patch", patch(&format!("*** Delete File: {f}"))),
        (
            "apply_patch",
            patch(&format!(
                "*** Update File: {f}\n*** Move to: {}\n@@\n-inside\n+moved",
                case.env.p("d/g.txt")
            )),
        ),
    ];
    for (name, input) in cases {
        let (judged, out) = case.judged_then_swapped(name, input).await;
        assert_refused(name, &judged, &out, &root.join("d"));
        case.outside_is_untouched();
    }
    assert_eq!(
        std::fs::read_to_string(root.join("d/f.txt")).unwrap(),
        "inside\n"
    );
}

#[tokio::test]
async fn searches_read_nothing_behind_a_link_swapped_in_after_judging() {
    let case = Case::new();
    let d = case.env.p("d");
    for (name, input) in [
        (
            "Grep",
            json!({ "pattern": "secret|inside", "path": d, "output_mode": "content" }),
        ),
        ("Glob", json!({ "pattern": "*.txt", "path": d })),
    ] {
        let (judged, out) = case.judged_then_swapped(name, input).await;
        assert_eq!(judged, d, "{name}");
        assert!(
            !out.contains(SECRET) && !out.contains("g.txt"),
            "{name}: {out}"
        );
    }
    // Grep of a single file judged inside.
    let input = json!({ "pattern": "secret|inside", "path": case.env.p("d/f.txt") });
    let (_, out) = case.judged_then_swapped("Grep", input).await;
    assert!(!out.contains(SECRET), "{out}");
    case.outside_is_untouched();
}
