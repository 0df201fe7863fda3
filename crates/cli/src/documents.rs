//! `sbp check` over documentation: the playground links and embeds a Markdown, MDX or HTML page
//! holds (a share link, `?preset=`, `?lesson=`, an iframe's `src`, a
//! `<service-bus-playground>` element's attributes), found by their address's own marks, so
//! one reader serves every format.

/// The documents a folder is searched for.
pub const DOCUMENT_EXTENSIONS: [&str; 5] = ["md", "mdx", "markdown", "html", "htm"];
/// Documents read from one folder at most (a docs site's folder, not a disk).
pub const MAX_DOCUMENTS: usize = 10_000;
/// Playground links taken from one document at most.
pub const MAX_LINKS_PER_DOCUMENT: usize = 1_000;
/// `<service-bus-playground>` tags read from one document at most (prose naming it included).
pub const MAX_ELEMENTS: usize = 10_000;

/// A playground found in a document: where, and what it asks for.
#[derive(Debug)]
pub struct Found {
    /// 1-based line of the document.
    pub line: usize,
    pub target: Target,
}

/// What a playground link or element asks the playground to open.
#[derive(Debug)]
pub enum Target {
    /// A scenario carried by the link itself (`#s=...`): the link's text, decoded when it is
    /// checked (one at a time: a document may hold many large ones).
    Scenario(String),
    /// A preset by name (`?preset=NAME`).
    Preset(String),
    /// A lesson by id (`?lesson=ID`), with the address it was named by (its file is
    /// `lessons/ID.json` beside the page).
    Lesson { id: String, page: String },
    /// A link that is the playground's but cannot be read: why.
    Broken(String),
}

/// Whether `path` names a document `sbp check` reads for links (by its extension).
pub fn is_document(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or(&lower);
    DOCUMENT_EXTENSIONS
        .iter()
        .any(|ext| path.ends_with(&format!(".{ext}")))
}

/// Whether `path` names a Markdown document (its code is not read for links).
pub fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or(&lower);
    [".md", ".mdx", ".markdown"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// Every playground link and element in `text`, in order. In Markdown (`markdown`), code is
/// an example, not an embed: fenced blocks and `inline code` are not read.
pub fn find(text: &str, markdown: bool) -> Vec<Found> {
    let masked;
    let text = if markdown {
        masked = without_code(text);
        masked.as_str()
    } else {
        text
    };
    let elements = elements(text);
    // An element's attributes are read as the element's, not as links of their own (the
    // elements are in order and do not overlap).
    let in_element = |offset: usize| {
        let i = elements.partition_point(|e| e.end <= offset);
        elements.get(i).is_some_and(|e| e.start <= offset)
    };
    let mut at: Vec<(usize, Target)> = Vec::new();
    for (offset, candidate) in candidates(text) {
        if at.len() >= MAX_LINKS_PER_DOCUMENT {
            break;
        }
        if in_element(offset) {
            continue;
        }
        if let Some(target) = target_of(&candidate) {
            at.push((offset, target));
        }
    }
    // `<service-bus-playground>` named in prose, with no attribute, is not an embed.
    for element in elements.iter().filter(|e| !e.attributes.is_empty()) {
        if at.len() >= 2 * MAX_LINKS_PER_DOCUMENT {
            break;
        }
        let get = |name: &str| {
            element
                .attributes
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let site = get("site").or(get("src")).unwrap_or("");
        let target = match (get("scenario"), get("preset"), get("lesson")) {
            (Some(link), _, _) => Target::Scenario(link.to_string()),
            (None, Some(name), _) => Target::Preset(name.to_string()),
            (None, None, Some(id)) => Target::Lesson {
                id: id.to_string(),
                page: site.to_string(),
            },
            (None, None, None) => Target::Broken(
                "<service-bus-playground> names no scenario, preset or lesson".into(),
            ),
        };
        at.push((element.start, target));
    }
    at.sort_by_key(|(offset, _)| *offset);
    at.truncate(MAX_LINKS_PER_DOCUMENT);
    // Lines counted in one pass over the text.
    let (mut line, mut counted) = (1, 0);
    at.into_iter()
        .map(|(offset, target)| {
            line += text.as_bytes()[counted..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            counted = offset;
            Found { line, target }
        })
        .collect()
}

/// `text` with Markdown's code (fenced blocks, `inline code`) blanked out, its newlines kept so
/// that lines and offsets stay where they were.
fn without_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let opens = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        match (fence, opens) {
            (None, Some(f)) => {
                fence = Some(f);
                out.push_str(&blank(line));
            }
            (Some(f), Some(g)) if f == g => {
                fence = None;
                out.push_str(&blank(line));
            }
            (Some(_), _) => out.push_str(&blank(line)),
            (None, None) => {
                // Inline code: between runs of backticks of the same length.
                let mut rest = line;
                while let Some(start) = rest.find('`') {
                    let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
                    let marker = &rest[start..start + ticks];
                    let after = &rest[start + ticks..];
                    match after.find(marker) {
                        Some(end) => {
                            out.push_str(&rest[..start]);
                            out.push_str(&blank(&rest[start..start + ticks + end + ticks]));
                            rest = &after[end + ticks..];
                        }
                        None => {
                            out.push_str(&rest[..start + ticks]);
                            rest = after;
                        }
                    }
                }
                out.push_str(rest);
            }
        }
    }
    out
}

/// Spaces for each byte of `s` but its newlines.
fn blank(s: &str) -> String {
    s.bytes()
        .map(|b| if b == b'\n' { '\n' } else { ' ' })
        .collect()
}

/// The strings of `text` an address could be: runs between the characters no address holds
/// unescaped (space, quotes, angle and round brackets, backticks), with HTML's `&amp;` read.
fn candidates(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    let ends = |c: char| c.is_whitespace() || "\"'<>()`[]{}|\\^".contains(c);
    let mut start = 0;
    let mut out = Vec::new();
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if ends(c) {
            let run = &text[start..i];
            if (run.contains("#s=") || run.contains("preset=") || run.contains("lesson="))
                && run.len() > 3
            {
                out.push((start, run.replace("&amp;", "&")));
            }
            start = i + c.len_utf8();
        }
    }
    out.into_iter()
}

