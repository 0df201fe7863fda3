//! A store's messages in pages of 64 SequenceNumbers, each page shared between the copies of the
//! store (copy on write): a copy costs one pointer per page, and a change afterwards copies only
//! the page it touches. A rewind checkpoint of a million stored messages then shares every page
//! the run has not touched since (`sbp_scenario::rewind`); a page's counts by state are computed
//! once per version of the page, not once per message per frame.
//!
//! SequenceNumbers grow by one per entity (MSG-01), so a message's page is its number divided by
//! 64 and the pages are a ring from the lowest stored to the highest: finding a page is an index,
//! taking the first message moves nothing. Why not a persistent map from a crate (`imbl`'s
//! `OrdMap`): its nodes are fixed arrays of 64 slots (a message's 170 bytes in each, filled or
//! not), and its code does not fit the playground's wasm ceiling.
use crate::message::{Message, MessageState};
use crate::time::{Instant, NEVER};
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

/// SequenceNumbers per page.
pub const PAGE: u64 = 64;

/// What a page of a store's messages counts by state, and the ExpiresAt of its receivable ones
/// in order (how many have expired by any instant is then a search).
#[derive(Clone, Debug, Default)]
pub struct PageCounts {
    pub(crate) locked: u64,
    pub(crate) active: u64,
    pub(crate) deferred: u64,
    pub(crate) scheduled: u64,
    pub(crate) expires: Vec<Instant>,
}

impl PageCounts {
    pub(crate) fn of(messages: &[Message]) -> PageCounts {
        let mut c = PageCounts::default();
        for m in messages {
            match (m.state, m.lock.is_some()) {
                (_, true) => c.locked += 1,
                (MessageState::Active, false) => {
                    c.active += 1;
                    if m.expires_at != NEVER {
                        let at = c.expires.partition_point(|&e| e <= m.expires_at);
                        c.expires.insert(at, m.expires_at);
                    }
                }
                (MessageState::Deferred, false) => c.deferred += 1,
                (MessageState::Scheduled, false) => c.scheduled += 1,
            }
        }
        c
    }
}

#[derive(Clone)]
struct Page {
    /// By SequenceNumber, never empty.
    messages: Vec<Message>,
    counts: OnceLock<PageCounts>,
    /// When the page's expiry timer is set for ([`NEVER`]: none): in exact expiry, a page has
    /// one live timer, at its first ExpiresAt, not one per message (see
    /// `Namespace::arm_expiry`).
    expiry_armed: Instant,
}

impl Page {
    fn index(&self, seq: u64) -> Result<usize, usize> {
        self.messages
            .binary_search_by_key(&seq, |m| m.sequence_number)
    }
    fn counts(&self) -> &PageCounts {
        self.counts.get_or_init(|| PageCounts::of(&self.messages))
    }
}

/// The messages of one store by SequenceNumber (see the module's text).
#[derive(Clone, Default)]
pub struct Pages {
    /// Page `first + i` at `i`; the first and the last are never empty.
    pages: VecDeque<Option<Arc<Page>>>,
    first: u64,
    len: usize,
}

/// The messages, as a map by SequenceNumber: two stores with the same messages read the same
/// however they are paged.
impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.values().map(|m| (m.sequence_number, m)))
            .finish()
    }
}

impl Pages {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn page(&self, seq: u64) -> Option<&Arc<Page>> {
        let i = (seq / PAGE).checked_sub(self.first)?;
        self.pages.get(usize::try_from(i).ok()?)?.as_ref()
    }

    /// The page of `seq` for a change: copied if a copy of the store shares it, its counts
    /// forgotten.
    fn page_mut(&mut self, seq: u64) -> Option<&mut Page> {
        let i = usize::try_from((seq / PAGE).checked_sub(self.first)?).ok()?;
        let page = Arc::make_mut(self.pages.get_mut(i)?.as_mut()?);
        page.counts = OnceLock::new();
        Some(page)
    }

    pub fn get(&self, seq: &u64) -> Option<&Message> {
        let page = self.page(*seq)?;
        page.messages.get(page.index(*seq).ok()?)
    }

