//! AMQP 1.0 framing (core spec 2.3): the protocol headers, and frames of a 4-byte size, a data
//! offset, a type (0 AMQP, 1 SASL), a channel and a body that starts with a performative.
//! Reading is bounded: a frame larger than the size agreed is refused before it is read.
use crate::decode::bounded;
use bytes::{Buf, BufMut, BytesMut};
use fe2o3_amqp_types::performatives::Performative;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt};

/// `AMQP 0 1 0 0`: plain AMQP.
pub const AMQP_HEADER: [u8; 8] = *b"AMQP\x00\x01\x00\x00";
/// `AMQP 3 1 0 0`: SASL first.
pub const SASL_HEADER: [u8; 8] = *b"AMQP\x03\x01\x00\x00";
pub const FRAME_AMQP: u8 = 0;
pub const FRAME_SASL: u8 = 1;
/// The smallest max-frame-size a peer may ask for (core spec 2.7.1).
pub const MIN_MAX_FRAME_SIZE: u32 = 512;
/// The largest frame this server takes (and offers in its `open`): 1 MiB, what the SDKs offer.
pub const MAX_FRAME_SIZE: u32 = 1024 * 1024;

/// A frame as read: its type, channel and body (the performative and any payload after it).
#[derive(Debug)]
pub struct RawFrame {
    pub kind: u8,
    pub channel: u16,
    pub body: BytesMut,
}

/// Why a connection cannot go on; said to the client in a `close` where the protocol allows.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("the connection closed")]
    Closed,
    #[error("a frame of {size} bytes is larger than the {max} bytes agreed")]
    TooLarge { size: u32, max: u32 },
    #[error("a frame of {0} bytes is smaller than its 8-byte header")]
    TooSmall(u32),
    #[error("the data offset {0} points outside the frame")]
    BadOffset(u8),
    #[error("the protocol header {0:?} is not AMQP 1.0")]
    BadHeader([u8; 8]),
    #[error("a frame body could not be decoded: {0}")]
    Decode(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads the 8-byte protocol header.
pub async fn read_header<R: AsyncRead + Unpin>(r: &mut R) -> Result<[u8; 8], FrameError> {
    let mut header = [0u8; 8];
    match r.read_exact(&mut header).await {
        Ok(_) => Ok(header),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(FrameError::Closed),
        Err(e) => Err(e.into()),
    }
}

/// Checks a frame header (core spec 2.3.1): its size within `max` and its data offset inside
/// it. Gives the size and where the body starts.
fn check_header(head: &[u8], max: u32) -> Result<(usize, usize), FrameError> {
    let size = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    if size > max {
        return Err(FrameError::TooLarge { size, max });
    }
    if size < 8 {
        return Err(FrameError::TooSmall(size));
    }
    let doff = head[4];
    let offset = u32::from(doff) * 4;
    if offset < 8 || offset > size {
        return Err(FrameError::BadOffset(doff));
    }
    Ok((size as usize, offset as usize))
}

/// Takes one frame of at most `max` bytes from the front of `buf` once it holds all of it
/// (None: more bytes are needed). A frame larger than `max` is refused from its header, before
/// its bytes arrive; the extended header is passed over (2.3.1). An empty body is a heartbeat.
pub fn parse(buf: &mut BytesMut, max: u32) -> Result<Option<RawFrame>, FrameError> {
    if buf.len() < 8 {
        return Ok(None);
    }
    let (size, offset) = check_header(&buf[..8], max)?;
    if buf.len() < size {
        buf.reserve(size - buf.len());
        return Ok(None);
    }
    let mut body = buf.split_to(size);
    let head = body.split_to(8);
    body.advance(offset - 8);
    Ok(Some(RawFrame {
        kind: head[5],
        channel: u16::from_be_bytes([head[6], head[7]]),
        body,
    }))
}

/// Reads one frame of at most `max` bytes from a stream (what a test's client does; the
/// server's driver reads into a buffer and [`parse`]s).
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R, max: u32) -> Result<RawFrame, FrameError> {
    let mut head = [0u8; 8];
    match r.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let (size, _) = check_header(&head, max)?;
    let mut all = BytesMut::zeroed(size);
    all[..8].copy_from_slice(&head);
    match r.read_exact(&mut all[8..]).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    parse(&mut all, max)?.ok_or(FrameError::Closed)
}

