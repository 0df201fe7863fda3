//! An ordered map kept in chunks of at most [`CHUNK`] entries, each shared between the copies of
//! the map (copy on write): a copy costs one pointer per chunk, and a change afterwards copies
//! only the chunk it touches. The stores of messages and the timers are kept this way, so that a
//! rewind checkpoint of a million stored messages shares every chunk the run has not touched
//! since (`sbp_scenario::rewind`), and a chunk's summary (a store's counts by state) is computed
//! once per version of the chunk, not once per message per frame.
//!
//! Why not a persistent map from a crate (`imbl`'s `OrdMap`): its nodes are fixed arrays of 64
//! slots (a message's 170 bytes in each, filled or not), and its code does not fit the
//! playground's wasm ceiling; this is two levels of the standard library's types.
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

/// The most entries in one chunk.
pub const CHUNK: usize = 64;

/// What a chunk sums up of its entries, computed when first asked after a change.
pub trait Summary<K, V> {
    fn of<'a>(entries: impl Iterator<Item = &'a (K, V)>) -> Self
    where
        K: 'a,
        V: 'a;
}

impl<K, V> Summary<K, V> for () {
    fn of<'a>(_: impl Iterator<Item = &'a (K, V)>)
    where
        K: 'a,
        V: 'a,
    {
    }
}

struct Chunk<K, V, S> {
    /// In key order, never empty; a ring, so taking the first entry moves nothing.
    entries: VecDeque<(K, V)>,
    summary: OnceLock<S>,
}

impl<K: Clone, V: Clone, S> Clone for Chunk<K, V, S> {
    fn clone(&self) -> Self {
        Chunk::new(self.entries.clone())
    }
}

impl<K, V, S> Chunk<K, V, S> {
    fn new(entries: VecDeque<(K, V)>) -> Self {
        Chunk {
            entries,
            summary: OnceLock::new(),
        }
    }
}

/// An ordered map of unique keys in shared chunks (see the module's text). A chunk's key is at
/// or before its first entry's, and its entries are before the next chunk's key: taking a
/// chunk's first entry leaves its key as it is.
pub struct Chunked<K, V, S = ()> {
    chunks: BTreeMap<K, Arc<Chunk<K, V, S>>>,
    len: usize,
}

impl<K, V, S> Default for Chunked<K, V, S> {
    fn default() -> Self {
        Chunked {
            chunks: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<K: Clone, V, S> Clone for Chunked<K, V, S> {
    fn clone(&self) -> Self {
        Chunked {
            chunks: self.chunks.clone(),
            len: self.len,
        }
    }
}

/// The entries, as a map: two maps with the same entries read the same however they are chunked.
impl<K: std::fmt::Debug, V: std::fmt::Debug, S> std::fmt::Debug for Chunked<K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.chunks.values().flat_map(|c| c.entries.iter());
        f.debug_map().entries(entries.map(|(k, v)| (k, v))).finish()
    }
}

impl<K: Ord + Copy, V: Clone, S: Summary<K, V>> Chunked<K, V, S> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk holding `k` and its index there.
    fn find(&self, k: &K) -> Option<(K, usize)> {
        let (first, chunk) = self.chunks.range(..=k).next_back()?;
        let i = chunk.entries.binary_search_by(|(e, _)| e.cmp(k)).ok()?;
        Some((*first, i))
    }

