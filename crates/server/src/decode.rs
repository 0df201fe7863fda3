//! Every decode of bytes a client sent goes through [`bounded`]: the encoding is first walked
//! without recursion (AMQP 1.0 part 1, 1.6: constructors, descriptors, fixed and variable
//! widths, lists, maps and arrays), and refused when it nests deeper than [`MAX_NESTING`] or a
//! container claims more items than its bytes can hold. Only then does serde_amqp, which
//! recurses once per level, decode it: a value nested 10,000 deep (30 KB) overflowed the
//! stack, which no `catch_unwind` can catch, and an array of 2^32 zero-width elements in 30
//! bytes had the decoder allocate for each. A bound on depth is what serde_json does too (its
//! recursion limit, 128).

/// The deepest nesting taken: a described value, a list, a map or an array each add a level.
/// The SDKs' performatives and messages nest 4 to 6 deep (a transfer's described sections, a
/// map of annotations, a described value inside); an `amqp-value` body of a user's data may
/// nest more, so the bound is well above them and well below what overflows a 2 MiB stack in
/// a debug build (about 300 levels measured).
pub const MAX_NESTING: usize = 64;

/// Why bytes are refused before decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("a value nests deeper than {MAX_NESTING} levels (sbp serve's limit)")]
    TooDeep,
    #[error("a container claims {count} items in {bytes} bytes")]
    TooMany { count: u64, bytes: u64 },
    #[error("the encoding ends inside a value")]
    Truncated,
    #[error("format code 0x{0:02x} is not AMQP 1.0's")]
    BadCode(u8),
    #[error("a descriptor is not a ulong or a symbol")]
    BadDescriptor,
    #[error("a container's size does not match its items")]
    BadSize,
}

/// An open list, map or array: how many items are left in it, where its bytes end, and for an
/// array the constructor every element shares (its described levels and format code).
struct Open {
    left: u64,
    end: usize,
    element: Option<(usize, u8)>,
}

/// Reads bytes from a slice, never past it.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, Refused> {
        let b = *self.bytes.get(self.at).ok_or(Refused::Truncated)?;
        self.at += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> Result<(), Refused> {
        let n = usize::try_from(n).map_err(|_| Refused::Truncated)?;
        let to = self.at.checked_add(n).ok_or(Refused::Truncated)?;
        if to > self.bytes.len() {
            return Err(Refused::Truncated);
        }
        self.at = to;
        Ok(())
    }

    fn u32(&mut self) -> Result<u64, Refused> {
        let b = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or(Refused::Truncated)?;
        self.at += 4;
        Ok(u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
    }

    /// A constructor: any number of descriptors (each a described level), then a format code.
    fn constructor(&mut self) -> Result<(usize, u8), Refused> {
        let mut described = 0;
        loop {
            let code = self.byte()?;
            if code != 0x00 {
                return Ok((described, code));
            }
            // A descriptor is a ulong or a symbol (part 1, 1.5: others are reserved).
            match self.byte()? {
                0x44 => {}
                0x53 => self.skip(1)?,
                0x80 => self.skip(8)?,
                0xa3 => {
                    let n = u64::from(self.byte()?);
                    self.skip(n)?
                }
                0xb3 => {
                    let n = self.u32()?;
                    self.skip(n)?
                }
                _ => return Err(Refused::BadDescriptor),
            }
            described += 1;
        }
    }
}

