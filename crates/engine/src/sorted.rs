//! A small ordered set kept as a sorted `Vec`: for the sets that stay small (the queues a
//! receiver is attached to, a consumer group's lost completions). It iterates in order, as a
//! `BTreeSet` does, without a B-tree's code for each element type in the browser's wasm.
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortedVec<T>(Vec<T>);

impl<T> Default for SortedVec<T> {
    fn default() -> Self {
        SortedVec(Vec::new())
    }
}

impl<T: Ord> SortedVec<T> {
    /// Adds `value`; false if it was there.
    pub fn insert(&mut self, value: T) -> bool {
        match self.0.binary_search(&value) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, value);
                true
            }
        }
    }

    /// Takes `value` out; false if it was not there.
    pub fn remove(&mut self, value: &T) -> bool {
        match self.0.binary_search(value) {
            Ok(at) => {
                self.0.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    pub fn contains(&self, value: &T) -> bool {
        self.0.binary_search(value).is_ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// In order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a SortedVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Its items in order; read, items out of order (or twice) fail the load.
impl<T: crate::codec::Saved + Ord> crate::codec::Saved for SortedVec<T> {
    fn blank() -> Self {
        SortedVec::default()
    }
    fn visit(&mut self, io: &mut dyn crate::codec::Io) {
        self.0.visit(io);
        if self.0.windows(2).any(|w| w[0] >= w[1]) {
            io.fail();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SortedVec;

    #[test]
    fn keeps_each_value_once_in_order() {
        let mut s = SortedVec::default();
        assert!(s.insert(3) && s.insert(1) && s.insert(2));
        assert!(!s.insert(2));
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(s.remove(&2) && !s.remove(&2));
        assert!(s.contains(&3) && !s.contains(&2));
        assert_eq!(s.len(), 2);
    }
}
