//! Every error this server says on the wire, as one type: what went wrong, in words that name
//! the limit or the rule, mapped once to the AMQP condition the spec (AMQP 1.0 part 2, 2.8.15
//! to 2.8.18) or the Service Bus SDKs give it. A connection, session or link ends with one, a
//! send or settlement is refused with one.
use fe2o3_amqp_types::definitions::{Error as AmqpError, ErrorCondition};
use fe2o3_amqp_types::primitives::Symbol;
use sbp_engine::{BrokerError, ErrorKind};

#[derive(Debug, Clone, thiserror::Error)]
pub enum Fault {
    /// Bytes that do not decode (or decode deeper than this server reads).
    #[error("{0}")]
    Decode(String),
    /// A frame larger than agreed, or one that does not hold together as a frame.
    #[error("{0}")]
    Framing(String),
    /// A frame the connection's, session's or link's state does not allow.
    #[error("{0}")]
    NotAllowed(String),
    /// A field out of its bounds (a name too long, a message field the engine refuses).
    #[error("{0}")]
    InvalidField(String),
    /// One of this server's bounds (connections, sessions, links, bytes held, time-outs).
    #[error("{0}")]
    ResourceLimit(String),
    /// A delivery larger than the tier's largest message.
    #[error("{0}")]
    MessageSize(String),
    /// A transfer beyond the link credit granted.
    #[error("{0}")]
    TransferLimit(String),
    /// A transfer beyond the session's incoming window.
    #[error("{0}")]
    WindowViolation(String),
    /// A frame naming a handle that is not attached.
    #[error("handle {0} is not attached")]
    UnattachedHandle(u32),
    /// An attach of a handle in use.
    #[error("handle {0} is attached already")]
    HandleInUse(u32),
    /// What the broker refused, with the SDK's error kind.
    #[error("{}", .0.message)]
    Broker(BrokerError),
}

/// The AMQP condition the SDKs map each of the engine's error kinds to (azure-sdk-for-js
/// core-amqp `errors.ts`, .NET `AmqpExceptionHelper`).
pub fn condition(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::MessageLockLost => "com.microsoft:message-lock-lost",
        ErrorKind::MessageNotFound => "com.microsoft:message-not-found",
        ErrorKind::MessagingEntityNotFound => "amqp:not-found",
        ErrorKind::MessagingEntityAlreadyExists => "com.microsoft:entity-already-exists",
        ErrorKind::QuotaExceeded => "amqp:resource-limit-exceeded",
        ErrorKind::MessageSizeExceeded => "amqp:link:message-size-exceeded",
        ErrorKind::ServerBusy => "com.microsoft:server-busy",
        ErrorKind::ArgumentOutOfRange => "com.microsoft:argument-out-of-range",
        ErrorKind::NotSupported => "amqp:not-implemented",
        ErrorKind::InvalidOperation => "amqp:not-allowed",
        ErrorKind::SessionLockLost => "com.microsoft:session-lock-lost",
        ErrorKind::SessionCannotBeLocked => "com.microsoft:session-cannot-be-locked",
        ErrorKind::ServiceTimeout => "com.microsoft:timeout",
    }
}

impl Fault {
    /// The AMQP condition.
    pub fn condition(&self) -> &'static str {
        match self {
            Fault::Decode(_) => "amqp:decode-error",
            Fault::Framing(_) => "amqp:connection:framing-error",
            Fault::NotAllowed(_) => "amqp:not-allowed",
            Fault::InvalidField(_) => "amqp:invalid-field",
            Fault::ResourceLimit(_) => "amqp:resource-limit-exceeded",
            Fault::MessageSize(_) => "amqp:link:message-size-exceeded",
            Fault::TransferLimit(_) => "amqp:link:transfer-limit-exceeded",
            Fault::WindowViolation(_) => "amqp:session:window-violation",
            Fault::UnattachedHandle(_) => "amqp:session:unattached-handle",
            Fault::HandleInUse(_) => "amqp:session:handle-in-use",
            Fault::Broker(e) => condition(e.kind),
        }
    }

    /// As the wire carries it: condition, description and info, all three written (the
    /// Python SDK reads a rejected send's error as `[condition, description, info]` and fails
    /// on a shorter list: `_pyamqp/client.py` `_on_send_complete`).
    pub fn to_amqp(&self) -> AmqpError {
        let description = match self {
            // The JavaScript SDK knows a missing entity by the service's words (core-amqp
            // `translate`: /The messaging entity .* could not be found/).
            Fault::Broker(e) if e.kind == ErrorKind::MessagingEntityNotFound => {
                format!(
                    "The messaging entity named here could not be found: {}",
                    e.message
                )
            }
            other => other.to_string(),
        };
        AmqpError {
            condition: ErrorCondition::Custom(Symbol::from(self.condition())),
            description: Some(description),
            info: Some(Box::default()),
        }
    }
}

impl From<BrokerError> for Fault {
    fn from(e: BrokerError) -> Fault {
        Fault::Broker(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fault_has_its_condition_and_says_its_words() {
        let e = Fault::WindowViolation("more than 8192 transfers".into()).to_amqp();
        assert_eq!(
            e.condition,
            ErrorCondition::Custom(Symbol::from("amqp:session:window-violation"))
        );
        assert_eq!(e.description.as_deref(), Some("more than 8192 transfers"));
        assert!(e.info.is_some(), "all three fields written");
        let missing = BrokerError::new(
            ErrorKind::MessagingEntityNotFound,
            sbp_engine::text!("e-no-entity", path = "nope"),
        );
        let e = Fault::from(missing).to_amqp();
        assert!(e
            .description
            .as_deref()
            .is_some_and(|d| d.starts_with("The messaging entity")));
        assert_eq!(
            Fault::UnattachedHandle(7).condition(),
            "amqp:session:unattached-handle"
        );
    }
}
