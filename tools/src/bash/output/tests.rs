use super::*;
use proptest::prelude::*;

fn capture(inline: usize, dir: &tempfile::TempDir) -> Capture {
    Capture::new(CaptureSpec {
        inline_chars: inline,
        log_path: dir.path().join("out.log"),
        log_max_bytes: 1 << 30,
        eager_log: false,
    })
}

#[test]
fn small_output_is_kept_whole_and_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = capture(100, &dir);
    c.push(b"hello\n");
    c.push(b"world\n");
    let r = c.render();
    assert_eq!(r.text, "hello\nworld\n");
    assert_eq!(r.omitted_bytes, 0);
    assert_eq!((c.total_bytes(), c.total_lines()), (12, 2));
    assert!(c.log_path().is_none());
}

#[test]
fn long_output_keeps_head_and_tail_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = capture(20, &dir);
    let text: String = (0..100).map(|i| format!("{i}\n")).collect();
    for chunk in text.as_bytes().chunks(7) {
        c.push(chunk);
    }
    let r = c.render();
    assert!(r.text.starts_with("0\n1\n2\n3\n4\n"), "{}", r.text);
    assert!(r.text.ends_with("97\n98\n99\n"), "{}", r.text);
    assert!(r.text.contains("omitted"));
    assert_eq!(r.omitted_bytes, text.len() as u64 - 20);
    let log = c.log_path().unwrap();
    assert_eq!(std::fs::read_to_string(log).unwrap(), text);
}

#[test]
fn multibyte_characters_are_never_split() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = capture(10, &dir);
    let text = "é".repeat(50) + "ü€😀";
    for chunk in text.as_bytes().chunks(3) {
        c.push(chunk);
    }
    let r = c.render();
    assert!(r.text.starts_with("ééééé\n"), "{}", r.text);
    assert!(r.text.ends_with("ééü€😀"), "{}", r.text);
    assert!(!r.text.contains('\u{FFFD}'));
}

/// The bug a 2 GB single line showed ("0 lines"), at 3 MB: what matters is
/// a line longer than everything kept inline, without a newline.
#[test]
fn one_huge_line_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = capture(1000, &dir);
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..48 {
        c.push(&chunk);
    }
    assert_eq!(c.total_lines(), 1);
    let r = c.render();
    assert!(
        r.text.contains("omitted here (inside one line)"),
        "{}",
        &r.text[400..700]
    );
    assert!(!r.text.contains("0 lines"));
    // With a final newline it is still one line; two lines are two.
    c.push(b"\n");
    assert_eq!(c.total_lines(), 1);
    c.push(b"tail");
    assert_eq!(c.total_lines(), 2);
    let empty = capture(10, &dir);
    assert_eq!(empty.total_lines(), 0);
}

#[test]
fn last_lines_for_progress() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = capture(1000, &dir);
    c.push(b"a\nb\n\nc\nd\n");
    assert_eq!(c.last_lines(2), ["c", "d"]);
}

proptest! {
    #[test]
    fn newline_count_matches_a_byte_loop(
        data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(0x0b), Just(0x8a), any::<u8>()], 0..100),
    ) {
        let expected = data.iter().filter(|b| **b == b'\n').count();
        prop_assert_eq!(count_newlines(&data), expected);
    }

    /// Whatever the chunking, the capture shows exactly the head and tail of
    /// the stream, and the log file holds all of it.
    #[test]
    fn capture_matches_a_simple_model(
        data in proptest::collection::vec(any::<u8>().prop_map(|b| b % 4 + b'a'), 0..400),
        cuts in proptest::collection::vec(1usize..50, 1..20),
        inline in 2usize..60,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(inline, &dir);
        let mut rest = &data[..];
        let mut i = 0;
        while !rest.is_empty() {
            let n = cuts[i % cuts.len()].min(rest.len());
            c.push(&rest[..n]);
            rest = &rest[n..];
            i += 1;
        }
        let r = c.render();
        let text = String::from_utf8(data.clone()).unwrap();
        if data.len() <= inline {
            prop_assert_eq!(&r.text, &text);
            prop_assert!(c.log_path().is_none());
        } else {
            let head = &text[..inline / 2];
            let tail = &text[text.len() - (inline - inline / 2)..];
            prop_assert!(r.text.starts_with(head));
            prop_assert!(r.text.ends_with(tail));
            prop_assert_eq!(r.omitted_bytes, (data.len() - inline) as u64);
            let logged = std::fs::read(c.log_path().unwrap()).unwrap();
            prop_assert_eq!(logged, data.clone());
        }
        prop_assert_eq!(c.total_bytes(), data.len() as u64);
    }

    #[test]
    fn ring_keeps_the_last_bytes(
        pushes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..30),
        cap in 0usize..64,
    ) {
        let mut ring = Ring::new(cap);
        let mut all = Vec::new();
        for p in &pushes {
            ring.push(p);
            all.extend_from_slice(p);
        }
        let expected = &all[all.len().saturating_sub(cap)..];
        prop_assert_eq!(ring.contents(), expected.to_vec());
    }
}
