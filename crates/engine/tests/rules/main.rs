//! One test (at least) per rule of the rule list (docs/RULES.md), named after its id, in a file
//! per family. They run natively and, through
//! wasm-bindgen-test, for wasm32-unknown-unknown.
use sbp_engine::send_lab::{self, Injected, SendLabSpec, SendStrategy};
use sbp_engine::time::{after, parse_duration, DAY, HOUR, MAX_VALUE, MINUTE, NEVER, SECOND};
use sbp_engine::*;

#[path = "../common/mod.rs"]
mod common;
pub use common::assert_dead_lettered;

pub const R: &str = "r1";

pub fn ns() -> Namespace {
    Namespace::builder().seed(1).build()
}
pub fn settings() -> EntitySettings {
    EntitySettings::defaults(Tier::Standard)
}
pub fn dlq_on_expiry() -> EntitySettings {
    EntitySettings {
        dead_lettering_on_message_expiration: true,
        ..settings()
    }
}
pub fn msg(id: &str, ttl: Option<i64>) -> NewMessage {
    NewMessage {
        message_id: Some(id.into()),
        time_to_live: ttl,
        body: "hello".into(),
        ..Default::default()
    }
}
pub fn recv(ns: &mut Namespace, from: &str, count: u32) -> Vec<MessageView> {
    ns.receive(
        R,
        from,
        ReceiveMode::PeekLock,
        count,
        ReceiveOptions::default(),
    )
    .unwrap()
}
pub fn settle(ns: &mut Namespace, from: &str, seq: u64, s: Settlement) -> Result<(), BrokerError> {
    ns.settle(R, from, seq, s)
}
pub fn kinds(ns: &Namespace, seq: u64) -> Vec<&'static str> {
    ns.log()
        .iter()
        .filter(|e| e.seq == seq)
        .map(|e| e.kind.name())
        .collect()
}
pub fn counts(ns: &Namespace, path: &str) -> Counts {
    ns.entity(path).unwrap().counts(ns.now())
}
pub fn queue(ns: &mut Namespace, name: &str, s: EntitySettings) {
    ns.create_queue(name, s).unwrap();
}

mod dlq;
mod dup;
mod flt;
mod fwd;
mod idle;
mod msg;
mod other;
mod pro;
mod rcv;
mod sch;
mod send;
mod ses;
mod tier;
mod top;
mod ttl;

use ttl::topic_with_sub;
