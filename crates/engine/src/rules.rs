//! The rule ids of docs/RULES.md. Every event names the rule that caused it, so the UI and the CLI can
//! answer "why is this message here?".
use serde::{Deserialize, Serialize};

macro_rules! rules {
    ($( $variant:ident = $id:literal : $summary:literal ),* $(,)?) => {
        /// A rule of docs/RULES.md, by id.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum Rule {
            $( #[serde(rename = $id)] $variant, )*
        }
        impl Rule {
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];
            /// The id as docs/RULES.md writes it, e.g. "TTL-05".
            pub fn id(self) -> &'static str {
                match self { $( Rule::$variant => $id, )* }
            }
            /// One line saying what the rule is.
            pub fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )* }
            }
            pub fn from_id(id: &str) -> Option<Rule> {
                Rule::ALL.iter().copied().find(|r| r.id().eq_ignore_ascii_case(id))
            }
        }
    };
}

rules! {
    Msg01 = "MSG-01": "SequenceNumber is per queue/topic, starts at 1, gap-free and increasing.",
    Msg02 = "MSG-02": "DeliveryCount is 1 on the first locked delivery in .NET; Python, JavaScript and peek show the raw count of failed deliveries (one less).",
    Msg03 = "MSG-03": "TimeSpan.MaxValue means never; nothing overflows with it.",
    Ttl01 = "TTL-01": "At enqueue, ExpiresAt = EnqueuedTime + TimeToLive.",
    Ttl02 = "TTL-02": "The entity's DefaultMessageTimeToLive applies to messages without a TTL and caps longer ones.",
    Ttl03 = "TTL-03": "Defaults: message TTL MaxValue; entity default MaxValue (Basic: 14 days, also its maximum); minimum 1 s.",
    Ttl04 = "TTL-04": "In a subscription the effective TTL is min(message TTL, topic default, subscription default).",
    Ttl05 = "TTL-05": "A scheduled message expires at ScheduledEnqueueTime + TTL (without its own TTL, with the default of the moment it was scheduled: the playground's choice).",
    Ttl06 = "TTL-06": "Past ExpiresAt a message can never be received.",
    Ttl07 = "TTL-07": "Expiry may be lazy: counts and peek may still include expired messages; receive never returns them.",
    Ttl08 = "TTL-08": "Realistic mode: TTL is enforced only while a receiver is attached; expired messages are collected by receive scans or a sweep.",
    Ttl09 = "TTL-09": "Expiry does not touch a locked message; complete succeeds; on abandon or lapse expiry takes effect at once.",
    Ttl10 = "TTL-10": "With its own TTL, ExpiresAt is computed at send; with only the entity default, peek shows MaxValue (.NET; Python shows None).",
    Ttl11 = "TTL-11": "DeadLetteringOnMessageExpiration: expired messages go to the DLQ as TTLExpiredException; otherwise they are dropped.",
    Ttl12 = "TTL-12": "Nothing expires inside a dead-letter queue.",
    Ttl13 = "TTL-13": "A deferred message is not swept; receiving it after expiry dead-letters it (if set) and fails with MessageNotFound (the playground's reading).",
    Ttl14 = "TTL-14": "A very short TTL can expire messages before any receiver sees them.",
    Idle01 = "IDLE-01": "AutoDeleteOnIdle deletes an entity idle that long, with its messages (minimum 5 min; the playground deletes at the very instant: its choice).",
    Idle02 = "IDLE-02": "Idle means no sends, receives, updates, scheduled messages, new rules or peeks (per entity kind).",
    Idle03 = "IDLE-03": "An entity that auto-forwards counts as having a receiver: it is never idle, and its AutoDeleteOnIdle is set to MaxValue.",
    Idle04 = "IDLE-04": "Operations on a deleted entity fail with MessagingEntityNotFound.",
    Send01 = "SEND-01": "Sends are settled: a rejection carries an error code, a tracking id and whether a retry can succeed.",
    Send02 = "SEND-02": "Awaiting each send costs N x (R + S); overlapping sends costs about one round trip per wave.",
    Send03 = "SEND-03": "Fire-and-forget sends pile up in a hidden queue and their failures are never seen.",
    Send04 = "SEND-04": "Rejections: entity not found, quota exceeded, message too large, server busy (retryable).",
    Rcv01 = "RCV-01": "ReceiveAndDelete settles on transfer; a failed transfer loses the message; settling it is a client error.",
    Rcv02 = "RCV-02": "PeekLock locks exclusively: LockedUntil = now + LockDuration, a new LockToken.",
    Rcv03 = "RCV-03": "LockDuration per queue/subscription: default 30 s, minimum 5 s, maximum 5 min.",
    Rcv04 = "RCV-04": "The lock owner can renew: LockedUntil = now + LockDuration; auto renewal up to a maximum duration.",
    Rcv05 = "RCV-05": "Complete removes; Abandon releases and counts a failure; DeadLetter moves to the DLQ; Defer.",
    Rcv06 = "RCV-06": "A released or lapsed lock puts the message back at or near the front of the retrieval order.",
    Rcv07 = "RCV-07": "After MaxDeliveryCount failed deliveries the message moves to the DLQ (MaxDeliveryCountExceeded); that a lost lock or a defer counts is the playground's choice.",
    Rcv08 = "RCV-08": "Settling after the lock lapsed, or twice, fails with MessageLockLost; a dropped connection drops its locks.",
    Rcv09 = "RCV-09": "A deferred message is received only by sequence number; an unknown number fails with MessageNotFound.",
    Rcv10 = "RCV-10": "Locks are volatile: a service/OS update or an entity update can lose them; the playground's faults lose every lock (its choice).",
    Rcv11 = "RCV-11": "Peek never locks and never changes DeliveryCount; a peeked copy of a locked message shows no lock; settling a peeked message is a client error.",
    Rcv12 = "RCV-12": "If Complete fails after the work was done, the message comes again: a duplicate by MessageId.",
    Dlq01 = "DLQ-01": "The DLQ is <entity>/$deadletterqueue; topics have none.",
    Dlq02 = "DLQ-02": "A DLQ can be peeked and received from; dead-lettering a message already in a DLQ fails.",
    Dlq03 = "DLQ-03": "The broker writes TTLExpiredException and MaxDeliveryCountExceeded; reason and description are also application properties.",
    Sch01 = "SCH-01": "A scheduled message is Scheduled until its time; at activation it is enqueued and becomes Active.",
    Top01 = "TOP-01": "A message sent to a topic is copied into every subscription whose rule matches.",
    Tier01 = "TIER-01": "Basic has no topics and TTL at most 14 days.",
    Fwd01 = "FWD-01": "ForwardTo names an existing queue or topic (not a subscription, a DLQ or itself; not on a session entity); a forwarding source cannot be received from (the playground's reading); a forwarded message starts afresh and keeps its EnqueuedSequenceNumber.",
    Fwd02 = "FWD-02": "A chain of forwards stops at 4 hops; a fifth is dead-lettered as MaxTransferHopCountExceeded.",
    Fwd03 = "FWD-03": "With ForwardDeadLetteredMessagesTo, a dead-lettered message goes to that target instead of the DLQ.",
    Dup01 = "DUP-01": "RequiresDuplicateDetection is chosen when a queue or topic is created and cannot be changed; the window is 20 s to 7 days (default 1 min).",
    Dup02 = "DUP-02": "A send whose MessageId was accepted within the window is acknowledged as a success and dropped; scheduled messages count at send.",
    Dup03 = "DUP-03": "The window slides: a MessageId is remembered for the window after its accepted send.",
    Ses01 = "SES-01": "RequiresSession is chosen when a queue or subscription is created and cannot be changed; a message sent to a session queue needs a SessionId (a send without one fails; a topic's copy without one is dead-lettered in the subscription).",
    Ses02 = "SES-02": "A receiver accepts a session (by SessionId, or the next with messages); while it holds the session lock (LockedUntil = now + LockDuration, renewable) no other receiver can.",
    Ses03 = "SES-03": "Within a session, messages are delivered in SequenceNumber order, only to the holder of its lock.",
    Ses04 = "SES-04": "When the session lock lapses or the session is closed, the session is released and the holder's settlements fail with SessionLockLost; a lapse counts a failed delivery for its unsettled messages, closing does not.",
    Ses05 = "SES-05": "Session state: a value per session that its holder gets and sets; it outlives holders.",
    Flt01 = "FLT-01": "A subscription has one or more rules; a new one gets $Default with a TrueFilter. The matching rules without an action give the subscription one copy; each matching rule with an action gives a copy of its own (its rule named). A topic message that no subscription matches is accepted and dropped.",
    Flt02 = "FLT-02": "Correlation filter: every property it sets must be equal: CorrelationId, MessageId, To, ReplyTo, Subject (Label), SessionId, ReplyToSessionId, ContentType, and application properties.",
    Flt03 = "FLT-03": "SQL filter: a SQL-92 subset over system (sys.) and application properties: comparison, AND/OR/NOT, IN, LIKE, IS [NOT] NULL, EXISTS, arithmetic; a missing property makes a comparison unknown, which is no match.",
    Flt04 = "FLT-04": "A rule's SQL action (SET, REMOVE) changes the subscription's copy only.",
    Pro01 = "PRO-01": "The emulator profile follows its config schema: at most 50 queues and topics and 50 subscriptions a topic, names with a letter or digit first and last, entity TTL 5 min..1 h (default 1 h), LockDuration 5 s..5 min (subscriptions from 1 min; default 1 min), MaxDeliveryCount 1..10 (default 3), duplicate window 5 s..5 min (default 20 s).",
}
