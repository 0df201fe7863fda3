//! The management API's XML, both ways: a request's body read into a small tree (quick-xml's
//! reader, bounded in bytes, depth and elements, names without their prefixes), and text
//! written with every value escaped (quick-xml's escape).
use quick_xml::events::Event;
use quick_xml::Reader;

/// The largest request body the management API reads.
pub const MAX_BODY: usize = 256 * 1024;
/// The deepest nesting of elements read (an entity description is six deep).
pub const MAX_DEPTH: usize = 32;
/// The most elements one body holds.
pub const MAX_ELEMENTS: usize = 4_096;
/// The most attributes on one element (a description's have one or two).
pub const MAX_ATTRIBUTES: usize = 32;

/// Whether XML 1.0 can carry `c` at all (its `Char` production): a text holding another is
/// refused on the way in, and never written out.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Refuses a text holding a character XML cannot carry.
fn carried(text: &str) -> Result<(), String> {
    match text.chars().find(|c| !is_xml_char(*c)) {
        Some(c) => Err(format!(
            "the character U+{:04X} is not one XML 1.0 carries",
            u32::from(c)
        )),
        None => Ok(()),
    }
}

/// An element: its local name (without a prefix), its attributes (local names), its text and
/// its children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The first element named `name` at any depth (this one included), depth first.
    pub fn find(&self, name: &str) -> Option<&Element> {
        if self.name == name {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(name))
    }

    /// The text of the child named `name`, trimmed; None when it is absent or empty.
    pub fn text_of(&self, name: &str) -> Option<&str> {
        self.child(name)
            .map(|c| c.text.trim())
            .filter(|t| !t.is_empty())
    }

    /// The attribute named `name` (local name: `i:type` is `type`).
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads `bytes` into its root element; what is not well-formed XML, or passes a bound, is
/// refused with the reason.
pub fn parse(bytes: &[u8]) -> Result<Element, String> {
    if bytes.len() > MAX_BODY {
        return Err(format!(
            "the body is {} bytes; the management API reads at most {MAX_BODY}",
            bytes.len()
        ));
    }
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().trim_text(false);
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    let mut elements = 0usize;
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            format!(
                "not well-formed XML at byte {}: {e}",
                reader.error_position()
            )
        })?;
        match event {
            Event::Start(start) | Event::Empty(start) if root.is_some() => {
                let _ = start;
                return Err("more than one root element".into());
            }
            Event::Start(ref start) | Event::Empty(ref start) => {
                elements += 1;
                if elements > MAX_ELEMENTS {
                    return Err(format!("more than {MAX_ELEMENTS} elements"));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(format!("elements nested deeper than {MAX_DEPTH}"));
                }
                let mut element = Element {
                    name: local(start.name().as_ref()),
                    ..Element::default()
                };
                for (i, a) in start.attributes().enumerate() {
                    if i >= MAX_ATTRIBUTES {
                        return Err(format!(
                            "more than {MAX_ATTRIBUTES} attributes on an element"
                        ));
                    }
                    let a = a.map_err(|e| format!("an attribute that is not well-formed: {e}"))?;
                    let value = a
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|e| format!("an attribute's value: {e}"))?;
                    carried(&value)?;
                    element
                        .attributes
                        .push((local(a.key.as_ref()), value.into_owned()));
                }
                if matches!(event, Event::Empty(_)) {
                    close(&mut stack, &mut root, element);
                } else {
                    stack.push(element);
                }
            }
            Event::End(_) => {
                let Some(element) = stack.pop() else {
                    return Err("an end tag without its start".into());
                };
                close(&mut stack, &mut root, element);
            }
            Event::Text(text) => {
                if let Some(top) = stack.last_mut() {
                    let text = text.xml10_content();
                    carried(&text)?;
                    top.text.push_str(&text);
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&entity(&reference.into_inner())?);
                }
            }
            Event::CData(data) => {
                if let Some(top) = stack.last_mut() {
                    let data = data.into_inner();
                    carried(&data)?;
                    top.text.push_str(&data);
                }
            }
            Event::DocType(_) => return Err("a document type declaration is not taken".into()),
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
        }
        buf.clear();
    }
    if !stack.is_empty() {
        return Err("the body ends inside an element".into());
    }
    root.ok_or_else(|| "no element".to_string())
}

