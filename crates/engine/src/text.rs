//! Words as data. What the engine and the scenario layer say to a reader is a [`Text`]: a
//! catalog key and its values, never a finished English sentence. A catalog words it: the
//! browser the reader's language (`web/i18n/<lang>.ftl`, fetched, not compiled in), the CLI and
//! the tests English (feature `english`, which compiles `en.ftl` in; the browser leaves it out).
//!
//! The format is the plain subset of Fluent (projectfluent.org): `key = text` lines, `# comment`
//! lines, indented lines continuing the text above, and variables written `{ $name }`. No
//! selectors or functions: a sentence that needs a plural or a choice gets a key of its own. The
//! parser is a few lines instead of a Fluent runtime in the wasm.
use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Something to say: a catalog key and its values, which may be texts themselves ("step 3
/// (receive 1 from orders as r1) failed").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub key: Cow<'static, str>,
    pub args: Vec<(&'static str, Arg)>,
}

/// A value in a [`Text`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Plain(String),
    Text(Text),
}

/// The longest value a text holds (a text among them included): a huge value shows its start
/// only. Names that may be huge are quoted shorter where they are said (`error::quote`).
pub const MAX_ARG: usize = MAX_MESSAGE;

/// The longest error message: one that quotes a huge value shows its start only.
pub const MAX_MESSAGE: usize = 600;

/// `text` cut to at most `max` bytes (on a character boundary), with "…" where it was cut.
pub fn clip(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// `s` with its ASCII and Latin-1 capitals in lower case (`Ä` as `ä`), every other character
/// as it is.
fn folded(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'A'..='Z' | 'À'..='Ö' | 'Ø'..='Þ' => char::from_u32(c as u32 + 32).unwrap_or(c),
            c => c,
        })
        .collect()
}

impl Text {
    pub fn new(key: impl Into<Cow<'static, str>>) -> Text {
        Text {
            key: key.into(),
            args: Vec::new(),
        }
    }

    /// A text from its key and values (what [`text!`] calls).
    #[inline(never)]
    pub fn of(key: &'static str, args: &[(&'static str, &dyn std::fmt::Display)]) -> Text {
        Text {
            key: Cow::Borrowed(key),
            args: args
                .iter()
                .map(|(n, v)| (*n, Arg::from(v.to_string())))
                .collect(),
        }
    }

    /// The value named `name`, if it is plain.
    pub fn plain(&self, name: &str) -> Option<&str> {
        self.args.iter().find_map(|(n, v)| match v {
            Arg::Plain(s) if *n == name => Some(s.as_str()),
            _ => None,
        })
    }

    /// Whether `needle` (ignoring case) is in the text as the current catalog words it, or in
    /// a value it names (an entity, a setting, a rule id: the same in every language).
    /// Case is ignored for ASCII and Latin-1 letters, which write every catalog's language
    /// (English, German, Dutch, Swedish): [`folded`], not `str::to_lowercase`, whose Unicode
    /// tables the browser's wasm would carry.
    pub fn mentions(&self, needle: &str) -> bool {
        let needle = folded(needle);
        fn in_values(t: &Text, needle: &str) -> bool {
            t.args.iter().any(|(_, a)| match a {
                Arg::Plain(s) => folded(s).contains(needle),
                Arg::Text(t) => in_values(t, needle),
            })
        }
        folded(&self.to_string()).contains(&needle) || in_values(self, &needle)
    }

    /// Every key this text and its nested texts use.
    pub fn keys(&self) -> Vec<&str> {
        let mut keys = vec![self.key.as_ref()];
        for (_, a) in &self.args {
            if let Arg::Text(t) = a {
                keys.extend(t.keys());
            }
        }
        keys
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Plain(clip(s, MAX_ARG))
    }
}
impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::from(s.to_string())
    }
}
impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::from(s.as_str())
    }
}
impl From<Text> for Arg {
    fn from(t: Text) -> Arg {
        Arg::Text(t)
    }
}

/// A text that may say nothing (the catalog's `empty` key), for optional clauses.
pub fn optional(t: Option<Text>) -> Text {
    t.unwrap_or_else(|| Text::new("empty"))
}

/// `text!("key", seq = 3, to = name)`: a [`Text`] with its values, each said as it displays
/// (a text among them in the current catalog's words). One call per use, so that the many
/// places that say something stay small in the browser's wasm.
#[macro_export]
macro_rules! text {
    ($key:expr $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::text::Text::of($key, &[$((stringify!($name), &$value as &dyn ::std::fmt::Display)),*])
    };
}

/// English, compiled in: for the CLI, the tests and error values printed with `{}`.
#[cfg(feature = "english")]
pub fn english() -> &'static Catalog {
    static ENGLISH: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    ENGLISH.get_or_init(|| Catalog::parse(ENGLISH_FTL).unwrap_or_default())
}

thread_local! {
    static INSTALLED: std::cell::RefCell<Option<std::rc::Rc<Catalog>>> = const { std::cell::RefCell::new(None) };
}

/// Makes `catalog` the one texts are worded in (the browser installs the reader's language).
pub fn install(catalog: std::rc::Rc<Catalog>) {
    INSTALLED.with(|c| *c.borrow_mut() = Some(catalog));
}

/// The installed catalog, if any.
pub fn installed() -> Option<std::rc::Rc<Catalog>> {
    INSTALLED.with(|c| c.borrow().clone())
}

