use std::io::Write as _;

use base64::Engine as _;
use baton_engine::{ContentBlock, Outcome, ToolUse};
use serde_json::json;

use super::{assert_err, assert_ok, make_unreadable, rerun_without_dac_override, Env};
use crate::files::read_state::{self, ReadState};

#[tokio::test]
async fn numbers_lines_and_records_what_was_read() {
    let env = Env::new();
    let path = env.write("a.txt", "alpha\nbeta\r\ngamma");
    let r = env.read("a.txt").await;
    assert_eq!(r.text(), "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    let seen = ReadState::of(&env.session).get(&path).expect("recorded");
    assert_eq!(seen.hash, Some(read_state::hash(b"alpha\nbeta\r\ngamma")));
    assert_eq!(seen.size, 17);
    assert!(seen.mtime.is_some());
}

#[tokio::test]
async fn is_safe_and_read_only_and_declares_no_result_limit() {
    let env = Env::new();
    let prepared = env
        .pipeline
        .prepare(ToolUse::new("1", "Read", json!({ "file_path": "/x" })));
    assert!(prepared.safe && prepared.read_only);
    assert_eq!(prepared.tool().unwrap().def().max_result_chars(), None);
}

#[tokio::test]
async fn pages_with_offset_and_limit() {
    let env = Env::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    env.write("ten.txt", text);
    let r = env
        .call(
            "Read",
            json!({ "file_path": env.p("ten.txt"), "offset": 4, "limit": 3 }),
        )
        .await;
    assert_ok(&r);
    let t = r.text();
    assert!(
        t.starts_with("     4\tline 4\n     5\tline 5\n     6\tline 6\n"),
        "{t}"
    );
    assert!(!t.contains("line 7\n") && !t.contains("line 3\n"));
    assert!(
        t.contains("Showing lines 4-6 of 10") && t.contains("offset=7"),
        "{t}"
    );

    let past = env
        .call(
            "Read",
            json!({ "file_path": env.p("ten.txt"), "offset": 50 }),
        )
        .await;
    assert_ok(&past);
    assert!(past.text().contains("has 10 lines") && past.text().contains("past its end"));
}

#[tokio::test]
async fn default_window_is_2000_lines_and_long_lines_are_cut() {
    let env = Env::new();
    let mut text: String = "x".repeat(5000);
    text.push('\n');
    text.extend((2..=2500).map(|i| format!("{i}\n")));
    env.write("long.txt", text);
    let r = env.read("long.txt").await;
    let t = r.text();
    let first = t.lines().next().unwrap();
    assert!(first.contains("line cut: 5000 bytes"), "{}", &first[..80]);
    assert_eq!(first.matches('x').count(), 2000);
    assert!(t.contains("  2000\t2000\n") && !t.contains("\t2001\n"));
    assert!(t.contains("Showing lines 1-2000 of 2500") && t.contains("offset=2001"));
    assert!(t.contains("1 line(s) longer than 2000 characters were cut"));
}

#[tokio::test]
async fn huge_file_output_is_capped_with_a_way_to_continue() {
    let env = Env::new();
    // 12 MB in 120,000 lines, and one 2 MB line with no newline at the end.
    let line = format!("{}\n", "y".repeat(99));
    let mut big = line.repeat(120_000);
    big.push_str(&"z".repeat(2_000_000));
    let path = env.write("huge.txt", &big);
    let r = env
        .call(
            "Read",
            json!({ "file_path": env.p("huge.txt"), "limit": 1_000_000 }),
        )
        .await;
    assert_ok(&r);
    let t = r.text();
    assert!(t.len() < 256 * 1024 + 1024, "output is {} bytes", t.len());
    assert!(t.contains("Output stopped before line") && t.contains("Continue with offset="));
    let tail = env
        .call(
            "Read",
            json!({ "file_path": env.p("huge.txt"), "offset": 120_001 }),
        )
        .await;
    assert_ok(&tail);
    assert!(
        tail.text().starts_with("120001\tzzz"),
        "{}",
        &tail.text()[..40]
    );
    assert!(tail.text().contains("line cut: 2000000 bytes"));
    let seen = ReadState::of(&env.session).get(&path).unwrap();
    assert_eq!(seen.size, big.len() as u64);
    assert_eq!(seen.hash, Some(read_state::hash(big.as_bytes())));
}

#[tokio::test]
async fn images_come_back_as_image_blocks() {
    let env = Env::new();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..=255u8).cycle().take(3000));
    env.write("pic.dat", &png);
    let r = env.read("pic.dat").await;
    let image = r
        .content
        .iter()
        .find(|b| b.is_image())
        .expect("an image block");
    let ContentBlock::Image { media_type, data } = image else {
        unreachable!()
    };
    assert_eq!(media_type, "image/png");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        png
    );

    let webp = [&b"RIFF\x20\0\0\0WEBPVP8 "[..], &[0u8; 64][..]].concat();
    env.write("w.webp", &webp);
    let r = env.read("w.webp").await;
    assert!(
        matches!(&r.content[1], ContentBlock::Image { media_type, .. } if media_type == "image/webp")
    );
}