/// An element read whole goes to its parent, or is the root.
fn close(stack: &mut [Element], root: &mut Option<Element>, element: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None => *root = Some(element),
    }
}

/// A name without its prefix (`i:type` is `type`).
fn local(name: &str) -> String {
    match name.rsplit_once(':') {
        Some((_, local)) => local.to_string(),
        None => name.to_string(),
    }
}

/// The text a character or predefined entity reference stands for.
fn entity(name: &str) -> Result<String, String> {
    let c = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => {
            let code = name
                .strip_prefix("#x")
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| name.strip_prefix('#').map(str::parse::<u32>))
                .ok_or_else(|| format!("the entity &{name}; is not known"))?
                .map_err(|_| format!("the character reference &{name}; is not a number"))?;
            char::from_u32(code)
                .filter(|c| is_xml_char(*c))
                .ok_or_else(|| format!("&{name}; is not a character XML 1.0 carries"))?
        }
    };
    Ok(c.to_string())
}

/// `text` escaped for an element's text (`<`, `>` and `&`); a character XML cannot carry
/// (from a scenario file, say) written as U+FFFD, so an answer is always well-formed.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    match carriable(text) {
        std::borrow::Cow::Borrowed(t) => quick_xml::escape::partial_escape(t),
        std::borrow::Cow::Owned(t) => quick_xml::escape::partial_escape(&t).into_owned().into(),
    }
}

/// `text` escaped for an attribute's value (quotes too), as [`escape`].
pub fn escape_attribute(text: &str) -> std::borrow::Cow<'_, str> {
    match carriable(text) {
        std::borrow::Cow::Borrowed(t) => quick_xml::escape::escape(t),
        std::borrow::Cow::Owned(t) => quick_xml::escape::escape(&t).into_owned().into(),
    }
}

/// `text` with each character XML cannot carry replaced by U+FFFD.
fn carriable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().all(is_xml_char) {
        std::borrow::Cow::Borrowed(text)
    } else {
        text.chars()
            .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
            .collect::<String>()
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_read_with_its_names_local() {
        let root = parse(
            br#"<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="x" xmlns:i="y"><LockDuration>PT1M</LockDuration><Filter i:type="SqlFilter"><SqlExpression>a &lt; 1 &#x41;</SqlExpression></Filter></QueueDescription></content></entry>"#,
        )
        .expect("read");
        let q = root.find("QueueDescription").expect("the description");
        assert_eq!(q.text_of("LockDuration"), Some("PT1M"));
        let filter = q.child("Filter").expect("a filter");
        assert_eq!(filter.attribute("type"), Some("SqlFilter"));
        assert_eq!(filter.text_of("SqlExpression"), Some("a < 1 A"));
    }

    #[test]
    fn what_xml_cannot_carry_is_never_written() {
        assert_eq!(escape("a\u{0}b<"), "a\u{FFFD}b&lt;");
        assert_eq!(escape_attribute("\"\u{1}"), "&quot;\u{FFFD}");
    }

    #[test]
    fn what_is_not_well_formed_or_past_a_bound_is_refused_with_the_reason() {
        for (body, why) in [
            (b"<a><b></a>".to_vec(), "not well-formed"),
            (b"<a>".to_vec(), "ends inside"),
            (b"".to_vec(), "no element"),
            (b"<a/><b/>".to_vec(), "more than one root"),
            (
                b"<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>".to_vec(),
                "document type",
            ),
            ("<a>".repeat(40).into_bytes(), "nested deeper than 32"),
            (
                format!("<a>{}</a>", "<b/>".repeat(5_000)).into_bytes(),
                "more than 4096 elements",
            ),
            (vec![b' '; MAX_BODY + 1], "at most 262144"),
            (b"<a>&#0;</a>".to_vec(), "not a character XML 1.0 carries"),
            (b"<a>\x01</a>".to_vec(), "U+0001"),
            (
                format!(
                    "<a {}/>",
                    (0..40)
                        .map(|i| format!("a{i}=''"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
                .into_bytes(),
                "more than 32 attributes",
            ),
        ] {
            let e = parse(&body).expect_err("refused");
            assert!(e.contains(why), "{e} should say {why}");
        }
    }
}