/// Calls `f` with the catalog texts are worded in: the installed one, else English (feature
/// `english`), else an empty one (texts then show their keys).
pub fn with_current<R>(f: impl FnOnce(&Catalog) -> R) -> R {
    match installed() {
        Some(catalog) => f(&catalog),
        None => {
            #[cfg(feature = "english")]
            return f(english());
            #[cfg(not(feature = "english"))]
            f(&Catalog::default())
        }
    }
}

/// The English catalog's source: the playground's words and the pages' (`web/i18n/pages/`).
#[cfg(feature = "english")]
pub const ENGLISH_FTL: &str = concat!(
    include_str!("../../../web/i18n/en.ftl"),
    "\n",
    include_str!("../../../web/i18n/pages/en.ftl")
);

/// In the installed catalog's words (see [`with_current`]).
impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&with_current(|c| c.text(self)))
    }
}

/// As its words (see `Display`).
impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

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

/// One language's messages by key.
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
                if trimmed.starts_with(['.', '[', '*']) {
                    return Err(format!(
                        "line {}: attributes and variants are Fluent this reader does not support",
                        i + 1
                    ));
                }
                plain_fluent(trimmed).map_err(|e| format!("line {}: {e}", i + 1))?;
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
            plain_fluent(value.trim()).map_err(|e| format!("line {}: {e}", i + 1))?;
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

    /// A text in this catalog's words (a missing key shows as itself).
    pub fn text(&self, t: &Text) -> String {
        let words: Vec<(&str, String)> = t
            .args
            .iter()
            .map(|(n, a)| {
                let v = match a {
                    Arg::Plain(s) => s.clone(),
                    Arg::Text(inner) => self.text(inner),
                };
                (*n, v)
            })
            .collect();
        let args: Vec<(&str, &str)> = words.iter().map(|(n, v)| (*n, v.as_str())).collect();
        self.format(&t.key, &args)
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

/// Whether a line of text holds only the Fluent this reader renders: every `{ }` a variable
/// (`{ $name }`) or a string literal (`{ "" }`). Selectors, terms, functions, message
/// references and nested or unclosed braces are refused, never rendered wrong.
fn plain_fluent(text: &str) -> Result<(), String> {
    // The braces are looked for byte by byte (they are ASCII, so each found is a char boundary):
    // a catalog is read before the first render, and this is most of its reading.
    let brace = |s: &str| s.bytes().position(|b| b == b'{' || b == b'}');
    let mut rest = text;
    while let Some(start) = brace(rest) {
        if rest[start..].starts_with('}') {
            return Err("a \"}\" without its \"{\"".into());
        }
        let Some(end) = brace(&rest[start + 1..]).map(|e| start + 1 + e) else {
            return Err("a \"{\" that is not closed on its line".into());
        };
        if rest[end..].starts_with('{') {
            return Err("a placeable inside a placeable".into());
        }
        let inner = rest[start + 1..end].trim();
        let variable = inner.strip_prefix('$').is_some_and(|name| {
            name.starts_with(|c: char| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
        let literal = inner.len() >= 2
            && inner.starts_with('"')
            && inner.ends_with('"')
            && !inner[1..inner.len() - 1].contains('"');
        if !variable && !literal {
            return Err(format!(
                "\"{{ {inner} }}\" is Fluent this reader does not support (only {{ $name }} and {{ \"text\" }})"
            ));
        }
        rest = &rest[end + 1..];
    }
    Ok(())
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

    /// An expected error's `message_contains` ignores the case of the catalogs' letters
    /// (ASCII and Latin-1: `Ä` as `ä`, `Å` as `å`), and only theirs.
    #[test]
    fn a_mention_ignores_the_case_of_the_catalogs_letters() {
        assert_eq!(
            folded("ÄNDERUNG Åtgärd SessionId ÿ Σ"),
            "änderung åtgärd sessionid ÿ Σ"
        );
        let t = Text::of("e-no-entity", &[("path", &"KÖ-Übersicht")]);
        assert!(t.mentions("kö-übersicht") && t.mentions("KÖ-ÜBERSICHT"));
        assert!(!t.mentions("ko-ubersicht"));
    }

    #[cfg(feature = "english")]
    #[test]
    fn a_long_text_inside_another_is_said_whole_and_a_huge_value_is_cut() {
        let inner = crate::text!("e-copies", copies = 10_000u64, max = 1_000u64);
        let outer = crate::text!(
            "e-forward",
            setting = "ForwardTo",
            target = "x".repeat(100),
            why = inner
        );
        let said = outer.to_string();
        assert!(said.contains("allows at most 1000 (FWD-01)"), "{said}");
        let huge = crate::text!("e-no-entity", path = "y".repeat(10_000));
        assert!(huge.to_string().len() < 1_000);
        assert!(huge.to_string().ends_with("does not exist (IDLE-04)"));
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
    fn fluent_it_does_not_render_is_refused_with_the_line() {
        for bad in [
            "a = { $n ->\n    [one] one\n   *[other] many\n}",
            "a = { NUMBER($n) }",
            "a = { -brand } rocks",
            "a = { other-message }",
            "a = text\n    .title = attribute",
            "a = { $n",
            "a = closed }",
            "a = { { $n } }",
        ] {
            let err = Catalog::parse(bad).unwrap_err();
            assert!(err.contains("line "), "{bad:?}: {err}");
        }
        assert!(Catalog::parse("a = { $n } and { \"\" } { $long-name_2 }").is_ok());
    }

    #[test]
    fn picks_a_supported_language_from_a_browser_tag() {
        assert_eq!(supported("de-AT"), Some("de"));
        assert_eq!(supported("SV_se"), Some("sv"));
        assert_eq!(supported("fr-FR"), None);
    }
}
