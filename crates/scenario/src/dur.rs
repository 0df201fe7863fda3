//! Durations in scenario files: "30s", "5m", "1h 30m", "500ms", "14d", "MaxValue", "30" (a
//! number as text is seconds), or a JSON number of milliseconds.
use sbp_engine::time::{duration_ms, format_duration, parse_duration, Duration};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub Duration);

impl Dur {
    pub fn ms(self) -> Duration {
        self.0
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Dur {
    /// Milliseconds as a JSON number, or a duration as text ("1h 30m"; "30" is seconds). A visitor, not an untagged
    /// enum: that would bring serde's buffering machinery into the wasm.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Dur;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "{}", sbp_engine::text!("s-duration"))
            }
            fn visit_i64<E: serde::de::Error>(self, ms: i64) -> Result<Dur, E> {
                duration_ms(ms, &ms.to_string()).map(Dur).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, ms: u64) -> Result<Dur, E> {
                self.visit_i64(i64::try_from(ms).unwrap_or(i64::MAX))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Dur, E> {
                parse_duration(text).map(Dur).map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}
