use baton_engine::Outcome;
use serde_json::{json, Value};

use super::{age, assert_err, assert_ok, content, Env};

/// As nbformat writes it: sorted keys, one-space indent, final newline.
pub(super) const SAMPLE: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {
    "tags": [
     "keep"
    ]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "1\n"
     ]
    }
   ],
   "source": [
    "x = 1\n",
    "print(x)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

fn json_of(env: &Env) -> Value {
    serde_json::from_slice(&content(&env.path("n.ipynb"))).unwrap()
}

async fn prepared(env: &Env) {
    env.write("n.ipynb", SAMPLE);
    env.read("n.ipynb").await;
}

#[tokio::test]
async fn replaces_a_cell_by_id_keeping_the_rest() {
    let env = Env::new();
    prepared(&env).await;
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "calc", "new_source": "y = 2\nprint(y)" }),
        )
        .await;
    assert_ok(&r);
    let nb = json_of(&env);
    assert_eq!(nb["cells"][1]["source"], json!(["y = 2\n", "print(y)"]));
    assert_eq!(nb["cells"][1]["outputs"], json!([]));
    assert_eq!(nb["cells"][1]["execution_count"], Value::Null);
    assert_eq!(nb["cells"][1]["metadata"], json!({ "tags": ["keep"] }));
    // Everything else is byte-for-byte what nbformat wrote.
    let original: Value = serde_json::from_str(SAMPLE).unwrap();
    assert_eq!(nb["cells"][0], original["cells"][0]);
    assert_eq!(nb["metadata"], original["metadata"]);
    let text = String::from_utf8(content(&env.path("n.ipynb"))).unwrap();
    assert!(text.starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\""));
    assert!(text.ends_with("\"nbformat_minor\": 5\n}\n"));
}

#[tokio::test]
async fn a_round_trip_without_change_is_byte_identical() {
    let nb = crate::files::notebook_cells::parse(SAMPLE.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(nb.to_bytes().unwrap()).unwrap(), SAMPLE);
}

#[tokio::test]
async fn inserts_and_deletes_cells() {
    let env = Env::new();
    prepared(&env).await;
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "intro", "new_source": "## Part 2",
                    "cell_type": "markdown", "edit_mode": "insert" }),
        )
        .await;
    assert_ok(&r);
    let nb = json_of(&env);
    let cells = nb["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3);
    assert_eq!(cells[1]["cell_type"], "markdown");
    assert_eq!(cells[1]["source"], json!(["## Part 2"]));
    let new_id = cells[1]["id"].as_str().unwrap().to_string();
    assert!(r.text().contains(&new_id), "{}", r.text());
    assert!(cells[1].get("outputs").is_none());

    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "intro", "edit_mode": "delete" }),
        )
        .await;
    assert_ok(&r);
    let nb = json_of(&env);
    let ids: Vec<&str> = nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![new_id.as_str(), "calc"]);
}

#[tokio::test]
async fn addresses_cells_by_index_and_changes_type() {
    let env = Env::new();
    prepared(&env).await;
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "0", "new_source": "print('now code')",
                    "cell_type": "code" }),
        )
        .await;
    assert_ok(&r);
    assert!(r.text().contains("now code (was markdown)"));
    let nb = json_of(&env);
    assert_eq!(nb["cells"][0]["cell_type"], "code");
    assert_eq!(nb["cells"][0]["outputs"], json!([]));
}

#[tokio::test]
async fn unknown_cells_and_broken_notebooks_change_nothing() {
    let env = Env::new();
    prepared(&env).await;
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "nope", "new_source": "" }),
        )
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["no cell has id `nope`", "intro, calc"],
    );
    assert_eq!(content(&env.path("n.ipynb")), SAMPLE.as_bytes());

    env.write("bad.ipynb", "{ not json");
    env.read("bad.ipynb").await;
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("bad.ipynb"), "cell_id": "0", "new_source": "" }),
        )
        .await;
    assert_err(&r, Outcome::ToolError, &["not valid JSON"]);
    assert_eq!(content(&env.path("bad.ipynb")), b"{ not json");
}

#[tokio::test]
async fn requires_a_read_and_an_unchanged_notebook() {
    let env = Env::new();
    let path = env.write("n.ipynb", SAMPLE);
    let input = json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "calc", "new_source": "z" });
    let r = env.call("NotebookEdit", input.clone()).await;
    assert_err(&r, Outcome::ToolError, &["has not been read"]);
    age(&path);
    env.read("n.ipynb").await;
    let changed = SAMPLE.replace("x = 1", "x = 42");
    std::fs::write(&path, &changed).unwrap();
    let r = env.call("NotebookEdit", input).await;
    assert_err(&r, Outcome::ToolError, &["changed since you last read it"]);
    assert_eq!(content(&path), changed.as_bytes());
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("none.ipynb"), "cell_id": "0", "new_source": "" }),
        )
        .await;
    assert_err(&r, Outcome::ToolError, &["does not exist"]);
}

#[tokio::test]
async fn bad_inputs_fail_validation() {
    let env = Env::new();
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "new_source": "x", "edit_mode": "insert" }),
        )
        .await;
    assert_err(&r, Outcome::ValidationFailed, &["cell_type"]);
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "new_source": "x" }),
        )
        .await;
    assert_err(&r, Outcome::ValidationFailed, &["cell_id"]);
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("a.py"), "cell_id": "0", "new_source": "x" }),
        )
        .await;
    assert_err(&r, Outcome::ValidationFailed, &[".ipynb"]);
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": "n.ipynb", "cell_id": "0", "new_source": "x" }),
        )
        .await;
    assert_err(&r, Outcome::ValidationFailed, &["absolute"]);
    let r = env
        .call(
            "NotebookEdit",
            json!({ "notebook_path": env.p("n.ipynb"), "cell_id": "0", "edit_mode": "move" }),
        )
        .await;
    assert_err(&r, Outcome::InvalidInput, &["edit_mode"]);
}
