//! Traffic actors' settings and state: producers and consumer groups (what a scenario starts,
//! with the playground's limits), and what the namespace keeps of each while it runs. The
//! namespace's `traffic` module runs them.
use crate::entity::QueueRef;
use crate::error::{BrokerError, ErrorKind, Result};
use crate::limits::*;
use crate::mode::ReceiveMode;
use crate::time::{format_decimal, format_duration, Duration, Instant, SECOND};
use serde::{Deserialize, Serialize};

/// A burst: `size` extra messages every `every`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    pub every: Duration,
    pub size: u32,
}

/// A spike: the rate is multiplied by `factor` from `from` for `duration`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spike {
    pub from: Instant,
    pub duration: Duration,
    pub factor: f64,
}

/// A producer: sends to `to` at `rate` messages per second, with bursts and a spike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProducerSpec {
    pub name: String,
    pub to: String,
    pub rate: f64,
    pub burst: Option<Burst>,
    pub spike: Option<Spike>,
    pub ttl: Option<Duration>,
    /// MessageIds are `<prefix><n>`, n from 1. Default: the producer's name and "-".
    pub message_id_prefix: Option<String>,
    /// Schedule each message this far ahead (SCH-01) instead of sending it now.
    pub schedule_offset: Option<Duration>,
    pub body_size: Option<u64>,
    /// Stop after this many messages.
    pub max_messages: Option<u64>,
    /// SES-01: spread the messages over this many sessions, round robin (SessionIds
    /// `<name>-s1`...); needed by a session queue.
    #[serde(default)]
    pub sessions: Option<u32>,
}

/// How long a consumer works on a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Processing {
    Fixed(Duration),
    Uniform { min: Duration, max: Duration },
    Exponential { mean: Duration },
}

/// A group of identical consumers (competing receivers) on one queue or subscription.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsumerSpec {
    pub name: String,
    pub from: String,
    pub instances: u32,
    pub mode: ReceiveMode,
    pub processing: Processing,
    /// Shares of messages abandoned, dead-lettered and deferred (the rest are completed).
    pub abandon: f64,
    pub dead_letter: f64,
    pub defer: f64,
    /// The chance a consumer crashes before settling: the lock lapses (RCV-06, RCV-07).
    pub crash: f64,
    /// RCV-04: auto lock renewal up to this long.
    pub max_auto_lock_renewal: Option<Duration>,
    /// RCV-12: recognise a redelivered message by MessageId and complete it without processing.
    pub idempotent: bool,
    /// How long an idle consumer waits before it receives again.
    pub poll_interval: Duration,
    /// How long a crashed consumer takes to come back.
    pub restart_delay: Duration,
}

impl ConsumerSpec {
    /// The defaults: one instance, PeekLock, 1 s of work, everything completed.
    pub fn new(name: &str, from: &str) -> Self {
        ConsumerSpec {
            name: name.into(),
            from: from.into(),
            instances: 1,
            mode: ReceiveMode::PeekLock,
            processing: Processing::Fixed(SECOND),
            abandon: 0.0,
            dead_letter: 0.0,
            defer: 0.0,
            crash: 0.0,
            max_auto_lock_renewal: None,
            idempotent: false,
            poll_interval: SECOND,
            restart_delay: SECOND,
        }
    }
}

impl ProducerSpec {
    pub fn new(name: &str, to: &str, rate: f64) -> Self {
        ProducerSpec {
            name: name.into(),
            to: to.into(),
            rate,
            burst: None,
            spike: None,
            ttl: None,
            message_id_prefix: None,
            schedule_offset: None,
            body_size: None,
            max_messages: None,
            sessions: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Producer {
    pub spec: ProducerSpec,
    pub queue: QueueRef,
    pub active: bool,
    pub generation: u32,
    pub sent: u64,
    /// The exact instant (in fractional milliseconds) of the next message at the rate.
    #[serde(default)]
    pub next_send: f64,
}

/// What one consumer is working on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Work {
    pub seq: u64,
    pub message_id: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConsumerGroup {
    pub spec: ConsumerSpec,
    pub queue: QueueRef,
    /// The receiver of each instance.
    pub receivers: Vec<u32>,
    pub active: bool,
    pub generation: u32,
    pub busy: Vec<Option<Work>>,
    /// RCV-12: MessageIds whose Complete failed after the work was done; they will come again.
    pub lost_after_work: crate::sorted::SortedVec<String>,
}

/// A producer, or a group of consumers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActorKind {
    Producer,
    Consumers,
}

impl ActorKind {
    /// "producer" or "consumers".
    pub fn name(self) -> &'static str {
        match self {
            ActorKind::Producer => "producer",
            ActorKind::Consumers => "consumers",
        }
    }
}

/// What a producer or consumer group is doing, for the UI.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActorView {
    pub name: String,
    pub kind: ActorKind,
    pub entity: String,
    pub active: bool,
    pub summary: crate::text::Text,
}