/// Walks `bytes` (a sequence of encoded values) and says whether a decoder may read them:
/// nesting at most [`MAX_NESTING`], no container claiming more items than it has bytes.
/// Linear in the bytes, with memory in the depth.
pub fn walk(bytes: &[u8]) -> Result<(), Refused> {
    let mut c = Cursor { bytes, at: 0 };
    let mut open: Vec<Open> = Vec::new();
    loop {
        // Close every container whose items are all read; its bytes must end here.
        while let Some(top) = open.last() {
            if top.left > 0 {
                break;
            }
            if c.at != top.end {
                return Err(Refused::BadSize);
            }
            open.pop();
        }
        let element = match open.last_mut() {
            Some(top) => {
                top.left -= 1;
                top.element
            }
            None if c.at == bytes.len() => return Ok(()),
            None => None,
        };
        let (described, code) = match element {
            Some(shared) => shared,
            None => c.constructor()?,
        };
        let depth = open.len() + described;
        if depth > MAX_NESTING {
            return Err(Refused::TooDeep);
        }
        let width = match code >> 4 {
            0x4 if code <= 0x45 => 0,
            0x5 if code <= 0x56 => 1,
            0x6 if code <= 0x61 => 2,
            0x7 if code <= 0x74 => 4,
            0x8 if code <= 0x84 => 8,
            0x9 if code == 0x94 || code == 0x98 => 16,
            0xa | 0xb if matches!(code & 0x0f, 0 | 1 | 3) => {
                let n = if code >> 4 == 0xa {
                    u64::from(c.byte()?)
                } else {
                    c.u32()?
                };
                c.skip(n)?;
                continue;
            }
            _ if matches!(code, 0xc0 | 0xc1 | 0xd0 | 0xd1 | 0xe0 | 0xf0) => {
                if depth + 1 > MAX_NESTING {
                    return Err(Refused::TooDeep);
                }
                // list, map (size, count, items) or array (size, count, one constructor,
                // elements); 8-bit or 32-bit size and count.
                let wide = matches!(code, 0xd0 | 0xd1 | 0xf0);
                let read = |c: &mut Cursor| {
                    if wide {
                        c.u32()
                    } else {
                        c.byte().map(u64::from)
                    }
                };
                let size = read(&mut c)?;
                let end = usize::try_from(size)
                    .ok()
                    .and_then(|s| c.at.checked_add(s))
                    .filter(|e| *e <= bytes.len())
                    .ok_or(Refused::Truncated)?;
                let count = read(&mut c)?;
                let element = if code >= 0xe0 && count > 0 {
                    Some(c.constructor()?)
                } else {
                    None
                };
                // Every item takes at least a byte (an array's zero-width elements too: a
                // decoder would otherwise make 2^32 of them from nothing).
                let room = end.checked_sub(c.at).ok_or(Refused::BadSize)? as u64;
                if count > room {
                    return Err(Refused::TooMany { count, bytes: room });
                }
                open.push(Open {
                    left: count,
                    end,
                    element,
                });
                continue;
            }
            _ => return Err(Refused::BadCode(code)),
        };
        c.skip(width)?;
    }
}

/// Decodes `bytes` with `decode` once [`walk`] takes them; a panic inside the decoder is
/// taken as a decode error too (serde_amqp 0.18 subtracts with overflow on a map8 of size 0,
/// `de.rs`, found by the decoder proptest): bad bytes from a client never end more than their
/// own connection.
pub fn bounded<'a, T>(
    bytes: &'a [u8],
    decode: impl FnOnce(&'a [u8]) -> Result<T, serde_amqp::Error>,
) -> Result<T, serde_amqp::Error> {
    walk(bytes).map_err(|e| serde_amqp::Error::Message(e.to_string()))?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(bytes))).unwrap_or_else(|_| {
        Err(serde_amqp::Error::Message(
            "the decoder failed on these bytes".into(),
        ))
    })
}