/// The playground target of an address, if it is a playground's: a `#s=` fragment, or a
/// query naming a preset or a lesson.
fn target_of(address: &str) -> Option<Target> {
    let (before, fragment) = match address.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (address, None),
    };
    if let Some(fragment) = fragment.filter(|f| f.split('&').any(|p| p.starts_with("s="))) {
        return Some(Target::Scenario(fragment.to_string()));
    }
    let query = before.split_once('?').map(|(_, q)| q)?;
    let value = |key: &str| {
        query.split('&').find_map(|part| {
            let (k, v) = part.split_once('=')?;
            (k == key).then(|| {
                percent_encoding::percent_decode_str(&v.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            })
        })
    };
    if let Some(name) = value("preset") {
        return Some(Target::Preset(name));
    }
    value("lesson").map(|id| Target::Lesson {
        id,
        page: before.to_string(),
    })
}

/// A `<service-bus-playground ...>` start tag: its span in the text, and its attributes.
struct Element {
    start: usize,
    end: usize,
    attributes: Vec<(String, String)>,
}

/// Each `<service-bus-playground ...>` start tag of `text`: where it starts and ends, and its attributes with
/// their values as written (quoted with " or ', or bare; `&amp;`, `&quot;`, `&#39;` read).
fn elements(text: &str) -> Vec<Element> {
    const TAG: &str = "<service-bus-playground";
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find(TAG).map(|i| from + i) {
        let mut rest = &text[at + TAG.len()..];
        from = at + TAG.len();
        if out.len() >= MAX_ELEMENTS {
            break;
        }
        if !rest.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/') {
            continue;
        }
        let mut attributes = Vec::new();
        loop {
            rest = rest.trim_start();
            // `<`: another tag begins, this one was never closed.
            if rest.is_empty() || rest.starts_with(['>', '<']) || rest.starts_with("/>") {
                break;
            }
            let name_end = rest
                .find(|c: char| c.is_whitespace() || c == '=' || c == '>' || c == '/')
                .unwrap_or(rest.len());
            let name = rest[..name_end].to_string();
            rest = rest[name_end..].trim_start();
            let mut value = String::new();
            if let Some(after) = rest.strip_prefix('=') {
                let (v, remaining) = attribute_value(after.trim_start());
                value = v
                    .replace("&quot;", "\"")
                    .replace("&#39;", "'")
                    .replace("&amp;", "&");
                rest = remaining;
            }
            if name.is_empty() {
                // Not an attribute: a character no name holds; step over it.
                let mut chars = rest.chars();
                chars.next();
                rest = chars.as_str();
                continue;
            }
            attributes.push((name, value));
            if attributes.len() > 64 {
                break;
            }
        }
        let end = text.len() - rest.len();
        // The next tag is looked for after this one: tags do not overlap.
        from = end.max(from);
        out.push(Element {
            start: at,
            end,
            attributes,
        });
    }
    out
}