#[tokio::test]
async fn too_large_images_are_refused() {
    let env = Env::with_pipeline(|_| {
        let limits = crate::files::ReadLimits {
            max_image_bytes: 100,
            ..Default::default()
        };
        baton_engine::Pipeline::allow_all_unsafe(baton_engine::ToolPool::of(vec![
            crate::files::read_tool_with(limits),
        ]))
    });
    env.write("big.gif", [&b"GIF89a"[..], &[1u8; 500][..]].concat());
    let r = env
        .call("Read", json!({ "file_path": env.p("big.gif") }))
        .await;
    assert_err(&r, Outcome::ToolError, &["506 bytes", "smaller copy"]);
}

#[tokio::test]
async fn binary_files_are_refused_clearly() {
    let env = Env::new();
    let path = env.write("blob.bin", b"\x01\x02\x00\x03binary");
    let r = env
        .call("Read", json!({ "file_path": env.p("blob.bin") }))
        .await;
    assert_err(&r, Outcome::ToolError, &["binary data", "Bash"]);
    assert!(
        ReadState::of(&env.session).get(&path).is_none(),
        "a refused file is not recorded"
    );
    env.write("doc.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n");
    let r = env
        .call("Read", json!({ "file_path": env.p("doc.pdf") }))
        .await;
    assert_err(&r, Outcome::ToolError, &["PDF document", "pdftotext"]);
}

#[tokio::test]
async fn missing_files_get_close_names() {
    let env = Env::new();
    env.write("src/config.yaml", "a: 1\n");
    let r = env
        .call("Read", json!({ "file_path": env.p("src/config.yml") }))
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["does not exist", "Did you mean", "config.yaml"],
    );
    let r = env
        .call("Read", json!({ "file_path": env.p("nodir/x.txt") }))
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["does not exist", "directory", "does not exist either"],
    );
}

#[tokio::test]
async fn directories_point_to_glob_or_ls() {
    let env = Env::new();
    std::fs::create_dir(env.path("sub")).unwrap();
    let r = env.call("Read", json!({ "file_path": env.p("sub") })).await;
    assert_err(&r, Outcome::ToolError, &["is a directory", "Glob", "ls"]);
}

