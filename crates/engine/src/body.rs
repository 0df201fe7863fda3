//! A message's body as the service keeps it: its bytes and the AMQP section they came in. The
//! SDKs send `data` by default (a string or bytes as the body); an application can send an
//! `amqp-value` or `amqp-sequence` section instead (Python's `AmqpAnnotatedMessage(value_body=...)`,
//! JavaScript's `bodyType: "value"`, .NET's `AmqpMessageBody.FromValue`), and a receiver gets the
//! same section back. Shown as text when it is text; the size that counts (SEND-04) is the bytes'.
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The AMQP body section a message came in (AMQP 1.0 part 3.2.6-3.2.8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Section {
    /// `data`: the bytes as they are.
    #[default]
    Data,
    /// `amqp-value`: the bytes are the value's AMQP encoding.
    Value,
    /// `amqp-sequence`: the bytes are the AMQP encoding of a list of the sections' lists.
    Sequence,
}

impl Section {
    /// The key a body in this section is written under in a scenario (`data` is written bare).
    fn key(self) -> &'static str {
        match self {
            Section::Data => "base64",
            Section::Value => "amqp_value",
            Section::Sequence => "amqp_sequence",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Body {
    pub bytes: Vec<u8>,
    pub section: Section,
}

impl Body {
    /// A `data` body.
    pub fn data(bytes: Vec<u8>) -> Body {
        Body {
            bytes,
            section: Section::Data,
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.section == Section::Data
    }

    /// The body as text: `data` that is UTF-8, or an `amqp-value` that is a string (its str8 or
    /// str32 encoding, AMQP 1.0 part 1.6.20).
    pub fn text(&self) -> Option<&str> {
        match self.section {
            Section::Data => std::str::from_utf8(&self.bytes).ok(),
            Section::Value => {
                let text = match self.bytes.split_first()? {
                    (0xa1, rest) => {
                        let (len, text) = rest.split_first()?;
                        (usize::from(*len) == text.len()).then_some(text)?
                    }
                    (0xb1, rest) => {
                        let (len, text) = rest.split_at_checked(4)?;
                        let len = u32::from_be_bytes(len.try_into().ok()?);
                        (usize::try_from(len).ok()? == text.len()).then_some(text)?
                    }
                    _ => return None,
                };
                std::str::from_utf8(text).ok()
            }
            Section::Sequence => None,
        }
    }

    /// The body in one line: its text, or `base64:` and its bytes' base64.
    pub fn shown(&self) -> String {
        match self.text() {
            Some(text) => text.to_string(),
            None => format!("base64:{}", self.base64()),
        }
    }

    /// The bytes in base64 (a body that is not text, in the format and the inspector).
    pub fn base64(&self) -> String {
        STANDARD.encode(&self.bytes)
    }
}

impl From<&str> for Body {
    fn from(s: &str) -> Body {
        Body::data(s.as_bytes().to_vec())
    }
}

impl From<String> for Body {
    fn from(s: String) -> Body {
        Body::data(s.into_bytes())
    }
}

/// In JSON: `data` as a string when it is UTF-8, else `{"base64": "..."}`; an `amqp-value` as
/// `{"amqp_value": "..."}` and an `amqp-sequence` as `{"amqp_sequence": "..."}`, the base64 of
/// their AMQP encoding.
impl Serialize for Body {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.section, std::str::from_utf8(&self.bytes)) {
            (Section::Data, Ok(text)) => s.serialize_str(text),
            (section, _) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(section.key(), &self.base64())?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const SHAPE: &str = "a body is text, or {\"base64\": \"...\"} for bytes \
                             ({\"amqp_value\": \"...\"} or {\"amqp_sequence\": \"...\"} for \
                             the AMQP encoding of a value or sequence section)";
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Body;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(SHAPE)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Body, E> {
                Ok(Body::from(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
                let key = map.next_key::<String>()?;
                let section = [Section::Data, Section::Value, Section::Sequence]
                    .into_iter()
                    .find(|s| key.as_deref() == Some(s.key()))
                    .ok_or_else(|| de::Error::custom(SHAPE))?;
                let text: String = map.next_value()?;
                if map.next_key::<String>()?.is_some() {
                    return Err(de::Error::custom(SHAPE));
                }
                let bytes = STANDARD
                    .decode(text.trim())
                    .map_err(|_| de::Error::custom("the base64 of the body does not read"))?;
                Ok(Body { bytes, section })
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_amqp_value_string_reads_as_text_and_other_values_do_not() {
        let value = |bytes: &[u8]| Body {
            bytes: bytes.to_vec(),
            section: Section::Value,
        };
        assert_eq!(value(&[0xa1, 2, b'h', b'i']).text(), Some("hi"));
        assert_eq!(value(&[0xb1, 0, 0, 0, 2, b'h', b'i']).text(), Some("hi"));
        assert_eq!(value(&[0xa1, 3, b'h', b'i']).text(), None);
        assert_eq!(value(&[0x71, 0, 0, 0, 7]).text(), None);
        assert_eq!(value(&[]).text(), None);
    }

    #[test]
    fn each_section_survives_json() {
        for section in [Section::Data, Section::Value, Section::Sequence] {
            for bytes in [b"text".to_vec(), vec![0xa1, 1, b'x'], vec![0, 255]] {
                let body = Body {
                    bytes: bytes.clone(),
                    section,
                };
                let json = serde_json::to_string(&body).unwrap();
                assert_eq!(serde_json::from_str::<Body>(&json).unwrap(), body, "{json}");
            }
        }
        assert!(serde_json::from_str::<Body>(r#"{"amqp": "AA=="}"#).is_err());
    }
}
