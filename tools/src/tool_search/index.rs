//! Ranking deferred tools against keywords (SPEC §10), fast enough for
//! thousands of MCP tools.
//!
//! Per term, summed over the terms: an exact name part +10 (+12 for MCP
//! tools); else a name part containing the term +5 (+6); else the full name
//! containing the term +3; a word of the search hint +4; a word of the
//! description +2. Ties keep pool order.
//!
//! The index is built once per pool (tools are immutable) and turns each
//! rule into a lookup: exact parts and words are hash maps to posting lists;
//! "part contains" and "name contains" run one SIMD substring search over
//! the concatenated distinct parts or names instead of a loop over tools.
//! [`search_linear`] is the straightforward scan, kept as the benchmark's
//! baseline and as the tests' oracle.

use std::collections::HashMap;

use baton_engine::deferred::{is_deferred_now, Deferral};
use baton_engine::ToolPool;
use memchr::memmem;

use super::query::{contains_word, is_word_char, name_parts, Query};

pub(crate) const EXACT_PART: u32 = 10;
pub(crate) const EXACT_PART_MCP: u32 = 12;
pub(crate) const PARTIAL_PART: u32 = 5;
pub(crate) const PARTIAL_PART_MCP: u32 = 6;
pub(crate) const FULL_NAME: u32 = 3;
pub(crate) const HINT_WORD: u32 = 4;
pub(crate) const DESCRIPTION_WORD: u32 = 2;

struct Entry {
    name: String,
    mcp: bool,
    /// Lower-cased hint and description, for terms with punctuation.
    hint: String,
    description: String,
}

/// Concatenated strings with the index of the item each byte belongs to.
struct Haystack {
    text: String,
    starts: Vec<usize>,
}

impl Haystack {
    fn new<'a>(items: impl Iterator<Item = &'a str>) -> Haystack {
        let mut text = String::new();
        let mut starts = Vec::new();
        for item in items {
            starts.push(text.len());
            text.push_str(item);
            // A separator no lower-cased term contains: matches never span items.
            text.push('\n');
        }
        Haystack { text, starts }
    }

    /// Items containing `needle`, each once, ascending.
    fn items_containing(&self, needle: &str) -> Vec<usize> {
        let mut found = Vec::new();
        if needle.is_empty() || needle.contains('\n') {
            return found;
        }
        for at in memmem::find_iter(self.text.as_bytes(), needle.as_bytes()) {
            let item = self.starts.partition_point(|&s| s <= at) - 1;
            if found.last() != Some(&item) {
                found.push(item);
            }
        }
        found
    }
}

/// The deferred tools of one pool, indexed for keyword search.
pub struct SearchIndex {
    pool: ToolPool,
    entries: Vec<Entry>,
    /// Distinct name parts and, per part, the entries having it.
    parts: Vec<Vec<u32>>,
    part_ids: HashMap<String, usize>,
    part_text: Haystack,
    names: Haystack,
    hint_words: HashMap<String, Vec<u32>>,
    description_words: HashMap<String, Vec<u32>>,
}

// Not derived: the postings are large and say little; the pool names the tools.
baton_engine::debug_fields! { SearchIndex as this { pool, entries: this.entries.len(), .. } }

fn add_posting(map: &mut HashMap<String, Vec<u32>>, word: String, id: u32) {
    let list = map.entry(word).or_default();
    if list.last() != Some(&id) {
        list.push(id);
    }
}

impl SearchIndex {
    /// Indexes the tools of `pool` that are deferred under `deferral`.
    pub fn build(pool: &ToolPool, deferral: &Deferral) -> SearchIndex {
        let mut entries = Vec::new();
        let mut parts: Vec<Vec<u32>> = Vec::new();
        let mut part_ids: HashMap<String, usize> = HashMap::new();
        let mut part_names: Vec<String> = Vec::new();
        let mut hint_words = HashMap::new();
        let mut description_words = HashMap::new();
        for tool in pool.tools().filter(|t| is_deferred_now(t, pool, deferral)) {
            let id = entries.len() as u32;
            for part in name_parts(tool.name()) {
                let pid = *part_ids.entry(part.clone()).or_insert_with(|| {
                    parts.push(Vec::new());
                    part_names.push(part);
                    parts.len() - 1
                });
                if parts[pid].last() != Some(&id) {
                    parts[pid].push(id);
                }
            }
            let hint = tool.def().search_hint_text().unwrap_or("").to_lowercase();
            let description = tool.def().description().to_lowercase();
            for w in hint
                .split(|c: char| !is_word_char(c))
                .filter(|w| !w.is_empty())
            {
                add_posting(&mut hint_words, w.to_string(), id);
            }
            for w in description
                .split(|c: char| !is_word_char(c))
                .filter(|w| !w.is_empty())
            {
                add_posting(&mut description_words, w.to_string(), id);
            }
            entries.push(Entry {
                name: tool.name().to_string(),
                mcp: tool.def().is_mcp(),
                hint,
                description,
            });
        }
        let lower_names: Vec<String> = entries.iter().map(|e| e.name.to_lowercase()).collect();
        SearchIndex {
            pool: pool.clone(),
            part_text: Haystack::new(part_names.iter().map(String::as_str)),
            names: Haystack::new(lower_names.iter().map(String::as_str)),
            entries,
            parts,
            part_ids,
            hint_words,
            description_words,
        }
    }

