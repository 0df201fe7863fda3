//! Errors as typed values with the SDK's names (ServiceBusFailureReason and client exceptions).
use serde::{Deserialize, Serialize};

/// What went wrong, named as the .NET SDK names it: the variant's name is the name (read back
/// regardless of case).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(ascii_case_insensitive)]
pub enum ErrorKind {
    /// RCV-08: the lock lapsed, was lost, or the message was already settled.
    MessageLockLost,
    /// RCV-09, TTL-13: no such deferred message.
    MessageNotFound,
    /// IDLE-04, SEND-04: the entity does not exist (or was auto-deleted).
    MessagingEntityNotFound,
    MessagingEntityAlreadyExists,
    /// SEND-04: the entity is full.
    QuotaExceeded,
    /// SEND-04: 256 KB on Basic/Standard, 100 MB on Premium.
    MessageSizeExceeded,
    /// SEND-04: the broker is busy; a retry can succeed.
    ServerBusy,
    /// A setting outside its limits; the message names the limit.
    ArgumentOutOfRange,
    /// TIER-01 and friends: not available on this tier.
    NotSupported,
    /// A client error: the call is wrong whatever the broker's state (settling a peeked message...).
    InvalidOperation,
    /// SES-04: the session lock lapsed or the session was closed.
    SessionLockLost,
    /// SES-02: another receiver holds the session's lock.
    SessionCannotBeLocked,
    /// SES-02: no session with available messages to accept (a retry can succeed).
    ServiceTimeout,
}

impl ErrorKind {
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn from_name(name: &str) -> Option<ErrorKind> {
        name.parse().ok()
    }

    /// SEND-01: whether a retry of the same call can succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorKind::ServerBusy | ErrorKind::ServiceTimeout)
    }

    /// Client errors are raised by the SDK before anything reaches the broker: no tracking id.
    pub fn is_client_error(self) -> bool {
        matches!(
            self,
            ErrorKind::InvalidOperation | ErrorKind::ArgumentOutOfRange
        )
    }
}

/// A failed operation. SEND-01: broker rejections carry a tracking id and whether a retry can succeed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}: {message}", kind.name())]
pub struct BrokerError {
    pub kind: ErrorKind,
    /// What went wrong, naming the limit or the rule (worded by a catalog).
    pub message: crate::text::Text,
    /// Set on errors the broker returned (not on client errors).
    pub tracking_id: Option<String>,
    pub is_transient: bool,
    /// The setting or field the error is about ("LockDuration", "ForwardTo"...), so a form
    /// can show it next to that field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl BrokerError {
    pub fn new(kind: ErrorKind, message: crate::text::Text) -> Self {
        BrokerError {
            kind,
            message,
            tracking_id: None,
            is_transient: kind.is_transient(),
            field: None,
        }
    }

    /// The same error, naming the field it is about.
    pub fn on_field(mut self, field: &str) -> Self {
        self.field = Some(field.to_string());
        self
    }
}

pub type Result<T> = std::result::Result<T, BrokerError>;

// The message length limit and cutting live with the words (`text`); said here too, where
// errors are made.
pub use crate::text::{clip, MAX_MESSAGE};

/// A value quoted in a message: its first 80 characters or so.
pub fn quote(text: &str) -> String {
    clip(text.to_string(), 80)
}