/// An attribute's value at the start of `after` (what follows `=`), and the text after it:
/// quoted with `"` or `'`, JSX's `{"..."}` (MDX), an expression `{...}`, or bare. A value ends
/// at its closing quote or brace, and at the latest at its line's end: so no value is looked
/// for past a line, and reading a document stays linear in its size however its tags are cut.
fn attribute_value(after: &str) -> (&str, &str) {
    let line_end = |s: &str| s.find('\n').unwrap_or(s.len());
    let quoted = |s: &str, q: char| -> (usize, usize) {
        // (the value's length, where what follows starts)
        let line = line_end(s);
        match s[..line].find(q) {
            Some(i) => (i, i + q.len_utf8()),
            None => (line, line),
        }
    };
    match after.chars().next() {
        Some('{') => {
            let inner = after[1..].trim_start();
            match inner.chars().next() {
                Some(q @ ('"' | '\'' | '`')) => {
                    let body = &inner[1..];
                    let (len, next) = quoted(body, q);
                    let rest = body[next..].trim_start();
                    (&body[..len], rest.strip_prefix('}').unwrap_or(rest))
                }
                _ => {
                    let stop = after.find(['}', '>', '\n']).unwrap_or(after.len());
                    let end = if after[stop..].starts_with('}') {
                        stop + 1
                    } else {
                        stop
                    };
                    (&after[..end], &after[end..])
                }
            }
        }
        Some(q @ ('"' | '\'')) => {
            let body = &after[1..];
            let (len, next) = quoted(body, q);
            (&body[..len], &body[next..])
        }
        _ => {
            let end = after
                .find(|c: char| c.is_whitespace() || c == '>')
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        }
    }
}

