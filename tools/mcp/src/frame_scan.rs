//! Reading a JSON-RPC frame's `id` from its first or last bytes, without
//! holding (or parsing) the whole frame. A frame over the size limit is
//! dropped as it streams past; to refuse it as an error of the right
//! request, the id must come from what little is kept: the head (servers
//! that write `{"jsonrpc":"2.0","id":…,"result":…}`, e.g. Python's SDK) or
//! the tail (servers that write `{"result":…,"jsonrpc":"2.0","id":…}`, e.g.
//! the TypeScript SDK).

/// What the first bytes of a frame say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Head {
    /// The top-level `id`, as its JSON text (`5`, `"abc"`), if it came
    /// before the cut.
    pub id: Option<String>,
    /// A top-level `result` or `error` key was seen: an answer.
    pub answer: bool,
    /// A top-level `method` key was seen: a request or notification.
    pub method: bool,
}

/// Scans the top level of the object that starts `bytes` (which may be cut
/// anywhere) for `id`, `result`/`error` and `method`.
pub(crate) fn scan_head(bytes: &[u8]) -> Head {
    let mut head = Head::default();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return head;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b'"') => {}
            _ => return head,
        }
        let Some(key_end) = string_end(bytes, i) else {
            return head;
        };
        let key = &bytes[i + 1..key_end - 1];
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return head;
        }
        i = skip_ws(bytes, i + 1);
        let Some(value_end) = value_end(bytes, i) else {
            // The value runs past the cut; the key still tells the kind.
            mark(&mut head, key, None);
            return head;
        };
        mark(&mut head, key, Some(&bytes[i..value_end]));
        i = skip_ws(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            _ => return head,
        }
    }
}

fn mark(head: &mut Head, key: &[u8], value: Option<&[u8]>) {
    match key {
        b"id" => head.id = value.filter(|v| is_scalar_id(v)).map(text),
        b"result" | b"error" => head.answer = true,
        b"method" => head.method = true,
        _ => {}
    }
}

/// The top-level `id` of a frame whose last bytes are `tail`: the last
/// `"id":<scalar>` directly followed by the object's single closing brace.
/// A nested `"id"` is followed by two or more braces, so it is not taken.
pub(crate) fn tail_id(tail: &[u8]) -> Option<String> {
    let end = trim_end(tail);
    let body = tail[..end].strip_suffix(b"}")?;
    let body = &body[..trim_end(body)];
    let key = rfind(body, b"\"id\"")?;
    let mut i = skip_ws(body, key + 4);
    if body.get(i) != Some(&b':') {
        return None;
    }
    i = skip_ws(body, i + 1);
    let value = &body[i..];
    // The value must be the whole rest and end where the object ends.
    let whole = match value.first() {
        Some(b'"') => string_end(value, 0) == Some(value.len()),
        _ => !value.is_empty(),
    };
    (whole && is_scalar_id(value)).then(|| text(value))
}

fn is_scalar_id(value: &[u8]) -> bool {
    match value.first() {
        Some(b'"') => true,
        Some(b'-' | b'0'..=b'9') => value
            .iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')),
        _ => false,
    }
}

fn text(value: &[u8]) -> String {
    String::from_utf8_lossy(value).into_owned()
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

fn trim_end(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// The index after the string that starts at `start` (a `"`), or `None`
/// when it is cut.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index after the JSON value that starts at `start`, or `None` when
/// it is cut. Nested values are skipped by counting brackets outside
/// strings; the value is not otherwise validated.
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = start;
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                i += 1;
            }
            // A scalar that reaches the cut may be cut itself.
            (i < bytes.len()).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_gives_the_id_when_it_comes_first() {
        let h = scan_head(
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxxx"#,
        );
        assert_eq!(h.id.as_deref(), Some("7"));
        assert!(h.answer && !h.method);
        let h = scan_head(br#"{ "id" : "a\"b", "method": "tools/call", "params": {"#);
        assert_eq!(h.id.as_deref(), Some(r#""a\"b""#));
        assert!(h.method && !h.answer);
    }

    #[test]
    fn a_nested_id_in_the_head_is_not_the_frame_id() {
        let h = scan_head(br#"{"result":{"id":99,"content":[{"type":"text","text":"aaaa"#);
        assert_eq!(h.id, None);
        assert!(h.answer);
        // A cut number is not taken for the whole id.
        assert_eq!(scan_head(br#"{"jsonrpc":"2.0","id":12"#).id, None);
    }

    #[test]
    fn the_tail_gives_the_id_when_it_comes_last() {
        assert_eq!(
            tail_id(br#"xxxx"}]},"jsonrpc":"2.0","id":42}"#).as_deref(),
            Some("42")
        );
        assert_eq!(
            tail_id(b"aaa\"}]}, \"id\" : \"r-1\" }\r").as_deref(),
            Some("\"r-1\"")
        );
        // Nested ids (two closing braces) and ids before other keys are not
        // taken.
        assert_eq!(tail_id(br#"{"result":{"id":3}}"#), None);
        assert_eq!(tail_id(br#""id":3,"result":{"a":1}}"#), None);
        assert_eq!(tail_id(b"garbage"), None);
    }
}