    /// The chunk keyed `first`, for a change: copied if a copy of the map shares it.
    fn chunk_mut(&mut self, first: &K) -> Option<&mut Chunk<K, V, S>> {
        chunk_mut(&mut self.chunks, first)
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        let (first, i) = self.find(k)?;
        Some(&self.chunks.get(&first)?.entries.get(i)?.1)
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.find(k).is_some()
    }

    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        let (first, i) = self.find(k)?;
        Some(&mut self.chunk_mut(&first)?.entries.get_mut(i)?.1)
    }

    /// Inserts `v` under `k`; the value it replaces, if any.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        let first = match self.chunks.range(..=k).next_back() {
            Some((first, _)) => *first,
            // Before every chunk: into the first, keyed by `k` from now on.
            None => match self.chunks.keys().next() {
                Some(&first) => {
                    self.rekey(first, k);
                    k
                }
                None => {
                    self.chunks
                        .insert(k, Arc::new(Chunk::new(VecDeque::from([(k, v)]))));
                    self.len = 1;
                    return None;
                }
            },
        };
        let chunk = chunk_mut(&mut self.chunks, &first)?;
        let i = match chunk.entries.binary_search_by(|(e, _)| e.cmp(&k)) {
            Ok(i) => return Some(std::mem::replace(&mut chunk.entries[i].1, v)),
            Err(i) => i,
        };
        self.len += 1;
        if chunk.entries.len() < CHUNK {
            chunk.entries.insert(i, (k, v));
            return None;
        }
        // A full chunk: a key after its last starts the next chunk (appending keeps chunks
        // full); one inside splits it in halves.
        if i == CHUNK {
            self.chunks
                .insert(k, Arc::new(Chunk::new(VecDeque::from([(k, v)]))));
            return None;
        }
        let mut tail = chunk.entries.split_off(CHUNK / 2);
        if i <= CHUNK / 2 {
            chunk.entries.insert(i, (k, v));
        } else {
            tail.insert(i - CHUNK / 2, (k, v));
        }
        let tail_first = tail[0].0;
        self.chunks.insert(tail_first, Arc::new(Chunk::new(tail)));
        None
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        let (first, i) = self.find(k)?;
        let chunk = chunk_mut(&mut self.chunks, &first)?;
        let (_, v) = chunk.entries.remove(i)?;
        self.len -= 1;
        if chunk.entries.is_empty() {
            self.chunks.remove(&first);
        } else if chunk.entries.len() < CHUNK / 4 {
            self.merge_next(first);
        }
        Some(v)
    }

    /// The first entry.
    pub fn first(&self) -> Option<(&K, &V)> {
        let (_, chunk) = self.chunks.iter().next()?;
        chunk.entries.front().map(|(k, v)| (k, v))
    }

    pub fn first_key(&self) -> Option<K> {
        self.first().map(|(k, _)| *k)
    }

    pub fn pop_first(&mut self) -> Option<(K, V)> {
        let k = self.first_key()?;
        self.remove(&k).map(|v| (k, v))
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        self.chunks
            .values()
            .flat_map(|c| c.entries.iter().map(|(k, v)| (k, v)))
    }

    /// The entries from `k` on, in key order.
    pub fn range_from(&self, k: K) -> impl Iterator<Item = (&K, &V)> + '_ {
        let start = self
            .chunks
            .range(..=k)
            .next_back()
            .map_or(k, |(first, _)| *first);
        self.chunks
            .range(start..)
            .flat_map(|(_, c)| c.entries.iter().map(|(k, v)| (k, v)))
            .skip_while(move |(e, _)| **e < k)
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// Each chunk's summary, computed for those changed since it was last asked.
    pub fn summaries(&self) -> impl Iterator<Item = &S> + '_ {
        self.chunks
            .values()
            .map(|c| c.summary.get_or_init(|| S::of(c.entries.iter())))
    }

    /// How many chunks hold the entries.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The entries in chunks no copy of this map shares: what changed since the last copy was
    /// taken (a rewind checkpoint's own memory).
    pub fn unshared_len(&self) -> usize {
        self.chunks
            .values()
            .filter(|c| Arc::strong_count(c) == 1)
            .map(|c| c.entries.len())
            .sum()
    }

    /// A map of entries given in strictly increasing key order; None when they are not.
    pub fn from_sorted(entries: Vec<(K, V)>) -> Option<Self> {
        if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
            return None;
        }
        let len = entries.len();
        let mut chunks = BTreeMap::new();
        let mut entries = entries.into_iter().peekable();
        while entries.peek().is_some() {
            let chunk: VecDeque<(K, V)> = entries.by_ref().take(CHUNK).collect();
            chunks.insert(chunk[0].0, Arc::new(Chunk::new(chunk)));
        }
        Some(Chunked { chunks, len })
    }

    fn rekey(&mut self, from: K, to: K) {
        if let Some(chunk) = self.chunks.remove(&from) {
            self.chunks.insert(to, chunk);
        }
    }

    /// Moves the chunk after the one keyed `first` into it when both fit in one.
    fn merge_next(&mut self, first: K) {
        let Some((&next, next_chunk)) = self
            .chunks
            .range((Bound::Excluded(first), Bound::Unbounded))
            .next()
        else {
            return;
        };
        let Some(this) = self.chunks.get(&first) else {
            return;
        };
        if this.entries.len() + next_chunk.entries.len() > CHUNK {
            return;
        }
        let Some(next_chunk) = self.chunks.remove(&next) else {
            return;
        };
        let moved = Arc::try_unwrap(next_chunk)
            .map(|c| c.entries)
            .unwrap_or_else(|shared| shared.entries.clone());
        if let Some(chunk) = self.chunk_mut(&first) {
            chunk.entries.extend(moved);
        }
    }
}

