//! Message catalogs: every word the UI shows, per language, as data (`web/i18n/<lang>.ftl`,
//! fetched by the browser, not compiled in).
//!
//! The format is the plain subset of Fluent (projectfluent.org): `key = text` lines, `# comment`
//! lines, indented lines continuing the text above, and variables written `{ $name }`. No
//! selectors or functions: a sentence that needs a plural or a choice gets a key of its own. The
//! parser is a few lines instead of a Fluent runtime in the wasm.
use std::collections::BTreeMap;

/// The languages the playground speaks, in the picker's order.
pub const LANGUAGES: [(&str, &str); 4] = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("nl", "Nederlands"),
    ("sv", "Svenska"),
];

/// The language of `tag` ("de-AT" -> "de") if the playground speaks it.
pub fn supported(tag: &str) -> Option<&'static str> {
    let primary = tag.split(['-', '_']).next()?.trim().to_ascii_lowercase();
    LANGUAGES
        .iter()
        .map(|(code, _)| *code)
        .find(|code| *code == primary)
}

/// One language's messages by key (a `BTreeMap<String, String>`: the map type the scenario
/// format already uses, so the wasm gets no new map or sort code).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Catalog {
    entries: BTreeMap<String, String>,
}

impl Catalog {
    /// Reads a catalog. A line that is neither a message, a continuation, a comment nor blank,
    /// or a key given twice, is an error naming the line.
    pub fn parse(text: &str) -> Result<Catalog, String> {
        let mut entries: BTreeMap<String, String> = BTreeMap::new();
        let mut last: Option<String> = None;
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                match last.as_ref().and_then(|k| entries.get_mut(k)) {
                    Some(value) => {
                        if !value.is_empty() {
                            value.push(' ');
                        }
                        value.push_str(trimmed);
                    }
                    None => return Err(format!("line {}: text without a key above it", i + 1)),
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                return Err(format!("line {}: expected `key = text`", i + 1));
            };
            let key = key.trim();
            let well_formed = key.starts_with(|c: char| c.is_ascii_alphabetic())
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !well_formed {
                return Err(format!("line {}: \"{key}\" is not a key", i + 1));
            }
            if entries
                .insert(key.to_string(), value.trim().to_string())
                .is_some()
            {
                return Err(format!("line {}: \"{key}\" is given twice", i + 1));
            }
            last = Some(key.to_string());
        }
        Ok(Catalog { entries })
    }

    /// The text of `key`, if the catalog has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    /// The text of `key` with its variables filled in (`{ $seq }` by `("seq", "3")`); the key
    /// itself when the catalog lacks it, so a gap shows instead of vanishing.
    pub fn format(&self, key: &str, args: &[(&str, &str)]) -> String {
        let Some(text) = self.get(key) else {
            return key.to_string();
        };
        fill(text, args)
    }

    /// Every key, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The variables `key`'s text uses, sorted.
    pub fn variables(&self, key: &str) -> Vec<String> {
        let mut vars = Vec::new();
        let mut rest = self.get(key).unwrap_or_default();
        while let Some(start) = rest.find('{') {
            let Some(end) = rest[start..].find('}') else {
                break;
            };
            let inner = rest[start + 1..start + end].trim();
            if let Some(name) = inner.strip_prefix('$') {
                vars.push(name.to_string());
            }
            rest = &rest[start + end + 1..];
        }
        vars.sort();
        vars.dedup();
        vars
    }
}

/// Fills `{ $name }` placeholders (spaces optional) and Fluent's string literals (`{ "" }` keeps
/// the spaces after it at the start of a text); an unknown variable stays as written.
pub fn fill(text: &str, args: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = rest[start + 1..start + end].trim();
        let literal = inner.strip_prefix('"').and_then(|s| s.strip_suffix('"'));
        let value = inner
            .strip_prefix('$')
            .and_then(|name| args.iter().find(|(n, _)| *n == name))
            .map(|(_, v)| *v);
        match (literal, value) {
            (Some(text), _) | (None, Some(text)) => out.push_str(text),
            (None, None) => out.push_str(&rest[start..start + end + 1]),
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_messages_comments_continuations_and_variables() {
        let c = Catalog::parse(
            "# a comment\nplay = Play\nsent = { $seq } enqueued;\n    ExpiresAt { $at }\n\nb-key=x\n",
        )
        .expect("valid");
        assert_eq!(c.get("play"), Some("Play"));
        assert_eq!(
            c.format("sent", &[("seq", "#1"), ("at", "t=30s")]),
            "#1 enqueued; ExpiresAt t=30s"
        );
        assert_eq!(c.variables("sent"), vec!["at", "seq"]);
        assert_eq!(c.format("missing", &[]), "missing");
        assert_eq!(c.keys().collect::<Vec<_>>(), vec!["b-key", "play", "sent"]);
        assert_eq!(fill("{$a} and {b}", &[("a", "1")]), "1 and {b}");
        let lead = Catalog::parse("by = { \"\" } by number").expect("valid");
        assert_eq!(lead.format("by", &[]), " by number");
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(Catalog::parse("no equals sign")
            .unwrap_err()
            .contains("line 1"));
        assert!(Catalog::parse("9x = y").unwrap_err().contains("not a key"));
        assert!(Catalog::parse("a = 1\na = 2")
            .unwrap_err()
            .contains("twice"));
        assert!(Catalog::parse("  lonely").unwrap_err().contains("line 1"));
    }

    #[test]
    fn picks_a_supported_language_from_a_browser_tag() {
        assert_eq!(supported("de-AT"), Some("de"));
        assert_eq!(supported("SV_se"), Some("sv"));
        assert_eq!(supported("fr-FR"), None);
    }
}
