//! Turning a response body into text the model can read.
//!
//! HTML is rendered to plain text with markdown-like structure (headings,
//! lists, links as references) because raw markup wastes most of the
//! context on tags and scripts. Other textual types pass through as they
//! are; binary content is refused with a note rather than dumped.

/// Width HTML is wrapped at; wide enough that code and tables survive.
const WRAP_WIDTH: usize = 120;

/// The body as text, or `Err` with a note when it is not textual.
pub(super) fn to_text(content_type: Option<&str>, body: &[u8]) -> Result<String, String> {
    let essence = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let is_html = matches!(essence.as_str(), "text/html" | "application/xhtml+xml")
        || (essence.is_empty() && looks_like_html(body));
    if is_html {
        return Ok(html_to_text(body));
    }
    let textual = essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-yaml"
                | "application/yaml"
                | "application/toml"
                | "application/x-sh"
        )
        || (essence.is_empty() && !body.contains(&0) && std::str::from_utf8(body).is_ok());
    if textual {
        Ok(String::from_utf8_lossy(body).into_owned())
    } else {
        Err(format!(
            "The response is binary ({}, {} bytes); WebFetch returns text only.",
            if essence.is_empty() {
                "no content type"
            } else {
                &essence
            },
            body.len()
        ))
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

fn html_to_text(body: &[u8]) -> String {
    match html2text::from_read(body, WRAP_WIDTH) {
        Ok(text) => text,
        // Rendering failed (malformed beyond repair): the raw text is still
        // better than nothing.
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_text_without_markup_or_scripts() {
        let html = b"<html><head><title>T</title><script>var secret = 1;</script></head>\
            <body><h1>Main Title</h1><p>Some <b>bold</b> text and a <a href=\"https://x.test/\">link</a>.</p>\
            <ul><li>first</li><li>second</li></ul></body></html>";
        let text = to_text(Some("text/html; charset=utf-8"), html).unwrap();
        assert!(text.contains("Main Title"), "{text}");
        assert!(text.contains("first") && text.contains("second"), "{text}");
        assert!(text.contains("https://x.test/"), "{text}");
        assert!(
            !text.contains("<p>") && !text.contains("var secret"),
            "{text}"
        );
    }

    #[test]
    fn text_passes_through_and_binary_is_refused() {
        assert_eq!(
            to_text(Some("application/json"), b"{\"a\":1}").unwrap(),
            "{\"a\":1}"
        );
        assert_eq!(to_text(None, b"plain words").unwrap(), "plain words");
        assert!(to_text(None, b"<!DOCTYPE html><p>x</p>")
            .unwrap()
            .contains('x'));
        let err = to_text(Some("image/png"), &[0x89, b'P', b'N', b'G', 0]).unwrap_err();
        assert!(err.contains("binary (image/png, 5 bytes)"), "{err}");
        assert!(to_text(None, &[1, 0, 2]).is_err());
    }
}
