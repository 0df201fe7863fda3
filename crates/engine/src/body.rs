//! A message's body: bytes, as the service keeps them. Shown as text when they are UTF-8 (what
//! the SDKs' `body` as a string sends); the size that counts (SEND-04) is the bytes'.
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Body(pub Vec<u8>);

impl Body {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The body as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The bytes in base64 (a body that is not text, in the format and the inspector).
    pub fn base64(&self) -> String {
        STANDARD.encode(&self.0)
    }
}

impl From<&str> for Body {
    fn from(s: &str) -> Body {
        Body(s.as_bytes().to_vec())
    }
}

impl From<String> for Body {
    fn from(s: String) -> Body {
        Body(s.into_bytes())
    }
}

/// In JSON: a string when the bytes are UTF-8, else `{"base64": "..."}`.
impl Serialize for Body {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.text() {
            Some(text) => s.serialize_str(text),
            None => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("base64", &self.base64())?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Body;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("text, or {\"base64\": \"...\"} for bytes")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Body, E> {
                Ok(Body::from(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
                let key = map.next_key::<String>()?;
                if key.as_deref() != Some("base64") {
                    return Err(de::Error::custom("bytes are written {\"base64\": \"...\"}"));
                }
                let text: String = map.next_value()?;
                if map.next_key::<String>()?.is_some() {
                    return Err(de::Error::custom("bytes are written {\"base64\": \"...\"}"));
                }
                STANDARD
                    .decode(text.trim())
                    .map(Body)
                    .map_err(|_| de::Error::custom("the base64 of the body does not read"))
            }
        }
        d.deserialize_any(V)
    }
}
