//! Helpers for the parts drawn as markup text (the map, the life line, charts, the log): they
//! have no handlers of their own, and one string is far less code than one element at a time.

/// Text for SVG markup: the five characters XML gives meaning to, escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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
pub fn rule_abbr(rule: sbp_engine::Rule) -> String {
    format!(
        "<abbr title=\"{}\">{}</abbr>",
        escape(&crate::browser::rule_summary(rule)),
        rule.id()
    )
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
    fn coordinates_and_clipped_labels() {
        assert_eq!(fmt(12.345), "12.3");
        assert_eq!(fmt(-0.04), "0");
        assert_eq!(clip("orders/subscriptions/audit", 8), "orders/…");
        assert_eq!(clip("short", 8), "short");
    }
}
