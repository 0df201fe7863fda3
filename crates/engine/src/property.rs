//! An application property's value with its AMQP type: what a sender sets, what a receiver reads
//! back, and what SQL filters and correlation filters compare, by type (a string is not a
//! number). The types are those the SDKs carry in application properties: string, int (32 bits),
//! long (64 bits), double, boolean, timestamp, uuid, and null (the .NET SDK's
//! `ServiceBusMessage.ApplicationProperties`; AMQP 1.0 part 1, 1.6).
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// In JSON (the scenario format, the CLI's output), as a sender would write it: a string, a
/// number (an integer that fits 32 bits is an int, a larger one a long; one with a fraction or
/// an exponent a double), `true`/`false`, `null`; and where JSON cannot say the type, an object
/// with one key naming it: `{"long": 5}`, `{"double": 2}`, `{"timestamp":
/// "2026-01-01T00:00:00Z"}`, `{"uuid": "..."}`, `{"int": 5}`, `{"string": "5"}`.
#[derive(Clone, Debug)]
pub enum PropertyValue {
    Null,
    String(String),
    Int(i32),
    Long(i64),
    Double(f64),
    Bool(bool),
    /// Milliseconds since 1970-01-01T00:00:00Z (an AMQP timestamp).
    Timestamp(i64),
    Uuid(u128),
}

impl PropertyValue {
    /// The bytes the value carries: a string's length, 16 for a uuid, 8 for the rest.
    pub fn held_bytes(&self) -> u64 {
        match self {
            PropertyValue::String(s) => s.len() as u64,
            PropertyValue::Uuid(_) => 16,
            _ => 8,
        }
    }
}

/// Equal when of the same type and value (doubles by their bits: a stored state is compared
/// with itself, and NaN equals NaN there).
impl PartialEq for PropertyValue {
    fn eq(&self, other: &Self) -> bool {
        use PropertyValue::*;
        match (self, other) {
            (Null, Null) => true,
            (String(a), String(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Long(a), Long(b)) => a == b,
            (Double(a), Double(b)) => a.to_bits() == b.to_bits(),
            (Bool(a), Bool(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a == b,
            (Uuid(a), Uuid(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for PropertyValue {}

impl PropertyValue {
    /// The type's name as the scenario format and the inspector say it.
    pub fn type_name(&self) -> &'static str {
        match self {
            PropertyValue::Null => "null",
            PropertyValue::String(_) => "string",
            PropertyValue::Int(_) => "int",
            PropertyValue::Long(_) => "long",
            PropertyValue::Double(_) => "double",
            PropertyValue::Bool(_) => "bool",
            PropertyValue::Timestamp(_) => "timestamp",
            PropertyValue::Uuid(_) => "uuid",
        }
    }

    /// The value with its type, as the inspector and the log show it: a string quoted
    /// (`"250"`), a number with its type (`250 (int)`), a timestamp in UTC.
    pub fn described(&self) -> String {
        match self {
            PropertyValue::String(s) => format!("\"{s}\""),
            PropertyValue::Null | PropertyValue::Bool(_) => self.to_string(),
            other => format!("{other} ({})", other.type_name()),
        }
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PropertyValue::String(s) => Some(s),
            _ => None,
        }
    }
}

/// FLT-02, FLT-03, FLT-04: filters and actions name application properties regardless of
/// case; the message keeps each under the name it was sent with. The property named `name`
/// (its exact name first), as the message has it.
fn entry_ignoring_case<'a>(
    properties: &'a std::collections::BTreeMap<String, PropertyValue>,
    name: &str,
) -> Option<(&'a String, &'a PropertyValue)> {
    properties.get_key_value(name).or_else(|| {
        properties
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
    })
}

/// The key of the property named `name`, regardless of case, as the message has it.
pub fn key_ignoring_case(
    properties: &std::collections::BTreeMap<String, PropertyValue>,
    name: &str,
) -> Option<String> {
    entry_ignoring_case(properties, name).map(|(k, _)| k.clone())
}

/// The value of the property named `name`, regardless of case.
pub fn get_ignoring_case<'a>(
    properties: &'a std::collections::BTreeMap<String, PropertyValue>,
    name: &str,
) -> Option<&'a PropertyValue> {
    entry_ignoring_case(properties, name).map(|(_, v)| v)
}

impl From<&str> for PropertyValue {
    fn from(s: &str) -> PropertyValue {
        PropertyValue::String(s.to_string())
    }
}

impl From<String> for PropertyValue {
    fn from(s: String) -> PropertyValue {
        PropertyValue::String(s)
    }
}

/// The value as text, the type left to the caller (a timestamp in UTC).
impl std::fmt::Display for PropertyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PropertyValue::Null => f.write_str("null"),
            PropertyValue::String(s) => f.write_str(s),
            PropertyValue::Int(n) => write!(f, "{n}"),
            PropertyValue::Long(n) => write!(f, "{n}"),
            PropertyValue::Timestamp(ms) => f.write_str(&crate::utc::format_utc(0, *ms)),
            PropertyValue::Double(d) => f.write_str(&crate::time::format_decimal(*d, 6)),
            PropertyValue::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            PropertyValue::Uuid(u) => write!(f, "{}", uuid::Uuid::from_u128(*u).hyphenated()),
        }
    }
}

