//! Where an event happened, and the short-TTL warning. The events' words are in the catalogs
//! (`sbp_scenario::words`): the engine logs data.
use crate::event::Event;
use crate::namespace::{queue_path, Namespace};
use crate::time::{format_duration, Duration, SECOND};

/// TTL-14: below this a TTL may expire messages before any receiver sees them.
pub const SHORT_TTL: Duration = 10 * SECOND;

/// TTL-14: a warning for a very short TTL, or None.
pub fn short_ttl_warning(ttl: Duration) -> Option<crate::text::Text> {
    (ttl < SHORT_TTL).then(|| crate::text!("warn-short-ttl", ttl = format_duration(ttl)))
}

impl Namespace {
    /// The path an event is about ("orders/$deadletterqueue"), or "namespace".
    pub fn event_path(&self, e: &Event) -> String {
        if e.entity == u32::MAX {
            "namespace".into()
        } else {
            queue_path(self.entity_name(e.entity), e.dlq)
        }
    }
}
