//! Durations in scenario files: "30s", "5m", "1h 30m", "500ms", "14d", "MaxValue", or milliseconds.
use sbp_engine::time::{format_duration, parse_duration, Duration};
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
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Ms(i64),
            Text(String),
        }
        let text = match Repr::deserialize(d)
            .map_err(|_| serde::de::Error::custom(sbp_engine::text!("s-duration")))?
        {
            Repr::Ms(ms) => ms.to_string(),
            Repr::Text(t) => t,
        };
        parse_duration(&text)
            .map(Dur)
            .map_err(serde::de::Error::custom)
    }
}