    pub fn contains_key(&self, seq: &u64) -> bool {
        self.get(seq).is_some()
    }

    pub fn get_mut(&mut self, seq: &u64) -> Option<&mut Message> {
        self.page(*seq)?.index(*seq).ok()?;
        let page = self.page_mut(*seq)?;
        let i = page.index(*seq).ok()?;
        page.messages.get_mut(i)
    }

    /// Stores `m`, and says whether it did: a message already stored under its SequenceNumber is
    /// kept.
    pub fn insert(&mut self, m: Message) -> bool {
        let seq = m.sequence_number;
        let number = seq / PAGE;
        if self.pages.is_empty() {
            self.first = number;
        }
        while number < self.first {
            self.pages.push_front(None);
            self.first -= 1;
        }
        let i = (number - self.first) as usize;
        while self.pages.len() <= i {
            self.pages.push_back(None);
        }
        let Some(slot) = self.pages.get_mut(i) else {
            return false;
        };
        let Some(page) = slot else {
            *slot = Some(Arc::new(Page {
                messages: vec![m],
                counts: OnceLock::new(),
                expiry_armed: NEVER,
            }));
            self.len += 1;
            return true;
        };
        let page = Arc::make_mut(page);
        match page.index(seq) {
            Ok(_) => false,
            Err(at) => {
                page.counts = OnceLock::new();
                page.messages.insert(at, m);
                self.len += 1;
                true
            }
        }
    }

    pub fn remove(&mut self, seq: &u64) -> Option<Message> {
        self.page(*seq)?.index(*seq).ok()?;
        let page = self.page_mut(*seq)?;
        let i = page.index(*seq).ok()?;
        let m = page.messages.remove(i);
        let empty = page.messages.is_empty();
        self.len -= 1;
        if empty {
            let i = (*seq / PAGE - self.first) as usize;
            if let Some(slot) = self.pages.get_mut(i) {
                *slot = None;
            }
            while self.pages.front().is_some_and(Option::is_none) {
                self.pages.pop_front();
                self.first += 1;
            }
            while self.pages.back().is_some_and(Option::is_none) {
                self.pages.pop_back();
            }
        }
        Some(m)
    }