/// `lessons/ID.json` beside the page `page` names (a URL, or a path relative to the
/// document's folder); the id must be a lesson's (letters, digits, hyphens).
pub fn lesson_file(page: &str, id: &str) -> Option<String> {
    if !sbp_scenario::lesson::is_slug(id) {
        return None;
    }
    let page = page.split(['?', '#']).next().unwrap_or(page);
    let folder = match page.rfind('/') {
        Some(i) => &page[..=i],
        None => "",
    };
    Some(format!("{folder}lessons/{id}.json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    fn link(name: &str) -> String {
        let scenario = sbp_scenario::presets::preset(name).unwrap().unwrap();
        sbp_scenario::link::encode_link(&sbp_scenario::link::Link::at(scenario, None))
    }

    #[test]
    fn links_in_markdown_html_and_mdx_each_on_its_line() {
        let fragment = link("ttl-expiry-to-dlq");
        let text = format!(
            "# Guide\n\nOpen [the playground](https://example.com/pg/index.html?embed=1#{fragment}).\n\
             <iframe src=\"playground/index.html?embed=1&amp;lang=de&amp;preset=sessions\" title=\"x\"></iframe>\n\
             See ?lesson=ttl-basics and [a section](#intro) and https://example.com/?q=1#top\n\
             <service-bus-playground preset=\"topic-filters\" height=\"400\"></service-bus-playground>\n\
             <service-bus-playground scenario={{\"#{fragment}\"}} />\n"
        );
        let found = find(&text, true);
        let lines: Vec<usize> = found.iter().map(|f| f.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7]);
        assert!(matches!(&found[0].target, Target::Scenario(l)
            if !sbp_scenario::link::decode_link(l).unwrap().scenario.expect.is_empty()));
        assert!(matches!(&found[1].target, Target::Preset(p) if p == "sessions"));
        assert!(matches!(&found[2].target, Target::Lesson { id, .. } if id == "ttl-basics"));
        assert!(matches!(&found[3].target, Target::Preset(p) if p == "topic-filters"));
        assert!(matches!(&found[4].target, Target::Scenario(_)));
    }

    #[test]
    fn a_playground_link_that_cannot_be_read_is_named_broken() {
        let found = find(
            "[x](https://example.com/#s=1jnot-a-scenario)\n<service-bus-playground height=1>",
            false,
        );
        assert_eq!(found.len(), 2);
        assert!(
            matches!(&found[0].target, Target::Scenario(l) if sbp_scenario::link::decode_link(l).is_err())
        );
        assert!(matches!(found[1].target, Target::Broken(_)));
    }

    #[test]
    fn code_in_markdown_is_an_example_and_prose_names_the_element_without_embedding_it() {
        let text = "Use `?preset=NAME` or ``[x](#s=1z...)``.\n\n```html\n<iframe src=\"pg/?preset=x\">\n```\n\
                    The `<service-bus-playground>` element, or <service-bus-playground> itself.\n\
                    <iframe src=\"pg/?preset=sessions\"></iframe>\n";
        let found = find(text, true);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, 7);
        assert!(matches!(&found[0].target, Target::Preset(p) if p == "sessions"));
        // In HTML, the same text is read whole.
        assert_eq!(find(text, false).len(), 4);
    }

    #[test]
    fn a_lesson_file_is_beside_its_page_and_its_id_a_lesson_s() {
        assert_eq!(
            lesson_file("https://e.com/docs/pg/index.html", "ttl-basics").as_deref(),
            Some("https://e.com/docs/pg/lessons/ttl-basics.json")
        );
        assert_eq!(
            lesson_file("pg/", "a").as_deref(),
            Some("pg/lessons/a.json")
        );
        assert_eq!(lesson_file("pg/", "../../etc/passwd"), None);
    }

    proptest::proptest! {
        /// Any text, links and element tags cut anywhere included, is read without a panic,
        /// and every line named is one of the text's.
        #[test]
        fn any_text_is_read_without_a_panic(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex(".{0,12}").unwrap(),
                    proptest::sample::select(vec![
                        "<service-bus-playground", " preset=", "\"", "'", "{\"", "}", ">", "/>",
                        "#s=", "?lesson=", "&amp;", "scenario=", "\n", "é", "=", " ",
                    ]).prop_map(str::to_string),
                ],
                0..40,
            )
        ) {
            let text: String = parts.concat();
            let lines = text.lines().count().max(1);
            for f in find(&text, parts.len() % 2 == 0) {
                proptest::prop_assert!(f.line >= 1 && f.line <= lines + 1);
            }
        }
    }

    /// Tags cut anywhere (a value never closed, an expression never ended), many of them, stay
    /// linear: each value ends at its line's end at the latest, and tags do not overlap.
    #[test]
    fn unterminated_values_end_at_their_line_and_tags_do_not_overlap() {
        let text = "<service-bus-playground a={x\n".repeat(20_000)
            + "<service-bus-playground preset=\"sessions\n"
            + "<service-bus-playground lesson='ttl-basics' scenario=\n";
        // Each tag ends at its own line (its value never closed), none overlaps the next, and
        // no more than MAX_ELEMENTS are read.
        let tags = elements(&text);
        assert_eq!(tags.len(), MAX_ELEMENTS);
        for (i, tag) in tags.iter().enumerate() {
            assert_eq!(tag.start, i * "<service-bus-playground a={x\n".len());
            assert!(tag.end <= tag.start + "<service-bus-playground a={x\n".len());
        }
        assert_eq!(find(&text, false).len(), MAX_LINKS_PER_DOCUMENT);
        let text = "<service-bus-playground preset=\"sessions\n<service-bus-playground lesson='ttl-basics' scenario=\n";
        let found = find(text, false);
        assert!(matches!(&found[0].target, Target::Preset(p) if p == "sessions"));
        assert_eq!(found[1].line, 2);
        assert!(matches!(&found[1].target, Target::Scenario(l) if l.is_empty()));
    }

    #[test]
    fn documents_by_their_extension() {
        assert!(is_document("docs/guide.md"));
        assert!(is_document("https://e.com/Guide.HTML?x=1"));
        assert!(!is_document("scenario.json"));
    }
}