/// The attack that once killed the server, as bytes a client sends after the AMQP header: an
/// `open` frame whose properties map `"k"` to a value described `depth` levels deep (3 bytes a
/// level, no serializer involved). The attack tests and `sbp fuzz --amqp` send it.
pub fn nested_open_frame(depth: usize) -> Vec<u8> {
    let mut nested = Vec::with_capacity(depth * 3 + 1);
    for _ in 0..depth {
        nested.extend_from_slice(&[0x00, 0x53, 0x77]);
    }
    nested.push(0x40);
    // properties: a map32 of one pair, the symbol "k" and the nested value.
    let mut props = vec![0xd1];
    props.extend_from_slice(&((nested.len() + 4 + 3) as u32).to_be_bytes());
    props.extend_from_slice(&2u32.to_be_bytes());
    props.extend_from_slice(&[0xa3, 0x01, b'k']);
    props.extend_from_slice(&nested);
    // open: container-id "x", eight nulls, then the properties.
    let mut fields = vec![0xa1, 0x01, b'x'];
    fields.extend_from_slice(&[0x40; 8]);
    fields.extend_from_slice(&props);
    let mut body = vec![0x00, 0x53, 0x10, 0xd0];
    body.extend_from_slice(&((fields.len() + 4) as u32).to_be_bytes());
    body.extend_from_slice(&10u32.to_be_bytes());
    body.extend_from_slice(&fields);
    let mut frame = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&[2, 0, 0, 0]);
    frame.extend_from_slice(&body);
    frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use fe2o3_amqp_types::primitives::Value;

    /// `depth` described values around a null: 3 bytes a level.
    fn nested(depth: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for _ in 0..depth {
            v.extend_from_slice(&[0x00, 0x53, 0x77]);
        }
        v.push(0x40);
        v
    }

    #[test]
    fn nesting_beyond_the_bound_is_refused_before_decoding_and_at_the_bound_decoded() {
        let at_bound = nested(MAX_NESTING);
        let v: Value = bounded(&at_bound, serde_amqp::from_slice).expect("decoded");
        assert!(matches!(v, Value::Described(_)));
        assert_eq!(walk(&nested(MAX_NESTING + 1)), Err(Refused::TooDeep));
        // 10,000 levels: refused by the walk, no stack overflow.
        let e = bounded::<Value>(&nested(10_000), serde_amqp::from_slice).unwrap_err();
        assert!(e.to_string().contains("64 levels"), "{e}");
        // Lists inside lists count as levels too.
        let mut lists = Vec::new();
        for _ in 0..200 {
            lists.extend_from_slice(&[0xd0]);
        }
        assert!(walk(&lists).is_err());
    }

    #[test]
    fn values_the_sdks_send_walk_as_their_encoder_wrote_them() {
        use fe2o3_amqp_types::primitives::{Array, OrderedMap, Symbol, Timestamp, Uuid};
        let mut map = OrderedMap::new();
        map.insert(Value::Symbol(Symbol::from("x-opt-k")), Value::Long(-5));
        map.insert(
            Value::String("ts".into()),
            Value::Timestamp(Timestamp::from_milliseconds(1_700_000_000_000)),
        );
        map.insert(
            Value::String("u".into()),
            Value::Uuid(Uuid::from([7u8; 16])),
        );
        let value = Value::List(vec![
            Value::Map(map),
            Value::Array(Array(vec![Value::Int(1), Value::Int(2)])),
            Value::Array(Array(vec![Value::String("a".repeat(300))])),
            Value::Binary(vec![0u8; 70_000].into()),
            Value::Null,
            Value::Bool(true),
            Value::Double(1.5.into()),
            Value::List(vec![]),
        ]);
        let bytes = serde_amqp::to_vec(&value).expect("encoded");
        walk(&bytes).expect("walked");
        let back: Value = bounded(&bytes, serde_amqp::from_slice).expect("decoded");
        assert_eq!(back, value);
    }

    #[test]
    fn a_container_claiming_more_items_than_bytes_is_refused() {
        // An array8 of 255 nulls in 2 bytes, a list32 of 2^32-1 items in 4.
        assert!(matches!(
            walk(&[0xe0, 0x02, 0xff, 0x40]),
            Err(Refused::TooMany { .. })
        ));
        assert!(matches!(
            walk(&[0xd0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff]),
            Err(Refused::TooMany { .. })
        ));
        assert_eq!(walk(&[0xa1, 0x05, b'a']), Err(Refused::Truncated));
        assert_eq!(walk(&[0x0f]), Err(Refused::BadCode(0x0f)));
    }
}
