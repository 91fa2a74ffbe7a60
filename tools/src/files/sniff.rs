//! What kind of file this is, judged by its first bytes rather than its name.
//!
//! Extensions lie (a `.txt` that is a zip, a PNG without extension); magic
//! bytes do not. Images the model can look at are returned as images; other
//! binary formats are refused, because their bytes shown as text are noise
//! that costs tokens and can confuse the model.

/// How many leading bytes are inspected.
pub(super) const SNIFF_LEN: usize = 8192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    /// An image format the model APIs accept; the value is the media type.
    Image(&'static str),
    /// Anything else that is not text; the value names the format.
    Binary(&'static str),
}

/// Classifies a file from its first [`SNIFF_LEN`] bytes.
pub(super) fn sniff(head: &[u8]) -> Kind {
    if let Some(media) = image_type(head) {
        return Kind::Image(media);
    }
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "zip archive (also docx, xlsx, jar)"),
        (b"\x1f\x8b", "gzip archive"),
        (b"\x7fELF", "ELF executable or library"),
        (b"BZh", "bzip2 archive"),
        (b"\xfd7zXZ\x00", "xz archive"),
        (b"7z\xbc\xaf\x27\x1c", "7-zip archive"),
        (b"\x28\xb5\x2f\xfd", "zstd archive"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"\xca\xfe\xba\xbe", "Java class or Mach-O binary"),
        (b"\xcf\xfa\xed\xfe", "Mach-O binary"),
        (b"MZ", "Windows executable"),
        (b"BM", "BMP image (not supported: convert it to PNG)"),
        (b"II*\x00", "TIFF image (not supported: convert it to PNG)"),
        (b"MM\x00*", "TIFF image (not supported: convert it to PNG)"),
    ];
    for (magic, name) in SIGNATURES {
        // "BM" and "MZ" are also the start of ordinary words; only trust them
        // when the rest of the head is not text either.
        let weak = magic.len() <= 2 && !magic.starts_with(b"\x1f");
        if head.starts_with(magic) && (!weak || head.contains(&0)) {
            return Kind::Binary(name);
        }
    }
    if head.contains(&0) {
        // UTF-16 text is full of NULs too; it is refused like any binary,
        // with a hint, since every line would need re-encoding to edit.
        if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
            return Kind::Binary("UTF-16 text (convert it to UTF-8 with iconv to read it)");
        }
        return Kind::Binary("binary data (contains NUL bytes)");
    }
    Kind::Text
}

fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_images_binaries_and_text() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nrest"), Kind::Image("image/png"));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Kind::Image("image/jpeg"));
        assert_eq!(sniff(b"GIF89a..."), Kind::Image("image/gif"));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Kind::Image("image/webp"));
        assert!(matches!(sniff(b"%PDF-1.7\n"), Kind::Binary(_)));
        assert!(matches!(sniff(b"abc\0def"), Kind::Binary(_)));
        assert_eq!(sniff(b"BMW is a car maker\n"), Kind::Text);
        assert_eq!(sniff(b"MZ is text here"), Kind::Text);
        assert_eq!(sniff(b""), Kind::Text);
        assert_eq!(sniff("héllo wörld\n".as_bytes()), Kind::Text);
    }
}