    /// Whether this index was built from `pool`'s tools.
    pub fn is_for(&self, pool: &ToolPool) -> bool {
        self.pool.shares_tools_with(pool)
    }

    /// How many deferred tools are indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no deferred tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Ranks the deferred tools for keywords; names, best first, at most
    /// `max`. Tools the pool's restriction hides are skipped.
    pub fn search(
        &self,
        required: &[String],
        optional: &[String],
        max: usize,
        pool: &ToolPool,
    ) -> Vec<String> {
        self.search_scored(required, optional, max, pool)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// [`Self::search`] with each tool's score.
    pub fn search_scored(
        &self,
        required: &[String],
        optional: &[String],
        max: usize,
        pool: &ToolPool,
    ) -> Vec<(String, u32)> {
        let n = self.entries.len();
        let mut score = vec![0u32; n];
        // Per entry, the last term (1-based) that matched its name parts.
        let mut named = vec![0u32; n];
        for (t, term) in Query::scoring_terms(required, optional).iter().enumerate() {
            let stamp = t as u32 + 1;
            if let Some(&pid) = self.part_ids.get(term) {
                for &id in &self.parts[pid] {
                    let e = &self.entries[id as usize];
                    score[id as usize] += if e.mcp { EXACT_PART_MCP } else { EXACT_PART };
                    named[id as usize] = stamp;
                }
            }
            for pid in self.part_text.items_containing(term) {
                for &id in &self.parts[pid] {
                    if named[id as usize] != stamp {
                        let e = &self.entries[id as usize];
                        score[id as usize] += if e.mcp {
                            PARTIAL_PART_MCP
                        } else {
                            PARTIAL_PART
                        };
                        named[id as usize] = stamp;
                    }
                }
            }
            for id in self.names.items_containing(term) {
                if named[id] != stamp {
                    score[id] += FULL_NAME;
                }
            }
            self.add_word_scores(term, &mut score);
        }
        let mut allowed = vec![true; n];
        for term in required {
            let mut keep = vec![false; n];
            for id in self.names.items_containing(term) {
                keep[id] = true;
            }
            for (a, k) in allowed.iter_mut().zip(keep) {
                *a &= k;
            }
        }
        let ranked_only_if_scored = required.is_empty();
        let mut hits: Vec<(u32, usize)> = (0..n)
            .filter(|&i| allowed[i] && (score[i] > 0 || !ranked_only_if_scored))
            .map(|i| (score[i], i))
            .collect();
        hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        hits.into_iter()
            .filter(|&(_, i)| pool.get(&self.entries[i].name).is_some())
            .take(max)
            .map(|(s, i)| (self.entries[i].name.clone(), s))
            .collect()
    }

    fn add_word_scores(&self, term: &str, score: &mut [u32]) {
        if term.chars().all(is_word_char) {
            for (map, points) in [
                (&self.hint_words, HINT_WORD),
                (&self.description_words, DESCRIPTION_WORD),
            ] {
                for &id in map.get(term).map(Vec::as_slice).unwrap_or_default() {
                    score[id as usize] += points;
                }
            }
            return;
        }
        // Rare: a term with punctuation ("read-only") is matched in place.
        for (i, e) in self.entries.iter().enumerate() {
            if contains_word(&e.hint, term) {
                score[i] += HINT_WORD;
            }
            if contains_word(&e.description, term) {
                score[i] += DESCRIPTION_WORD;
            }
        }
    }
}

/// The same ranking as [`SearchIndex::search`], computed by scanning every
/// tool of the pool for every query: the benchmark's baseline and the
/// tests' oracle.
pub fn search_linear(
    pool: &ToolPool,
    deferral: &Deferral,
    required: &[String],
    optional: &[String],
    max: usize,
) -> Vec<(String, u32)> {
    let mut hits: Vec<(u32, usize, String)> = Vec::new();
    for (i, tool) in pool
        .tools()
        .filter(|t| is_deferred_now(t, pool, deferral))
        .enumerate()
    {
        let name = tool.name().to_lowercase();
        if !required.iter().all(|r| name.contains(r.as_str())) {
            continue;
        }
        let parts = name_parts(tool.name());
        let mcp = tool.def().is_mcp();
        let hint = tool.def().search_hint_text().unwrap_or("").to_lowercase();
        let description = tool.def().description().to_lowercase();
        let mut score = 0;
        for term in Query::scoring_terms(required, optional) {
            if parts.iter().any(|p| p == term) {
                score += if mcp { EXACT_PART_MCP } else { EXACT_PART };
            } else if parts.iter().any(|p| p.contains(term.as_str())) {
                score += if mcp { PARTIAL_PART_MCP } else { PARTIAL_PART };
            } else if name.contains(term.as_str()) {
                score += FULL_NAME;
            }
            if contains_word(&hint, term) {
                score += HINT_WORD;
            }
            if contains_word(&description, term) {
                score += DESCRIPTION_WORD;
            }
        }
        if score > 0 || !required.is_empty() {
            hits.push((score, i, tool.name().to_string()));
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    hits.into_iter().take(max).map(|h| (h.2, h.0)).collect()
}
