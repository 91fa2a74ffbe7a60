//! The ToolSearch query language (SPEC §10).
//!
//! - `select:A,B` names tools exactly (loaded ones too) and ignores
//!   `max_results`;
//! - otherwise the query is keywords, case-insensitive; a keyword written
//!   `+term` must appear in the tool's name, the others rank.

/// A parsed query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// Exact names, in the order given, without repeats.
    Select(Vec<String>),
    /// Lower-cased keywords: `required` (from `+term`) and the others.
    Keywords {
        /// Terms every match must contain.
        required: Vec<String>,
        /// Terms that only raise a match's score.
        optional: Vec<String>,
    },
}

impl Query {
    /// Parses a `ToolSearch` query: `select:A,B` names tools exactly;
    /// anything else is keywords, `+term` marking required ones.
    pub fn parse(text: &str) -> Query {
        let text = text.trim();
        if let Some(rest) = text
            .get(..7)
            .filter(|p| p.eq_ignore_ascii_case("select:"))
            .and_then(|_| text.get(7..))
        {
            let mut names: Vec<String> = Vec::new();
            for name in rest.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
            return Query::Select(names);
        }
        let mut required: Vec<String> = Vec::new();
        let mut optional: Vec<String> = Vec::new();
        for word in text.split_whitespace() {
            let (list, term) = match word.strip_prefix('+') {
                Some(term) => (&mut required, term),
                None => (&mut optional, word),
            };
            let term = term.to_lowercase();
            if !term.is_empty() && !list.contains(&term) {
                list.push(term);
            }
        }
        Query::Keywords { required, optional }
    }

    /// Keywords that score: the optional ones, or the required ones when
    /// the query has nothing else (`+slack` alone ranks by `slack`).
    pub fn scoring_terms<'a>(required: &'a [String], optional: &'a [String]) -> &'a [String] {
        if optional.is_empty() {
            required
        } else {
            optional
        }
    }
}

/// The parts of a tool name that keywords are matched against: split on
/// `__`, `_` and camel-case boundaries, lower-cased. An MCP tool's `mcp__`
/// prefix is dropped (every MCP tool has it, so it tells tools apart no
/// better than nothing); its server name stays a part.
pub fn name_parts(name: &str) -> Vec<String> {
    let name = name.strip_prefix("mcp__").unwrap_or(name);
    let mut parts = Vec::new();
    for chunk in name.split('_').filter(|c| !c.is_empty()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // fooBar → foo|Bar; HTTPServer → HTTP|Server.
            let boundary = (prev.is_lowercase() || prev.is_ascii_digit()) && cur.is_uppercase()
                || prev.is_uppercase() && cur.is_uppercase() && next_lower;
            if boundary {
                parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        parts.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    parts
}

/// Whether `c` belongs to a word (as in a regex `\w`).
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `term` occurs in `text` (both lower-cased) as a whole word:
/// neither the character before nor the one after is a word character.
pub(crate) fn contains_word(text: &str, term: &str) -> bool {
    if term.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(pos) = text.get(from..).and_then(|t| t.find(term)) {
        let at = from + pos;
        let end = at + term.len();
        let before_ok = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !is_word_char(c));
        let after_ok = text[end..].chars().next().is_none_or(|c| !is_word_char(c));
        if before_ok && after_ok {
            return true;
        }
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}