pub(crate) fn out_of_range(message: crate::text::Text) -> BrokerError {
    BrokerError::new(ErrorKind::ArgumentOutOfRange, message)
}

impl ProducerSpec {
    /// The producer's limits (the playground's, in `limits`); the error names the field.
    pub fn validate(&self) -> Result<()> {
        let rate_ok = |r: f64| r.is_finite() && (0.0..=MAX_RATE).contains(&r);
        if !rate_ok(self.rate) {
            return Err(out_of_range(crate::text!(
                "e-rate",
                rate = format_decimal(self.rate, 3),
                max = format_decimal(MAX_RATE, 0)
            )));
        }
        if self.rate == 0.0 && self.burst.is_none() {
            return Err(out_of_range(crate::text!("e-rate-zero")));
        }
        if let Some(b) = &self.burst {
            if b.every < MIN_BURST_EVERY || b.size == 0 || b.size > MAX_BURST {
                return Err(out_of_range(crate::text!(
                    "e-burst",
                    every = format_duration(MIN_BURST_EVERY),
                    max = MAX_BURST
                )));
            }
        }
        if let Some(s) = &self.spike {
            if !(s.factor >= 0.0 && rate_ok(self.rate * s.factor)) || s.duration < 0 {
                return Err(out_of_range(crate::text!(
                    "e-spike",
                    max = format_decimal(MAX_RATE, 0)
                )));
            }
        }
        if self.ttl.is_some_and(|t| t < 0) || self.schedule_offset.is_some_and(|t| t < 0) {
            return Err(out_of_range(crate::text!("e-producer-negative")));
        }
        if self
            .sessions
            .is_some_and(|n| n == 0 || n > crate::limits::MAX_PRODUCER_SESSIONS)
        {
            return Err(out_of_range(crate::text!(
                "e-producer-sessions",
                max = crate::limits::MAX_PRODUCER_SESSIONS
            )));
        }
        Ok(())
    }
}

impl ConsumerSpec {
    /// The consumer group's limits; the error names the field.
    pub fn validate(&self) -> Result<()> {
        if self.instances == 0 || self.instances > MAX_INSTANCES {
            return Err(out_of_range(crate::text!(
                "e-instances",
                max = MAX_INSTANCES,
                count = self.instances
            )));
        }
        for (name, v) in [
            ("abandon", self.abandon),
            ("dead_letter", self.dead_letter),
            ("defer", self.defer),
            ("crash", self.crash),
        ] {
            check_share(name, v)?;
        }
        if self.abandon + self.dead_letter + self.defer + self.crash > 1.0 + 1e-9 {
            return Err(out_of_range(crate::text!("e-shares")));
        }
        let bad_time = match self.processing {
            Processing::Fixed(d) => d < 0,
            Processing::Uniform { min, max } => min < 0 || max < min,
            Processing::Exponential { mean } => mean <= 0,
        };
        if bad_time {
            return Err(out_of_range(crate::text!("e-processing")));
        }
        if self.poll_interval < MIN_POLL_INTERVAL || self.restart_delay < 0 {
            return Err(out_of_range(crate::text!(
                "e-poll-interval",
                min = format_duration(MIN_POLL_INTERVAL)
            )));
        }
        if self
            .max_auto_lock_renewal
            .is_some_and(|d| !(0..=MAX_AUTO_RENEWAL).contains(&d))
        {
            return Err(out_of_range(crate::text!(
                "e-max-auto-renewal",
                max = format_duration(MAX_AUTO_RENEWAL)
            )));
        }
        Ok(())
    }
}

fn check_share(name: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(out_of_range(crate::text!(
            "e-share",
            name = name,
            value = format_decimal(v, 3)
        )))
    }
}
