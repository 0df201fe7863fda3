//! Markup text, for the parts drawn as one string (the map, the life line, charts, the log):
//! they have no handlers of their own, and one string is far less code than one element at a
//! time. A [`Markup`] is built only by [`markup!`], whose format string is a literal and whose
//! every value is escaped, and by appending other `Markup`; it becomes `Html` only through
//! [`Markup::into_html`], the one raw-HTML sink in the UI (clippy's `disallowed-methods` refuses
//! `from_html_unchecked` anywhere else). Escaping is structural, not remembered at each sink.
use std::fmt::{self, Display, Write};
use yew::Html;

/// Markup text made of literals and escaped values only.
#[derive(Clone, Default, PartialEq)]
pub struct Markup(String);

impl Markup {
    pub fn new() -> Markup {
        Markup(String::new())
    }

    /// Appends `args`: what [`markup!`] makes (its values wrapped in [`Escaped`]).
    #[doc(hidden)]
    pub fn write(&mut self, args: fmt::Arguments) {
        let _ = self.0.write_fmt(args);
    }

    /// Appends markup made elsewhere.
    pub fn push(&mut self, other: &Markup) {
        self.0.push_str(&other.0);
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The markup as a node. Safe: every value in it was escaped by `markup!`.
    pub fn into_html(self) -> Html {
        self.into_shared().to_html()
    }

    /// The markup kept to be drawn again (a clone is a reference count, not a copy).
    pub fn into_shared(self) -> SharedMarkup {
        SharedMarkup(self.0.into())
    }
}

/// Markup kept between renders (the map's drawing while it shows flows).
#[derive(Clone, Default, PartialEq)]
pub struct SharedMarkup(yew::AttrValue);

impl SharedMarkup {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The markup as a node. Safe: every value in it was escaped by `markup!`.
    #[allow(clippy::disallowed_methods)]
    pub fn to_html(&self) -> Html {
        Html::from_html_unchecked(self.0.clone())
    }
}

/// Appends to a [`Markup`]: `markup!(out, "<td class=\"x\">{}</td>", value)`. The format string
/// must be a literal whose holes are `{}` or `{N}` (no captured names, no format specs: checked
/// at compile time), and every value is escaped (`Escaped`).
#[macro_export]
macro_rules! markup {
    ($out:expr, $fmt:literal $(, $arg:expr)* $(,)?) => {{
        const _: () = assert!(
            $crate::markup::only_positional_holes($fmt),
            "markup!: a hole is {{}} or {{N}}; every value is passed as an argument and escaped"
        );
        $out.write(format_args!($fmt $(, $crate::markup::Escaped(&$arg))*))
    }};
}

/// Whether every `{` in `fmt` opens `{}`, `{N}` or is escaped as `{{`: a named hole would
/// capture a variable unescaped.
pub const fn only_positional_holes(fmt: &str) -> bool {
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if i + 1 < b.len() && b[i + 1] == b'{' {
                i += 2;
                continue;
            }
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i >= b.len() || b[i] != b'}' {
                return false;
            }
        }
        i += 1;
    }
    true
}

/// A value written with the five characters XML gives meaning to escaped.
pub struct Escaped<'a, T: ?Sized>(pub &'a T);

impl<T: Display + ?Sized> Display for Escaped<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(EscapeWriter(f), "{}", self.0)
    }
}

struct EscapeWriter<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl Write for EscapeWriter<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut from = 0;
        for (i, c) in s.char_indices() {
            let entity = match c {
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '"' => "&quot;",
                '\'' => "&#39;",
                _ => continue,
            };
            self.0.write_str(&s[from..i])?;
            self.0.write_str(entity)?;
            from = i + 1;
        }
        self.0.write_str(&s[from..])
    }
}

/// Text escaped for markup or an attribute, as a string (the embed snippet the user copies).
pub fn escape(s: &str) -> String {
    Escaped(s).to_string()
}

/// A coordinate for SVG, without core's float formatting (one decimal).
pub fn fmt(v: f64) -> String {
    sbp_engine::time::format_decimal(v, 1)
}

pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// A rule id as `<abbr>` with its summary as the title (the log, a message's history).
pub fn rule_abbr(rule: sbp_engine::Rule) -> Markup {
    let mut out = Markup::new();
    markup!(
        out,
        "<abbr title=\"{}\">{}</abbr>",
        crate::i18n::rule_summary(rule),
        rule.id()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_become_markup() {
        let text = r#"<img src=x onerror="alert('1')"> & more"#;
        let escaped = escape(text);
        assert!(!escaped.contains(['<', '>', '"', '\'']));
        assert_eq!(
            escaped,
            "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt; &amp; more"
        );
    }

    #[test]
    fn every_value_in_markup_is_escaped_and_literals_are_not() {
        let mut out = Markup::new();
        let hostile = "\"><img src=x onerror=alert(1)>";
        markup!(out, "<td title=\"{}\">{}</td>{{}}", hostile, 42);
        assert_eq!(
            out.as_str(),
            "<td title=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">42</td>{}"
        );
        let mut outer = Markup::new();
        markup!(outer, "<tr>");
        outer.push(&out);
        assert!(outer.as_str().starts_with("<tr><td"));
    }

    #[test]
    fn a_named_hole_is_refused() {
        assert!(only_positional_holes("<a>{}</a>{0}{{x}}"));
        assert!(!only_positional_holes("<a>{name}</a>"));
        assert!(!only_positional_holes("{:?}"));
        assert!(!only_positional_holes("{"));
    }

    #[test]
    fn coordinates_and_clipped_labels() {
        assert_eq!(fmt(12.345), "12.3");
        assert_eq!(fmt(-0.04), "0");
        assert_eq!(clip("orders/subscriptions/audit", 8), "orders/…");
        assert_eq!(clip("short", 8), "short");
    }
}