/// The chunk keyed `first` in `chunks`, for a change: copied if a copy of the map shares it, its
/// summary forgotten.
fn chunk_mut<'a, K: Ord + Clone, V: Clone, S>(
    chunks: &'a mut BTreeMap<K, Arc<Chunk<K, V, S>>>,
    first: &K,
) -> Option<&'a mut Chunk<K, V, S>> {
    let chunk = Arc::make_mut(chunks.get_mut(first)?);
    chunk.summary = OnceLock::new();
    Some(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Default, PartialEq)]
    struct Sum(u64);
    impl Summary<u64, u64> for Sum {
        fn of<'a>(entries: impl Iterator<Item = &'a (u64, u64)>) -> Sum {
            Sum(entries.map(|(_, v)| v).sum())
        }
    }

    fn holds_together(map: &Chunked<u64, u64, Sum>) {
        let mut last = None;
        let mut len = 0;
        for (first, chunk) in &map.chunks {
            assert!(!chunk.entries.is_empty() && chunk.entries.len() <= CHUNK);
            assert!(chunk.entries[0].0 >= *first);
            assert!(
                last < Some(*first),
                "a chunk's key is after the entries before it"
            );
            for (k, _) in &chunk.entries {
                assert!(last < Some(*k));
                last = Some(*k);
                len += 1;
            }
        }
        assert_eq!(len, map.len());
    }

    proptest! {
        /// Any sequence of inserts and removes, with copies taken on the way: the map reads as a
        /// `BTreeMap` given the same, every copy still reads as it did when taken, and each
        /// chunk's summary is its entries' sum.
        #[test]
        fn reads_as_a_btreemap_and_copies_keep_what_they_had(
            ops in proptest::collection::vec((0u8..4, 0u64..400, 0u64..1000), 0..800)
        ) {
            let mut map: Chunked<u64, u64, Sum> = Chunked::new();
            let mut model = BTreeMap::new();
            let mut copies = Vec::new();
            for (op, k, v) in ops {
                match op {
                    0 | 1 => prop_assert_eq!(map.insert(k, v), model.insert(k, v)),
                    2 => prop_assert_eq!(map.remove(&k), model.remove(&k)),
                    _ => {
                        if let Some(m) = map.get_mut(&k) {
                            *m += v;
                        }
                        if let Some(m) = model.get_mut(&k) {
                            *m += v;
                        }
                        copies.push((map.clone(), model.clone()));
                    }
                }
                holds_together(&map);
            }
            prop_assert!(map.iter().map(|(k, v)| (*k, *v)).eq(model.iter().map(|(k, v)| (*k, *v))));
            prop_assert_eq!(map.first_key(), model.keys().next().copied());
            let total: u64 = map.summaries().map(|s| s.0).sum();
            prop_assert_eq!(total, model.values().sum::<u64>());
            for (copy, then) in &copies {
                prop_assert!(copy.iter().map(|(k, v)| (*k, *v)).eq(then.iter().map(|(k, v)| (*k, *v))));
                for k in then.keys() {
                    prop_assert_eq!(copy.get(k), then.get(k));
                }
            }
            let rebuilt = Chunked::<u64, u64, Sum>::from_sorted(model.into_iter().collect());
            prop_assert!(rebuilt.is_some_and(|r| r.iter().eq(map.iter())));
        }
    }

    #[test]
    fn a_copy_shares_every_chunk_until_one_changes() {
        let mut map: Chunked<u64, u64> = Chunked::new();
        for k in 0..10_000 {
            map.insert(k, k);
        }
        // Appending keeps chunks full.
        assert_eq!(map.chunk_count(), 10_000 / CHUNK + 1);
        assert_eq!(map.unshared_len(), 10_000);
        let copy = map.clone();
        assert_eq!(map.unshared_len(), 0);
        map.remove(&0);
        map.insert(10_000, 0);
        assert_eq!(map.unshared_len(), (CHUNK - 1) + 10_000 % CHUNK + 1);
        assert_eq!(copy.get(&0), Some(&0));
        assert_eq!(map.get(&0), None);
    }
}
