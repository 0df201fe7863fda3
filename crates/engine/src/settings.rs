//! Tiers, entity settings, their defaults and limits.
use crate::error::{BrokerError, ErrorKind, Result};
use crate::time::{format_duration, Duration, DAY, HOUR, MAX_VALUE, MINUTE, SECOND};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Tier {
    Basic,
    #[default]
    Standard,
    Premium,
    /// PRO-01: the official local emulator, with its config schema's limits and defaults.
    Emulator,
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Tier::Basic => "Basic",
            Tier::Standard => "Standard",
            Tier::Premium => "Premium",
            Tier::Emulator => "Emulator",
        })
    }
}

impl Tier {
    /// TTL-03, TIER-01: the entity default TTL when none is set, and its maximum.
    pub fn default_ttl(self) -> Duration {
        match self {
            Tier::Basic => BASIC_MAX_TTL,
            Tier::Standard | Tier::Premium => MAX_VALUE,
            // PRO-01: 1 h, also the emulator's maximum.
            Tier::Emulator => HOUR,
        }
    }
    /// TIER-01: Basic has no topics.
    pub fn has_topics(self) -> bool {
        !matches!(self, Tier::Basic)
    }
    /// SEND-04: the largest message.
    pub fn max_message_size(self) -> u64 {
        match self {
            Tier::Premium => 100 * 1024 * 1024,
            Tier::Basic | Tier::Standard | Tier::Emulator => 256 * 1024,
        }
    }
}

/// TTL-03: 14 days on Basic, default and maximum.
pub const BASIC_MAX_TTL: Duration = 14 * DAY;
/// TTL-03: the smallest entity default TTL.
pub const MIN_DEFAULT_TTL: Duration = SECOND;
/// RCV-03.
pub const DEFAULT_LOCK_DURATION: Duration = 30 * SECOND;
pub const MIN_LOCK_DURATION: Duration = 5 * SECOND;
pub const MAX_LOCK_DURATION: Duration = 5 * MINUTE;
/// RCV-07.
pub const DEFAULT_MAX_DELIVERY_COUNT: u32 = 10;
/// IDLE-01.
pub const MIN_AUTO_DELETE_ON_IDLE: Duration = 5 * MINUTE;
/// DUP-01: DuplicateDetectionHistoryTimeWindow, its default (the SDK's administration client)
/// and limits.
pub const DEFAULT_DUPLICATE_WINDOW: Duration = MINUTE;
pub const MIN_DUPLICATE_WINDOW: Duration = 20 * SECOND;
pub const MAX_DUPLICATE_WINDOW: Duration = 7 * DAY;
/// PRO-01: the emulator's config schema: queues and topics, entity default TTL, duplicate
/// window, lock durations (a subscription's from 1 min), MaxDeliveryCount.
pub const EMULATOR_MAX_QUEUES_AND_TOPICS: usize = 50;
pub const EMULATOR_TTL: (Duration, Duration) = (5 * MINUTE, HOUR);
pub const EMULATOR_DUPLICATE_WINDOW: (Duration, Duration) = (5 * SECOND, 5 * MINUTE);
pub const EMULATOR_SUBSCRIPTION_MIN_LOCK: Duration = MINUTE;
pub const EMULATOR_MAX_DELIVERY_COUNT: u32 = 10;
/// PRO-01: the emulator's config schema: at most 50 subscriptions in a topic.
pub const EMULATOR_MAX_SUBSCRIPTIONS: usize = 50;

/// PRO-01: the emulator's config schema names every entity and rule by the pattern
/// `^[A-Za-z0-9]$|^[A-Za-z0-9][\w-\.\/]*[A-Za-z0-9]$`: a letter or digit first and last,
/// letters, digits, `_`, `-`, `.` and `/` between.
pub fn is_emulator_name(name: &str) -> bool {
    let b = name.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/'))
        }
        _ => false,
    }
}
/// The default MaxSizeInMegabytes (1 GB).
pub const DEFAULT_MAX_SIZE_BYTES: u64 = 1024 * 1024 * 1024;

/// The settings of a queue, topic or subscription, under the names the management API uses.
/// Topics use only DefaultMessageTimeToLive, AutoDeleteOnIdle and MaxSizeInBytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntitySettings {
    pub default_message_time_to_live: Duration,
    pub lock_duration: Duration,
    pub max_delivery_count: u32,
    pub dead_lettering_on_message_expiration: bool,
    pub auto_delete_on_idle: Duration,
    pub forward_to: Option<String>,
    pub forward_dead_lettered_messages_to: Option<String>,
    pub max_size_bytes: u64,
    /// DUP-01: queues and topics, chosen at creation.
    pub requires_duplicate_detection: bool,
    pub duplicate_detection_history_time_window: Duration,
    /// SES-01: queues and subscriptions, chosen at creation.
    #[serde(default)]
    pub requires_session: bool,
}

impl EntitySettings {
    /// The defaults of a new entity on `tier` (TTL-03, RCV-03, RCV-07, TTL-11, IDLE-01).
    pub fn defaults(tier: Tier) -> Self {
        let emulator = tier == Tier::Emulator;
        EntitySettings {
            default_message_time_to_live: tier.default_ttl(),
            // PRO-01: the emulator's defaults are its config schema's.
            lock_duration: if emulator {
                MINUTE
            } else {
                DEFAULT_LOCK_DURATION
            },
            max_delivery_count: if emulator {
                3
            } else {
                DEFAULT_MAX_DELIVERY_COUNT
            },
            dead_lettering_on_message_expiration: false,
            auto_delete_on_idle: MAX_VALUE,
            forward_to: None,
            forward_dead_lettered_messages_to: None,
            max_size_bytes: DEFAULT_MAX_SIZE_BYTES,
            requires_duplicate_detection: false,
            duplicate_detection_history_time_window: if emulator {
                20 * SECOND
            } else {
                DEFAULT_DUPLICATE_WINDOW
            },
            requires_session: false,
        }
    }

