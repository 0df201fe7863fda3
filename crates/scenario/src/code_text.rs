//! Text that enters generated code. A scenario opened from a link is somebody else's text, and
//! the program written from it is run by the reader: no text may leave the comment or the string
//! literal it is put in. Every text goes through one of two functions of its language:
//! `literal` (a double-quoted string literal, every character that could end it or hide code
//! escaped) and `comment` (the text of a line comment, with nothing that ends a line or reorders
//! what the reader sees). The generator never interpolates text into code in any other way.

/// A character that may not appear as itself in generated code: the control characters (C0, C1
/// and DEL: a carriage return ends a comment in all three languages, U+0085 in C#), the line and
/// paragraph separators (they end a comment in JavaScript and C#, and a C# string literal), and
/// the invisible format characters that reorder or hide source text (bidirectional overrides and
/// isolates, zero-width characters, the byte order mark: "Trojan Source", CVE-2021-42574).
pub fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// `s` as a double-quoted C# string literal (a regular one, not verbatim or interpolated): `\`
/// and `"` escaped, every hazard as `\uXXXX` (all hazards are in the BMP).
pub fn csharp_literal(s: &str) -> String {
    escaped(s)
}

/// `s` as a double-quoted Python 3 string literal (not raw, not an f-string): `\`, `"` and every
/// hazard escaped as in C#, which Python reads alike.
pub fn python_literal(s: &str) -> String {
    escaped(s)
}

/// `s` as a double-quoted JavaScript string literal (not a template): `\`, `"` and every hazard
/// escaped; U+2028 and U+2029 too, which older engines read as line ends inside a string.
pub fn javascript_literal(s: &str) -> String {
    escaped(s)
}

/// The three languages' double-quoted literals share this escape syntax (`\\`, `\"`, `\uXXXX`).
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if is_hazard(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` as the text of a line comment (`//` in C# and JavaScript, `#` in Python): every hazard,
/// and so every line end, becomes a space. Line comments end only at a line end in all three.
pub fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if is_hazard(c) { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_holds_every_hazard_escaped() {
        let s = "a\"b\\c\r\n\u{2028}\u{2029}\u{85}\u{202E}\u{0}";
        let lit = csharp_literal(s);
        assert_eq!(
            lit,
            "\"a\\\"b\\\\c\\u000d\\n\\u2028\\u2029\\u0085\\u202e\\u0000\""
        );
        assert!(!lit.chars().any(is_hazard));
        assert_eq!(python_literal(s), lit);
        assert_eq!(javascript_literal(s), lit);
    }

    #[test]
    fn no_character_that_ends_a_line_or_hides_code_survives() {
        let every: String = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
        for (name, out) in [
            ("C#", csharp_literal(&every)),
            ("Python", python_literal(&every)),
            ("JavaScript", javascript_literal(&every)),
            ("comment", comment(&every)),
        ] {
            let bad: Vec<u32> = out
                .chars()
                .filter(|&c| is_hazard(c))
                .map(|c| c as u32)
                .collect();
            assert!(bad.is_empty(), "{name} keeps {bad:x?}");
        }
        for c in [
            '\r', '\n', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}', '\u{202E}',
        ] {
            assert!(is_hazard(c), "{:x}", c as u32);
        }
    }

    #[test]
    fn a_comment_keeps_letters_and_loses_line_ends() {
        assert_eq!(comment("Größe\r\nx\u{2028}y\u{85}z"), "Größe  x y z");
        assert_eq!(comment("kö för obeställbara"), "kö för obeställbara");
    }
}
