//! # sbp-engine
//!
//! A deterministic, sans-IO simulation of an Azure Service Bus namespace. It never reads a clock
//! and never draws an unseeded random number: time is passed in ([`Namespace::apply`],
//! [`Namespace::advance_to`]), [`Namespace::next_due`] says when the next timer fires, and every
//! state change lands in an append-only [`Event`] log naming the rule (docs/RULES.md) that caused it.
//!
//! ```
//! use sbp_engine::{Namespace, EntitySettings, NewMessage, Tier, time::SECOND};
//! let mut ns = Namespace::builder().tier(Tier::Standard).seed(7).build();
//! let mut settings = EntitySettings::defaults(Tier::Standard);
//! settings.dead_lettering_on_message_expiration = true;
//! ns.create_queue("orders", settings).unwrap();
//! ns.send("orders", NewMessage { time_to_live: Some(10 * SECOND), ..Default::default() }).unwrap();
//! ns.advance_to(10 * SECOND);
//! assert_eq!(ns.entity("orders").unwrap().dlq.len(), 1); // TTL-11
//! ```
pub mod actors;
pub mod body;
pub mod card;
pub mod codec;
pub mod command;
pub mod describe;
pub mod entity;
pub mod error;
pub mod event;
pub mod flow;
pub mod limits;
pub mod message;
pub mod metrics;
pub mod mode;
pub mod namespace;
pub mod pages;
pub mod property;
pub mod rules;
pub mod saved;
pub mod send_lab;
pub mod settings;
pub mod sorted;
pub mod sql;
mod stream;
pub mod text;
pub mod time;
pub mod timer;
pub mod utc;

pub use actors::{ActorKind, ActorView, Burst, ConsumerSpec, Processing, ProducerSpec, Spike};
pub use body::Body;
pub use card::{Card, CardExpiry, CardStatus, SettleKind};
pub use command::{
    Command, Fault, ReceiveMode, ReceiveOptions, Reply, SessionOp, SessionView, Settlement,
};
pub use entity::QueueRef;
pub use entity::{Counts, Entity, EntityKind, Session, SessionLock, Store, SubscriptionRule};
pub use error::{BrokerError, ErrorKind};
pub use event::{Event, EventKind, LockLossCause, SessionEnd};
pub use flow::{Edge, Flow, MapView, Movement, Place, PlaceKind, PlaceView};
pub use message::{MessageState, MessageView, NewMessage, Perspective};
pub use metrics::{Bucket, Metrics};
pub use namespace::{Namespace, NamespaceBuilder};
pub use property::PropertyValue;
pub use rules::Rule;
pub use settings::{EntitySettings, ExpiryMode, Tier};
pub use text::{Arg, Text};
pub use timer::Due;

/// Deserializes a unit enum from its name, as `#[derive(Deserialize)]` would (same names, same
/// "unknown variant" error), through `String`'s deserializer: smaller in the wasm than a
/// derived one.
#[macro_export]
macro_rules! deserialize_by_name {
    ($ty:ty { $($name:literal => $variant:expr),* $(,)? }) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                let name = <String as ::serde::Deserialize>::deserialize(d)?;
                match name.as_str() {
                    $($name => Ok($variant),)*
                    other => Err(::serde::de::Error::unknown_variant(other, &[$($name),*])),
                }
            }
        }
    };
}