    /// Checks every limit; the error names the setting and the limit.
    pub fn validate(&self, tier: Tier) -> Result<()> {
        let out_of_range = |field: &str, msg: crate::text::Text| {
            Err(BrokerError::new(ErrorKind::ArgumentOutOfRange, msg).on_field(field))
        };
        let ttl = self.default_message_time_to_live;
        if ttl < MIN_DEFAULT_TTL {
            return out_of_range(
                "DefaultMessageTimeToLive",
                crate::text!("e-ttl-min", ttl = format_duration(ttl)),
            );
        }
        if tier == Tier::Basic && ttl > BASIC_MAX_TTL {
            return out_of_range(
                "DefaultMessageTimeToLive",
                crate::text!("e-ttl-basic-max", ttl = format_duration(ttl)),
            );
        }
        if !(MIN_LOCK_DURATION..=MAX_LOCK_DURATION).contains(&self.lock_duration) {
            return out_of_range(
                "LockDuration",
                crate::text!(
                    "e-lock-duration",
                    value = format_duration(self.lock_duration)
                ),
            );
        }
        if self.max_delivery_count < 1 {
            return out_of_range("MaxDeliveryCount", crate::text!("e-max-delivery-count"));
        }
        if self.auto_delete_on_idle < MIN_AUTO_DELETE_ON_IDLE {
            return out_of_range(
                "AutoDeleteOnIdle",
                crate::text!(
                    "e-auto-delete-min",
                    value = format_duration(self.auto_delete_on_idle)
                ),
            );
        }
        if self.max_size_bytes == 0 {
            return out_of_range("MaxSizeInBytes", crate::text!("e-max-size"));
        }
        let window = self.duplicate_detection_history_time_window;
        if tier != Tier::Emulator
            && !(MIN_DUPLICATE_WINDOW..=MAX_DUPLICATE_WINDOW).contains(&window)
        {
            return out_of_range(
                "DuplicateDetectionHistoryTimeWindow",
                crate::text!("e-dup-window", value = format_duration(window)),
            );
        }
        // TIER-01: Basic has neither sessions nor duplicate detection.
        for (on, field) in [
            (self.requires_session, "RequiresSession"),
            (
                self.requires_duplicate_detection,
                "RequiresDuplicateDetection",
            ),
        ] {
            if on && tier == Tier::Basic {
                return Err(BrokerError::new(
                    ErrorKind::NotSupported,
                    crate::text!("e-basic-feature", field = field),
                )
                .on_field(field));
            }
        }
        // FWD-01: "Autoforwarding isn't supported for session-enabled queues or subscriptions."
        if self.requires_session && self.forward_to.is_some() {
            return Err(BrokerError::new(
                ErrorKind::NotSupported,
                crate::text!("e-forward-session"),
            )
            .on_field("ForwardTo"));
        }
        if tier == Tier::Emulator {
            return self.validate_emulator();
        }
        Ok(())
    }

    /// The settings as the entity keeps and reports them. IDLE-03: with ForwardTo, the service
    /// sets AutoDeleteOnIdle to its maximum (the source is never idle).
    pub fn as_kept(mut self) -> Self {
        if self.forward_to.is_some() {
            self.auto_delete_on_idle = MAX_VALUE;
        }
        self
    }

    /// PRO-01: the emulator's config schema (checked after the limits every tier has).
    fn validate_emulator(&self) -> Result<()> {
        let out = |field: &str, value: Duration, (min, max): (Duration, Duration)| {
            Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                crate::text!(
                    "e-emulator-range",
                    field = field,
                    value = format_duration(value),
                    min = format_duration(min),
                    max = format_duration(max)
                ),
            )
            .on_field(field))
        };
        let ttl = self.default_message_time_to_live;
        if !(EMULATOR_TTL.0..=EMULATOR_TTL.1).contains(&ttl) {
            return out("DefaultMessageTimeToLive", ttl, EMULATOR_TTL);
        }
        let window = self.duplicate_detection_history_time_window;
        if !(EMULATOR_DUPLICATE_WINDOW.0..=EMULATOR_DUPLICATE_WINDOW.1).contains(&window) {
            return out(
                "DuplicateDetectionHistoryTimeWindow",
                window,
                EMULATOR_DUPLICATE_WINDOW,
            );
        }
        if self.max_delivery_count > EMULATOR_MAX_DELIVERY_COUNT {
            return Err(BrokerError::new(
                ErrorKind::ArgumentOutOfRange,
                crate::text!(
                    "e-emulator-max-delivery",
                    value = self.max_delivery_count,
                    max = EMULATOR_MAX_DELIVERY_COUNT
                ),
            )
            .on_field("MaxDeliveryCount"));
        }
        Ok(())
    }
}

crate::deserialize_by_name!(Tier {
    "Basic" => Tier::Basic,
    "Standard" => Tier::Standard,
    "Premium" => Tier::Premium,
    "Emulator" => Tier::Emulator,
});

/// How expiry is enforced (TTL-07, TTL-08).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpiryMode {
    /// Expire at the instant (for teaching).
    #[default]
    Exact,
    /// Lazy: enforced only while a receiver is attached, collected by receive scans or a periodic sweep.
    Realistic,
}

crate::deserialize_by_name!(ExpiryMode {
    "exact" => ExpiryMode::Exact,
    "realistic" => ExpiryMode::Realistic,
});

/// The default period of the background sweep in realistic mode (TTL-08).
pub const DEFAULT_SWEEP_INTERVAL: Duration = 60 * SECOND;
