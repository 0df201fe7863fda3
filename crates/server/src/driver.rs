//! The thin tokio side of a connection: it owns the socket, reads bytes into a buffer, hands
//! the headers to [`Greeting`] and each frame to the protocol core ([`Connection`]), wakes it
//! when a queue it waits on is touched or its timer is due, and writes what it says, after
//! syncing the journal (`--state`) so that nothing is acknowledged before it is on disk.
use crate::conn::{self, Connection, State};
use crate::error::Fault;
use crate::frame::{self, FRAME_AMQP};
use crate::sasl::{Greeted, Greeting};
use crate::shared::Shared;
use bytes::BytesMut;
use fe2o3_amqp_types::performatives::{Close, Performative};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// How long a refused connection is given to hear why (its headers and SASL, then `open` and
/// `close`): it is closed at the end of it whatever it sent.
pub const REFUSE_TIME: Duration = Duration::from_secs(2);

/// Bytes asked of the socket at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Reads the greeting (headers, SASL) until it is done or refused, writing what it says; the
/// bytes after it stay in `buf`. False when the connection cannot go on.
async fn greet(stream: &mut TcpStream, buf: &mut BytesMut) -> bool {
    let mut greeting = Greeting::default();
    loop {
        let step = greeting.on_bytes(buf);
        if !greeting.out.is_empty() {
            let out = std::mem::take(&mut greeting.out);
            if stream.write_all(&out).await.is_err() {
                return false;
            }
        }
        match step {
            Greeted::Done => return true,
            Greeted::Refused => return false,
            Greeted::More => {}
        }
        // The greeting is small: what is buffered stays under a SASL frame and two headers.
        if buf.len() > crate::sasl::MAX_SASL_FRAME as usize + 16 {
            return false;
        }
        buf.reserve(READ_CHUNK);
        match stream.read_buf(buf).await {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
    }
}

/// Runs a connection from `peer` to its end. The client has the handshake time-out from the
/// accept to its `open` (headers and SASL included); after that the core keeps the idle
/// time-out and the heartbeats. A client that does not read what is written to it within the
/// idle time-out is dropped (a slow reader holds nothing but its own socket).
pub async fn run(mut stream: TcpStream, peer: String, shared: Arc<Shared>) {
    let began = Instant::now();
    let limits = shared.limits;
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let greeted =
        tokio::time::timeout_at(began + limits.handshake, greet(&mut stream, &mut buf)).await;
    if greeted != Ok(true) {
        return;
    }
    let mut c = Connection::new(peer, shared.clone(), began.into_std());
    let wake = c.wake();
    loop {
        // Every whole frame buffered, in order.
        while c.state() != State::Closed {
            match frame::parse(&mut buf, frame::MAX_FRAME_SIZE) {
                Ok(Some(f)) => c.on_frame(std::time::Instant::now(), f),
                Ok(None) => break,
                Err(e) => c.on_frame_error(&e),
            }
        }
        for line in c.take_notes() {
            eprintln!("{line}");
        }
        let out = c.take_output(std::time::Instant::now());
        if !out.is_empty() {
            shared.sync_journal();
            let written = tokio::time::timeout(limits.idle, stream.write_all(&out)).await;
            if !matches!(written, Ok(Ok(()))) {
                break;
            }
        }
        if c.state() == State::Closed {
            break;
        }
        let timer = c
            .next_timeout()
            .map_or(Instant::now() + limits.idle, Instant::from_std);
        buf.reserve(READ_CHUNK);
        tokio::select! {
            read = stream.read_buf(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            _ = wake.notified() => c.on_wake(),
            _ = tokio::time::sleep_until(timer) => c.on_timeout(std::time::Instant::now()),
        }
    }
    if let Some(why) = c.closed_because() {
        eprintln!("{why}");
    }
    c.end();
}

/// Answers a connection the server cannot take: after SASL (if asked) and the AMQP header,
/// an `open` and a `close` carrying `amqp:resource-limit-exceeded` with the limit named; all
/// within [`REFUSE_TIME`].
pub async fn refuse(mut stream: TcpStream, why: String) {
    let answer = async {
        let mut buf = BytesMut::new();
        if !greet(&mut stream, &mut buf).await {
            return;
        }
        let open = conn::our_open(0, None);
        let mut out = frame::encode(FRAME_AMQP, 0, &Performative::Open(open), &[]);
        let close = Close {
            error: Some(Fault::ResourceLimit(why).to_amqp()),
        };
        out.extend(frame::encode(
            FRAME_AMQP,
            0,
            &Performative::Close(close),
            &[],
        ));
        let _ = stream.write_all(&out).await;
    };
    let _ = tokio::time::timeout(REFUSE_TIME, answer).await;
}
