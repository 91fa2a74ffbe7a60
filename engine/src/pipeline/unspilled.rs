//! A large result that could not be written to the state directory.
//!
//! Spilling keeps a large result whole on disk and shows a preview. When
//! the state directory is full, read-only or gone, the result used to stay
//! inline whole: one 30 MB output went past the per-message budget into
//! the model's context. Now it is cut instead, to about the size a spill
//! notice would have had: the head and the tail, with a note saying how
//! much is missing and why, so the model knows the output is incomplete.

use super::size::PREVIEW_BYTES;

/// The text shown in place of `text`, which could not be saved (`why`).
pub fn cut_text(text: &str, why: &std::io::Error) -> String {
    let head_end = floor_boundary(text, PREVIEW_BYTES.min(text.len()));
    let tail_start = ceil_boundary(text, text.len().saturating_sub(PREVIEW_BYTES).max(head_end));
    let omitted = &text[head_end..tail_start];
    format!(
        "The output was too large to show inline ({} characters, {} bytes) and could not be \
         saved to a file ({why}), so it is cut: {} characters in the middle are left out.\n\n\
         First {} bytes:\n{}\n[… {} characters left out …]\nLast {} bytes:\n{}",
        text.chars().count(),
        text.len(),
        omitted.chars().count(),
        head_end,
        &text[..head_end],
        omitted.chars().count(),
        text.len() - tail_start,
        &text[tail_start..],
    )
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_says_what_is_missing() {
        let text = format!(
            "{}{}{}",
            "h".repeat(3000),
            "é".repeat(100_000),
            "t".repeat(3000)
        );
        let err = std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem);
        let cut = cut_text(&text, &err);
        assert!(cut.len() < 3 * PREVIEW_BYTES, "{}", cut.len());
        assert!(cut.contains("could not be saved"));
        assert!(cut.contains("hhh") && cut.ends_with("ttt"));
        let left_out = 3000 + 100_000 + 3000 - 2 * PREVIEW_BYTES;
        assert!(
            cut.contains(&format!("[… {left_out} characters left out …]")),
            "{}",
            &cut[..400]
        );
        // Short texts are not cut at all (nothing is left out).
        let short = cut_text("abc", &err);
        assert!(short.contains("[… 0 characters left out …]") && short.contains("abc"));
    }
}