    /// The messages by SequenceNumber.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Message> + '_ {
        self.pages.iter().flatten().flat_map(|p| p.messages.iter())
    }

    /// The messages from SequenceNumber `seq` on.
    pub fn from_seq(&self, seq: u64) -> impl Iterator<Item = &Message> + '_ {
        let skip = (seq / PAGE).saturating_sub(self.first);
        self.pages
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .flatten()
            .flat_map(|p| p.messages.iter())
            .skip_while(move |m| m.sequence_number < seq)
    }

    /// The receivable messages (Active and unlocked) in retrieval order; pages without one are
    /// passed over by their counts.
    pub fn available(&self) -> impl Iterator<Item = &Message> + '_ {
        self.pages
            .iter()
            .flatten()
            .filter(|p| p.counts().active > 0)
            .flat_map(|p| p.messages.iter())
            .filter(|m| m.state == MessageState::Active && m.lock.is_none())
    }

    /// When the expiry timer of `seq`'s page is set for ([`NEVER`]: none), or None where no
    /// page holds `seq`.
    pub fn expiry_armed(&self, seq: u64) -> Option<Instant> {
        Some(self.page(seq)?.expiry_armed)
    }

    /// Records when the expiry timer of `seq`'s page is set for (copied if a copy shares it;
    /// its counts stay).
    pub fn set_expiry_armed(&mut self, seq: u64, at: Instant) {
        let Some(i) = (seq / PAGE).checked_sub(self.first) else {
            return;
        };
        let page = usize::try_from(i).ok().and_then(|i| self.pages.get_mut(i));
        if let Some(Some(page)) = page {
            if page.expiry_armed != at {
                Arc::make_mut(page).expiry_armed = at;
            }
        }
    }

    /// The first ExpiresAt of the receivable messages (Active, unlocked) in `seq`'s page.
    pub fn first_expiry(&self, seq: u64) -> Option<Instant> {
        self.page(seq)?.counts().expires.first().copied()
    }

    /// The receivable messages of `seq`'s page that expire by `at`, by SequenceNumber.
    pub fn expiring(&self, seq: u64, at: Instant) -> impl Iterator<Item = &Message> + '_ {
        self.page(seq)
            .into_iter()
            .flat_map(|p| p.messages.iter())
            .filter(move |m| {
                m.state == MessageState::Active && m.lock.is_none() && m.expires_at <= at
            })
    }

    /// Each page's counts, computed for those changed since they were last asked.
    pub fn counts(&self) -> impl Iterator<Item = &PageCounts> + '_ {
        self.pages.iter().flatten().map(|p| p.counts())
    }

    /// The pages the messages take (a copy costs a pointer each).
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The messages in pages no copy of this store shares: what changed since the last copy
    /// was taken (a rewind checkpoint's own memory).
    pub fn unshared_len(&self) -> usize {
        self.pages
            .iter()
            .flatten()
            .filter(|p| Arc::strong_count(p) == 1)
            .map(|p| p.messages.len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn message(seq: u64, active: bool) -> Message {
        let mut m = <Message as crate::codec::Saved>::blank();
        m.sequence_number = seq;
        m.expires_at = crate::time::NEVER;
        m.state = match active {
            true => MessageState::Active,
            false => MessageState::Deferred,
        };
        m
    }

    proptest! {
        /// Any sequence of inserts, removes and changes, with copies taken on the way: the
        /// pages read as a `BTreeMap` given the same, every copy still reads as it did when
        /// taken, and the counts and the receivable messages agree with the messages.
        #[test]
        fn read_as_a_btreemap_and_copies_keep_what_they_had(
            ops in proptest::collection::vec((0u8..4, 0u64..700), 0..600)
        ) {
            let mut pages = Pages::default();
            let mut model = BTreeMap::new();
            let mut copies = Vec::new();
            for (op, seq) in ops {
                match op {
                    0 | 1 => {
                        let m = message(seq, op == 0);
                        let fresh = !model.contains_key(&seq);
                        prop_assert_eq!(pages.insert(m.clone()), fresh);
                        model.entry(seq).or_insert(m);
                    }
                    2 => prop_assert_eq!(
                        pages.remove(&seq).map(|m| m.sequence_number),
                        model.remove(&seq).map(|m| m.sequence_number)
                    ),
                    _ => {
                        if let Some(m) = pages.get_mut(&seq) {
                            m.state = MessageState::Active;
                        }
                        if let Some(m) = model.get_mut(&seq) {
                            m.state = MessageState::Active;
                        }
                        copies.push((pages.clone(), model.clone()));
                    }
                }
                prop_assert_eq!(pages.len(), model.len());
            }
            prop_assert!(pages.values().eq(model.values()));
            let active = model.values().filter(|m| m.state == MessageState::Active);
            prop_assert!(pages.available().eq(active.clone()));
            let counted: u64 = pages.counts().map(|c| c.active).sum();
            prop_assert_eq!(counted, active.count() as u64);
            if let Some(&from) = model.keys().nth(model.len() / 2) {
                prop_assert!(pages.from_seq(from).eq(model.range(from..).map(|(_, m)| m)));
            }
            for (copy, then) in &copies {
                prop_assert!(copy.values().eq(then.values()));
            }
        }
    }

    #[test]
    fn a_copy_shares_every_page_until_one_changes() {
        let mut pages = Pages::default();
        for seq in 1..=10_000 {
            assert!(pages.insert(message(seq, true)));
        }
        assert_eq!(pages.unshared_len(), 10_000);
        let copy = pages.clone();
        assert_eq!(pages.unshared_len(), 0);
        pages.remove(&1);
        assert!(pages.insert(message(10_001, true)));
        // The first page (1..=63) and the last (9,984..=10,001) are copied.
        assert_eq!(pages.unshared_len(), 62 + 18);
        assert_eq!(copy.get(&1).map(|m| m.sequence_number), Some(1));
        assert!(pages.get(&1).is_none());
    }
}
