//! The start of every connection, without I/O: the protocol header (AMQP 1.0 part 2, 2.2),
//! then, when the client asks for it, SASL (part 5, 5.3): this server offers ANONYMOUS (what
//! the Python and JavaScript SDKs use), MSSBCBS (.NET) and PLAIN, and takes any credentials
//! (the endpoint is for local development); then the AMQP header. Bytes in, bytes out: the
//! driver reads into a buffer, calls [`Greeting::on_bytes`], and writes [`Greeting::out`].
use crate::frame::{self, FRAME_SASL};
use bytes::{Buf, BytesMut};
use fe2o3_amqp_types::primitives::{Array, Symbol};
use fe2o3_amqp_types::sasl::{SaslCode, SaslInit, SaslMechanisms, SaslOutcome};

/// The largest SASL frame read: an init carries a mechanism and a short response.
pub const MAX_SASL_FRAME: u32 = frame::MIN_MAX_FRAME_SIZE * 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The first protocol header: AMQP, or SASL first.
    Header,
    /// After the mechanisms: the client's sasl-init.
    SaslInit,
    /// After the outcome: the AMQP header.
    AmqpHeader,
    Done,
    Refused,
}

/// Where the greeting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Greeted {
    /// More bytes are needed.
    More,
    /// The AMQP header was exchanged: frames follow.
    Done,
    /// The client is not one this server can go on with; it has been told where the
    /// protocol allows (what is in `out`), and the connection ends.
    Refused,
}

#[derive(Debug)]
pub struct Greeting {
    state: State,
    /// Bytes to write to the client.
    pub out: Vec<u8>,
}

impl Default for Greeting {
    fn default() -> Self {
        Greeting {
            state: State::Header,
            out: Vec::new(),
        }
    }
}

impl Greeting {
    /// Takes what it needs from the front of `buf` (bytes after the greeting stay there: the
    /// first frames may come in the same read).
    pub fn on_bytes(&mut self, buf: &mut BytesMut) -> Greeted {
        loop {
            match self.state {
                State::Done => return Greeted::Done,
                State::Refused => return Greeted::Refused,
                State::Header | State::AmqpHeader => {
                    if buf.len() < 8 {
                        return Greeted::More;
                    }
                    let header: [u8; 8] = buf[..8].try_into().unwrap_or_default();
                    buf.advance(8);
                    if self.state == State::Header && header == frame::SASL_HEADER {
                        let mechanisms = SaslMechanisms {
                            sasl_server_mechanisms: Array(vec![
                                Symbol::from("ANONYMOUS"),
                                Symbol::from("MSSBCBS"),
                                Symbol::from("PLAIN"),
                            ]),
                        };
                        self.out.extend_from_slice(&frame::SASL_HEADER);
                        self.out
                            .extend(frame::encode(FRAME_SASL, 0, &mechanisms, &[]));
                        self.state = State::SaslInit;
                        continue;
                    }
                    // The header this server speaks; for any other, the connection then ends.
                    self.out.extend_from_slice(&frame::AMQP_HEADER);
                    self.state = if header == frame::AMQP_HEADER {
                        State::Done
                    } else {
                        State::Refused
                    };
                }
                State::SaslInit => {
                    let init = match frame::parse(buf, MAX_SASL_FRAME) {
                        Ok(None) => return Greeted::More,
                        Ok(Some(f)) if f.kind == FRAME_SASL => {
                            frame::decode_sasl::<SaslInit>(&f.body).is_ok()
                        }
                        _ => false,
                    };
                    let outcome = SaslOutcome {
                        code: if init { SaslCode::Ok } else { SaslCode::Auth },
                        additional_data: None,
                    };
                    self.out.extend(frame::encode(FRAME_SASL, 0, &outcome, &[]));
                    self.state = if init {
                        State::AmqpHeader
                    } else {
                        State::Refused
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fe2o3_amqp_types::primitives::Binary;

    fn sasl_init() -> Vec<u8> {
        let init = SaslInit {
            mechanism: Symbol::from("ANONYMOUS"),
            initial_response: Some(Binary::from(vec![])),
            hostname: None,
        };
        frame::encode(FRAME_SASL, 0, &init, &[])
    }

    #[test]
    fn sasl_then_amqp_in_pieces_and_the_first_frame_left_in_the_buffer() {
        let mut g = Greeting::default();
        let mut buf = BytesMut::from(&frame::SASL_HEADER[..4]);
        assert_eq!(g.on_bytes(&mut buf), Greeted::More);
        buf.extend_from_slice(&frame::SASL_HEADER[4..]);
        assert_eq!(g.on_bytes(&mut buf), Greeted::More);
        assert!(g.out.starts_with(&frame::SASL_HEADER));
        let offered = String::from_utf8_lossy(&g.out).to_string();
        for m in ["ANONYMOUS", "MSSBCBS", "PLAIN"] {
            assert!(offered.contains(m), "{m}");
        }
        buf.extend_from_slice(&sasl_init());
        buf.extend_from_slice(&frame::AMQP_HEADER);
        buf.extend_from_slice(b"rest");
        assert_eq!(g.on_bytes(&mut buf), Greeted::Done);
        assert!(g.out.ends_with(&frame::AMQP_HEADER));
        assert_eq!(&buf[..], b"rest");
    }

    #[test]
    fn another_protocol_hears_ours_and_a_bad_init_fails_authentication() {
        let mut g = Greeting::default();
        let mut buf = BytesMut::from(&b"GET / HTTP/1.1\r\n"[..]);
        assert_eq!(g.on_bytes(&mut buf), Greeted::Refused);
        assert_eq!(g.out, frame::AMQP_HEADER);
        let mut g = Greeting::default();
        let mut buf = BytesMut::from(&frame::SASL_HEADER[..]);
        buf.extend_from_slice(&[0, 0, 0, 12, 2, 1, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(g.on_bytes(&mut buf), Greeted::Refused);
        // The outcome says auth (code 1) after the mechanisms.
        let mut out = BytesMut::from(&g.out[8..]);
        let _mechanisms = frame::parse(&mut out, 4096).unwrap().unwrap();
        let outcome = frame::parse(&mut out, 4096).unwrap().unwrap();
        let o: SaslOutcome = frame::decode_sasl(&outcome.body).unwrap();
        assert_eq!(o.code, SaslCode::Auth);
    }
}