#[tokio::test]
async fn unreadable_file_is_reported() {
    let env = Env::new();
    let path = env.write("secret.txt", "hidden\n");
    if !make_unreadable(&path) {
        return rerun_without_dac_override("files::tests::read_tests::unreadable_file_is_reported");
    }
    let r = env
        .call("Read", json!({ "file_path": env.p("secret.txt") }))
        .await;
    assert_err(&r, Outcome::ToolError, &["Permission denied", "secret.txt"]);
    assert!(ReadState::of(&env.session).get(&path).is_none());
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily_with_a_note() {
    let env = Env::new();
    env.write("latin1.txt", b"caf\xe9\nplain\n");
    let r = env.read("latin1.txt").await;
    let t = r.text();
    assert!(t.contains("caf\u{fffd}") && t.contains("plain"));
    assert!(
        t.contains("not valid UTF-8") && t.contains("Edit refuses"),
        "{t}"
    );
}

#[tokio::test]
async fn empty_file_says_so() {
    let env = Env::new();
    env.write("empty.txt", "");
    let r = env.read("empty.txt").await;
    assert!(r.text().contains("exists but is empty"));
}

#[tokio::test]
async fn bad_inputs_fail_validation() {
    let env = Env::new();
    let r = env
        .call("Read", json!({ "file_path": "relative/a.txt" }))
        .await;
    assert_err(
        &r,
        Outcome::ValidationFailed,
        &["absolute", "relative/a.txt"],
    );
    let r = env
        .call("Read", json!({ "file_path": env.p("a"), "limit": 0 }))
        .await;
    assert_err(&r, Outcome::ValidationFailed, &["limit"]);
    let r = env.call("Read", json!({ "path": "/a" })).await;
    assert_err(&r, Outcome::InvalidInput, &["file_path"]);
    let r = env
        .call("Read", json!({ "file_path": "/a", "offset": -3 }))
        .await;
    assert_err(&r, Outcome::InvalidInput, &["offset"]);
}

#[tokio::test]
async fn notebooks_are_shown_as_cells() {
    let env = Env::new();
    env.write("n.ipynb", super::notebook_tests::SAMPLE);
    let r = env.read("n.ipynb").await;
    let t = r.text();
    assert!(
        t.contains("<cell index=\"0\" id=\"intro\" type=\"markdown\">\n# Title\n"),
        "{t}"
    );
    assert!(
        t.contains("id=\"calc\" type=\"code\">\nx = 1\nprint(x)\n<output>\n1\n</output>"),
        "{t}"
    );
    let raw = env
        .call(
            "Read",
            json!({ "file_path": env.p("n.ipynb"), "offset": 1, "limit": 2 }),
        )
        .await;
    assert!(raw.text().starts_with("     1\t{"), "{}", raw.text());
}

#[tokio::test]
async fn files_past_the_scan_limit_are_read_only_as_far_as_needed() {
    let env = Env::with_pipeline(|_| {
        let limits = crate::files::ReadLimits {
            full_scan_max_bytes: 1000,
            ..Default::default()
        };
        let mut tools = crate::files::try_tools(limits).unwrap();
        tools.truncate(3);
        baton_engine::Pipeline::allow_all_unsafe(baton_engine::ToolPool::of(tools))
    });
    let text: String = (0..50_000).map(|i| format!("row {i}\n")).collect();
    let path = env.write("log.txt", &text);
    let r = env
        .call("Read", json!({ "file_path": env.p("log.txt"), "limit": 3 }))
        .await;
    assert_ok(&r);
    let t = r.text();
    assert!(
        t.starts_with("     1\trow 0\n     2\trow 1\n     3\trow 2\n"),
        "{t}"
    );
    assert!(
        t.contains("too large to count its lines") && t.contains("offset=4"),
        "{t}"
    );
    let seen = ReadState::of(&env.session).get(&path).unwrap();
    assert_eq!((seen.hash, seen.size), (None, text.len() as u64));

    // Metadata stands in for the hash: an untouched file can be edited...
    let edit = json!({ "file_path": env.p("log.txt"), "old_string": "row 49999\n", "new_string": "last\n" });
    assert_ok(&env.call("Edit", edit).await);
    // ...and after that the session knows the full content again.
    assert!(ReadState::of(&env.session)
        .get(&path)
        .unwrap()
        .hash
        .is_some());

    // A file changed behind the model's back is refused.
    env.call("Read", json!({ "file_path": env.p("log.txt"), "limit": 1 }))
        .await;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"more\n")
        .unwrap();
    let edit =
        json!({ "file_path": env.p("log.txt"), "old_string": "row 0\n", "new_string": "first\n" });
    let r = env.call("Edit", edit).await;
    assert_err(&r, Outcome::ToolError, &["changed since you last read it"]);
}

#[tokio::test]
async fn a_cancelled_read_stops() {
    let env = Env::new();
    env.write("a.txt", "a\n".repeat(1000));
    let tool = env.pipeline.pool().get("Read").unwrap().clone();
    let parsed = tool.parse(&json!({ "file_path": env.p("a.txt") })).unwrap();
    let ctx = env.ctx();
    ctx.cancel.cancel(baton_engine::CancelReason::User);
    let err = tool.call(parsed, ctx).await.unwrap_err();
    assert!(err.message.contains("cancelled"), "{}", err.message);
}

#[tokio::test]
async fn hooks_get_the_lines_shown_without_baton_numbers_or_notes() {
    let env = Env::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    env.write("ten.txt", text);
    let r = env
        .call(
            "Read",
            json!({ "file_path": env.p("ten.txt"), "offset": 4, "limit": 3 }),
        )
        .await;
    assert_ok(&r);
    let response = r.response.as_ref().expect("Read gives its tool_response");
    assert_eq!(
        *response,
        json!({"type": "text", "file": {
            "filePath": env.p("ten.txt"),
            "content": "line 4\nline 5\nline 6\n",
            "numLines": 3,
            "startLine": 4,
            "totalLines": 10,
        }})
    );
}