/// How many bytes the described list at the start of `body` takes (a performative: a
/// descriptor, then a list), read from its encoding's own lengths; None when it is not one.
/// The performative is then decoded from exactly those bytes: a reader over a slice refuses a
/// length larger than what is there, where a stream reader would first allocate it (a 9-byte
/// frame claiming a 4 GB string).
fn performative_len(body: &[u8]) -> Option<usize> {
    let at = |i: usize| body.get(i).copied();
    let u32_at = |i: usize| {
        body.get(i..i + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if at(0)? != 0x00 {
        return None;
    }
    // The descriptor: smallulong, ulong, ulong0, or a symbol.
    let list = match at(1)? {
        0x53 => 3,
        0x80 => 10,
        0x44 => 2,
        0xa3 => 3 + at(2)? as usize,
        0xb3 => 6 + u32_at(2)?,
        _ => return None,
    };
    let end = match at(list)? {
        0x45 => list + 1,
        0xc0 => list + 2 + at(list + 1)? as usize,
        0xd0 => list + 5 + u32_at(list + 1)?,
        _ => return None,
    };
    (end <= body.len()).then_some(end)
}

/// Splits a frame body into its performative and the payload after it (a transfer's message).
pub fn decode_performative(mut body: BytesMut) -> Result<(Performative, BytesMut), FrameError> {
    let Some(len) = performative_len(&body) else {
        return Err(FrameError::Decode(
            "the frame does not start with a performative".into(),
        ));
    };
    match bounded(&body[..len], serde_amqp::from_slice::<Performative>) {
        Ok(p) => {
            let payload = body.split_off(len);
            Ok((p, payload))
        }
        Err(e) => loose_disposition(&body[..len])
            .map(|d| (Performative::Disposition(d), BytesMut::new()))
            .ok_or_else(|| FrameError::Decode(e.to_string())),
    }
}

/// A disposition whose rejected error carries `info` with string keys (rhea, the JavaScript
/// SDK's AMQP library, writes the dead-letter reason so), read as a plain AMQP value.
fn loose_disposition(body: &[u8]) -> Option<fe2o3_amqp_types::performatives::Disposition> {
    use fe2o3_amqp_types::definitions::{Error, ErrorCondition, Role};
    use fe2o3_amqp_types::messaging::{DeliveryState, Rejected};
    use fe2o3_amqp_types::primitives::{OrderedMap, Symbol, Value};
    use serde_amqp::descriptor::Descriptor;
    let fields = |v: &Value, code: u64| -> Option<Vec<Value>> {
        match v {
            Value::Described(d) if d.descriptor == Descriptor::Code(code) => match &d.value {
                Value::List(l) => Some(l.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Symbol(s)) => Some(s.0.clone()),
        _ => None,
    };
    let value: Value = bounded(body, serde_amqp::from_slice).ok()?;
    let f = fields(&value, 0x15)?;
    let number = |v: Option<&Value>| match v {
        Some(Value::Uint(n)) => Some(*n),
        _ => None,
    };
    let rejected = f.get(4).and_then(|s| fields(s, 0x25))?;
    let error = rejected.first().and_then(|e| fields(e, 0x1d));
    let error = error.map(|e| {
        let mut info = OrderedMap::new();
        if let Some(Value::Map(m)) = e.get(2) {
            for (k, v) in m.iter() {
                if let Some(k) = text(Some(k)) {
                    info.insert(Symbol::from(k), v.clone());
                }
            }
        }
        Error {
            condition: ErrorCondition::Custom(Symbol::from(text(e.first()).unwrap_or_default())),
            description: text(e.get(1)),
            info: Some(Box::new(info)),
        }
    });
    Some(fe2o3_amqp_types::performatives::Disposition {
        role: if matches!(f.first(), Some(Value::Bool(true))) {
            Role::Receiver
        } else {
            Role::Sender
        },
        first: number(f.get(1))?,
        last: number(f.get(2)),
        settled: matches!(f.get(3), Some(Value::Bool(true))),
        state: Some(DeliveryState::Rejected(Rejected { error })),
        batchable: false,
    })
}

/// Decodes a SASL frame body as `T` (the client sends only `sasl-init` and `sasl-response`).
pub fn decode_sasl<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    bounded(body, serde_amqp::from_slice).map_err(|e| FrameError::Decode(e.to_string()))
}

/// One frame's bytes: header, then the encoded `value`, then `payload`.
pub fn encode<T: Serialize>(kind: u8, channel: u16, value: &T, payload: &[u8]) -> Vec<u8> {
    let body = serde_amqp::to_vec(value).unwrap_or_default();
    let size = 8 + body.len() + payload.len();
    let mut out = BytesMut::with_capacity(size);
    out.put_u32(size as u32);
    out.put_u8(2);
    out.put_u8(kind);
    out.put_u16(channel);
    out.put_slice(&body);
    out.put_slice(payload);
    out.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fe2o3_amqp_types::performatives::{Close, Open};

    #[tokio::test]
    async fn a_frame_round_trips_and_an_oversized_one_is_refused_unread() {
        let open = Performative::Open(Open {
            container_id: "c".into(),
            hostname: None,
            max_frame_size: MAX_FRAME_SIZE.into(),
            channel_max: 10.into(),
            idle_time_out: None,
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        });
        let bytes = encode(FRAME_AMQP, 3, &open, b"tail");
        let frame = read_frame(&mut &bytes[..], MAX_FRAME_SIZE).await.unwrap();
        assert_eq!((frame.kind, frame.channel), (FRAME_AMQP, 3));
        let (p, payload) = decode_performative(frame.body).unwrap();
        assert!(matches!(p, Performative::Open(o) if o.container_id == "c"));
        assert_eq!(&payload[..], b"tail");
        let err = read_frame(&mut &bytes[..], 16).await.unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { max: 16, .. }), "{err}");
        let close = encode(
            FRAME_AMQP,
            0,
            &Performative::Close(Close { error: None }),
            &[],
        );
        let mut bad = close.clone();
        bad[4] = 200;
        assert!(matches!(
            read_frame(&mut &bad[..], MAX_FRAME_SIZE).await,
            Err(FrameError::BadOffset(200))
        ));
    }
}