impl Serialize for PropertyValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = match self {
            PropertyValue::Null => return s.serialize_unit(),
            PropertyValue::String(v) => return s.serialize_str(v),
            PropertyValue::Int(n) => return s.serialize_i32(*n),
            PropertyValue::Bool(b) => return s.serialize_bool(*b),
            // A double that JSON would read back as an integer, or cannot hold, is tagged.
            PropertyValue::Double(d) if d.is_finite() && d.fract() != 0.0 => {
                return s.serialize_f64(*d)
            }
            _ => s.serialize_map(Some(1))?,
        };
        match self {
            PropertyValue::Long(n) => map.serialize_entry("long", n)?,
            PropertyValue::Double(d) if d.is_finite() => map.serialize_entry("double", d)?,
            PropertyValue::Double(d) => map.serialize_entry("double", non_finite(*d))?,
            PropertyValue::Timestamp(ms) => {
                let text = crate::utc::format_utc(0, *ms);
                if text.ends_with('Z') {
                    map.serialize_entry("timestamp", &text)?
                } else {
                    map.serialize_entry("timestamp", ms)?
                }
            }
            other => map.serialize_entry("uuid", &other.to_string())?,
        }
        map.end()
    }
}

/// A double JSON cannot hold, by name.
fn non_finite(d: f64) -> &'static str {
    if d.is_nan() {
        "NaN"
    } else if d > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

impl<'de> Deserialize<'de> for PropertyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = PropertyValue;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, a number, true, false, null or {\"long\"|\"int\"|\"double\"|\"timestamp\"|\"uuid\"|\"string\": value}")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<PropertyValue, E> {
        Ok(PropertyValue::String(v.to_string()))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<PropertyValue, E> {
        Ok(PropertyValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<PropertyValue, E> {
        Ok(i32::try_from(v).map_or(PropertyValue::Long(v), PropertyValue::Int))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<PropertyValue, E> {
        let v = i64::try_from(v).map_err(|_| E::custom("an integer beyond a long"))?;
        self.visit_i64(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<PropertyValue, E> {
        Ok(PropertyValue::Double(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<PropertyValue, E> {
        Ok(PropertyValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<PropertyValue, E> {
        Ok(PropertyValue::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PropertyValue, A::Error> {
        let Some(tag) = map.next_key::<String>()? else {
            return Err(de::Error::custom("an empty object names no type"));
        };
        let value: Scalar = map.next_value()?;
        if map.next_key::<String>()?.is_some() {
            return Err(de::Error::custom("a typed value is an object with one key"));
        }
        typed(&tag, value).map_err(de::Error::custom)
    }
}

/// What a tagged value's one key holds.
enum Scalar {
    Text(String),
    Integer(i64),
    Real(f64),
    Flag(bool),
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string, a number or a boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Integer(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                i64::try_from(v)
                    .map(Scalar::Integer)
                    .map_err(|_| E::custom("an integer beyond a long"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Real(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Flag(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// `{"tag": value}` as a typed value, or what is wrong with it.
fn typed(tag: &str, value: Scalar) -> Result<PropertyValue, String> {
    let wrong = || format!("{{\"{tag}\": ...}} does not hold a value of that type");
    Ok(match (tag, value) {
        ("string", Scalar::Text(s)) => PropertyValue::String(s),
        ("int", Scalar::Integer(n)) => {
            PropertyValue::Int(i32::try_from(n).map_err(|_| "an int is 32 bits".to_string())?)
        }
        ("long", Scalar::Integer(n)) => PropertyValue::Long(n),
        // A long given as text: JSON numbers past 2^53 lose digits in some readers.
        ("long", Scalar::Text(t)) => PropertyValue::Long(t.trim().parse().map_err(|_| wrong())?),
        ("double", Scalar::Integer(n)) => PropertyValue::Double(n as f64),
        ("double", Scalar::Real(d)) => PropertyValue::Double(d),
        ("double", Scalar::Text(t)) => PropertyValue::Double(match t.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            _ => number(&t).ok_or_else(wrong)?,
        }),
        ("bool", Scalar::Flag(b)) => PropertyValue::Bool(b),
        ("timestamp", Scalar::Text(t)) => {
            PropertyValue::Timestamp(crate::utc::parse_start(&t).map_err(|e| e.to_string())?)
        }
        ("timestamp", Scalar::Integer(ms)) => PropertyValue::Timestamp(ms),
        ("uuid", Scalar::Text(t)) => PropertyValue::Uuid(
            uuid::Uuid::try_parse(t.trim())
                .map_err(|_| format!("\"{t}\" is not a uuid"))?
                .as_u128(),
        ),
        ("string" | "int" | "long" | "double" | "bool" | "timestamp" | "uuid", _) => {
            return Err(wrong())
        }
        _ => {
            return Err(format!(
                "\"{tag}\" is not a type (string, int, long, double, bool, timestamp, uuid)"
            ))
        }
    })
}

/// `12`, `-3.5`, `.25`: a decimal number without exponent, read by a few lines of its own (the
/// browser's wasm carries no float parser or printer).
pub fn number(text: &str) -> Option<f64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if (whole.is_empty() && fraction.is_empty())
        || !whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
        || whole.len() + fraction.len() > 18
    {
        return None;
    }
    let mut n: i64 = 0;
    for c in whole.chars().chain(fraction.chars()) {
        n = n * 10 + i64::from(c as u8 - b'0');
    }
    let mut value = n as f64;
    for _ in 0..fraction.len() {
        value /= 10.0;
    }
    Some(if negative { -value } else { value })
}
