//! The codec the engine's state is saved with (`saved` applies it to the engine's types): what
//! a share link's checkpoint carries (`Namespace::save`, `Namespace::resume`).
//!
//! One function per type, [`Saved::visit`], walks its fields in order through an [`Io`] that
//! either writes them (saving) or overwrites them from the input (loading), so saving and loading
//! cannot disagree on the order; `saved!` writes it from the field list, and its pattern names
//! every field, so a field added to a type and not saved does not compile. Numbers are LEB128
//! varints (signed ones zigzagged), texts and lists are a length and their items.
//!
//! Why not a serde format: postcard with serde's derived readers, and borsh's derives, were
//! each many times larger in the playground's wasm; this is one small function per type and
//! one non-generic reader.
//!
//! Loading reads untrusted bytes: a length is never larger than the input left, and the lists
//! read together hold at most [`MAX_LOAD_BYTES`] (an absent entity is one byte of input and far
//! more of memory); a number out of its type's range, an unknown variant or input that ends
//! early marks the load failed (the caller then drops what was read); there is no recursion
//! beyond the types' own nesting.
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The most memory the lists of one load may take (their items, not what those point to, which
/// takes input of its own).
pub const MAX_LOAD_BYTES: usize = 128 << 20;

/// Where a [`Saved`] value's fields go to or come from.
pub trait Io {
    /// Whether fields are read (loading) rather than written.
    fn loading(&self) -> bool;
    /// A number: written, or overwritten with the next one read.
    fn word(&mut self, v: &mut u64);
    /// Bytes of a text: written, or overwritten with the next ones read.
    fn bytes(&mut self, v: &mut Vec<u8>);
    /// A list's length: `n` written and returned, or the next length read (never more than the
    /// input left, nor more items of `item_bytes` each than the load's memory allows).
    fn count(&mut self, n: usize, item_bytes: usize) -> usize;
    /// Marks the load failed.
    fn fail(&mut self);
}

/// A value the engine saves.
pub trait Saved: Sized {
    /// A placeholder a load overwrites.
    fn blank() -> Self;
    /// Writes or reads the fields in order.
    fn visit(&mut self, io: &mut dyn Io);
}

/// `saved!(Type { field, ... })`: every field, in order.
#[macro_export]
macro_rules! saved {
    ($ty:ident { $($f:ident),* $(,)? }) => {
        impl $crate::codec::Saved for $ty {
            fn blank() -> Self {
                $ty { $($f: $crate::codec::Saved::blank()),* }
            }
            fn visit(&mut self, io: &mut dyn $crate::codec::Io) {
                let $ty { $($f),* } = self;
                $($crate::codec::Saved::visit($f, io);)*
            }
        }
    };
}

/// `saved_unit!(Type { Variant, ... })`: a unit enum by its index.
#[macro_export]
macro_rules! saved_unit {
    ($ty:ident { $($v:ident),* $(,)? }) => {
        impl $crate::codec::Saved for $ty {
            fn blank() -> Self {
                [$($ty::$v),*][0]
            }
            fn visit(&mut self, io: &mut dyn $crate::codec::Io) {
                const ALL: &[$ty] = &[$($ty::$v),*];
                let mut i = ALL.iter().position(|v| v == self).unwrap_or(0) as u64;
                io.word(&mut i);
                match ALL.get(i as usize) {
                    Some(v) => *self = *v,
                    None => io.fail(),
                }
            }
        }
    };
}

/// An enum's variant: its index written, or read (`None` for an unknown one, the load failed).
pub fn variant(io: &mut dyn Io, index: u64, variants: u64) -> Option<u64> {
    let mut i = index;
    io.word(&mut i);
    if i >= variants {
        io.fail();
        return None;
    }
    Some(i)
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Saved for $t {
            fn blank() -> Self {
                0
            }
            fn visit(&mut self, io: &mut dyn Io) {
                let mut w = *self as u64;
                io.word(&mut w);
                match <$t>::try_from(w) {
                    Ok(v) => *self = v,
                    Err(_) => io.fail(),
                }
            }
        }
    )*};
}
unsigned!(u8, u32, u64, usize);

impl Saved for i64 {
    fn blank() -> Self {
        0
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut w = ((*self << 1) ^ (*self >> 63)) as u64;
        io.word(&mut w);
        *self = ((w >> 1) as i64) ^ -((w & 1) as i64);
    }
}

impl Saved for u128 {
    fn blank() -> Self {
        0
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let (mut high, mut low) = ((*self >> 64) as u64, *self as u64);
        io.word(&mut high);
        io.word(&mut low);
        *self = (u128::from(high) << 64) | u128::from(low);
    }
}

impl Saved for bool {
    fn blank() -> Self {
        false
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut w = u64::from(*self);
        io.word(&mut w);
        if w > 1 {
            io.fail();
        }
        *self = w == 1;
    }
}

/// By its bits: the same number back, whatever it is (rates and shares are checked where they
/// are used, as for a scenario's).
impl Saved for f64 {
    fn blank() -> Self {
        0.0
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut w = self.to_bits();
        io.word(&mut w);
        *self = f64::from_bits(w);
    }
}

impl Saved for String {
    fn blank() -> Self {
        String::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut bytes = std::mem::take(self).into_bytes();
        io.bytes(&mut bytes);
        match String::from_utf8(bytes) {
            Ok(s) => *self = s,
            Err(_) => io.fail(),
        }
    }
}

impl Saved for Cow<'static, str> {
    fn blank() -> Self {
        Cow::Borrowed("")
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut s = self.to_string();
        s.visit(io);
        *self = Cow::Owned(s);
    }
}

impl<T: Saved> Saved for Box<T> {
    fn blank() -> Self {
        Box::new(T::blank())
    }
    fn visit(&mut self, io: &mut dyn Io) {
        (**self).visit(io)
    }
}

impl<T: Saved> Saved for Option<T> {
    fn blank() -> Self {
        None
    }
    fn visit(&mut self, io: &mut dyn Io) {
        match (some(io, self.is_some()), self.is_some()) {
            (Some(true), true) | (None, _) => {}
            (Some(true), false) => *self = Some(T::blank()),
            (Some(false), _) => *self = None,
        }
        if let Some(v) = self {
            v.visit(io);
        }
    }
}

/// Whether an option holds a value: written, or read (`None`: the load failed).
fn some(io: &mut dyn Io, is_some: bool) -> Option<bool> {
    let mut w = u64::from(is_some);
    io.word(&mut w);
    match w {
        0 | 1 => Some(w == 1),
        _ => {
            io.fail();
            None
        }
    }
}

impl<A: Saved, B: Saved> Saved for (A, B) {
    fn blank() -> Self {
        (A::blank(), B::blank())
    }
    fn visit(&mut self, io: &mut dyn Io) {
        self.0.visit(io);
        self.1.visit(io);
    }
}

impl<A: Saved, B: Saved, C: Saved> Saved for (A, B, C) {
    fn blank() -> Self {
        (A::blank(), B::blank(), C::blank())
    }
    fn visit(&mut self, io: &mut dyn Io) {
        self.0.visit(io);
        self.1.visit(io);
        self.2.visit(io);
    }
}

impl<T: Saved> Saved for Vec<T> {
    fn blank() -> Self {
        Vec::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let n = io.count(self.len(), std::mem::size_of::<T>());
        if io.loading() {
            self.clear();
            self.reserve(n);
            for _ in 0..n {
                let mut v = T::blank();
                v.visit(io);
                self.push(v);
            }
        } else {
            self.iter_mut().for_each(|v| v.visit(io));
        }
    }
}

impl<T: Saved> Saved for VecDeque<T> {
    fn blank() -> Self {
        VecDeque::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut items: Vec<T> = std::mem::take(self).into();
        items.visit(io);
        *self = items.into();
    }
}

/// Keys in order; a load whose keys are not strictly increasing failed (a map written by
/// `save` always is).
impl<K: Saved + Ord + Clone, V: Saved> Saved for BTreeMap<K, V> {
    fn blank() -> Self {
        BTreeMap::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let n = io.count(self.len(), std::mem::size_of::<(K, V)>());
        if io.loading() {
            self.clear();
            for _ in 0..n {
                let (mut k, mut v) = (K::blank(), V::blank());
                k.visit(io);
                v.visit(io);
                if self.last_key_value().is_some_and(|(last, _)| *last >= k) {
                    return io.fail();
                }
                self.insert(k, v);
            }
        } else {
            for (k, v) in self.iter_mut() {
                k.clone().visit(io);
                v.visit(io);
            }
        }
    }
}

impl<T: Saved + Ord + Clone> Saved for BTreeSet<T> {
    fn blank() -> Self {
        BTreeSet::new()
    }
    fn visit(&mut self, io: &mut dyn Io) {
        let mut items: Vec<T> = std::mem::take(self).into_iter().collect();
        items.visit(io);
        for item in items {
            if self.last().is_some_and(|last| *last >= item) {
                return io.fail();
            }
            self.insert(item);
        }
    }
}

/// Writes a value's fields.
struct Writer(Vec<u8>);

impl Io for Writer {
    fn loading(&self) -> bool {
        false
    }
    fn word(&mut self, v: &mut u64) {
        let mut w = *v;
        loop {
            let low = (w & 0x7f) as u8;
            w >>= 7;
            if w == 0 {
                self.0.push(low);
                return;
            }
            self.0.push(low | 0x80);
        }
    }
    fn bytes(&mut self, v: &mut Vec<u8>) {
        self.count(v.len(), 1);
        self.0.extend_from_slice(v);
    }
    fn count(&mut self, n: usize, _: usize) -> usize {
        self.word(&mut (n as u64));
        n
    }
    fn fail(&mut self) {}
}

/// Reads a value's fields from untrusted bytes.
struct Reader<'a> {
    input: &'a [u8],
    failed: bool,
    /// What the lists read so far may still take ([`MAX_LOAD_BYTES`] at first).
    memory: usize,
}

impl Io for Reader<'_> {
    fn loading(&self) -> bool {
        true
    }
    fn word(&mut self, v: &mut u64) {
        let mut w = 0u64;
        for shift in (0..64).step_by(7) {
            let Some((&b, rest)) = self.input.split_first() else {
                break;
            };
            self.input = rest;
            w |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                *v = w;
                return;
            }
        }
        self.fail();
        *v = 0;
    }
    fn bytes(&mut self, v: &mut Vec<u8>) {
        let n = self.count(0, 1);
        let (taken, rest) = self.input.split_at(n);
        v.clear();
        v.extend_from_slice(taken);
        self.input = rest;
    }
    fn count(&mut self, _: usize, item_bytes: usize) -> usize {
        let mut n = 0;
        self.word(&mut n);
        let bytes = (n as usize).saturating_mul(item_bytes);
        if n > self.input.len() as u64 || bytes > self.memory {
            self.fail();
            return 0;
        }
        self.memory -= bytes;
        n as usize
    }
    fn fail(&mut self) {
        self.failed = true;
        // Nothing more is read: every later field reads as empty.
        self.input = &[];
    }
}

/// What `visit` writes, as bytes.
pub fn save(visit: impl FnOnce(&mut dyn Io)) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    visit(&mut w);
    w.0
}

/// Runs `visit` reading `bytes`; whether they read whole (on false, what `visit` overwrote is
/// to be dropped).
pub fn load(bytes: &[u8], visit: impl FnOnce(&mut dyn Io)) -> bool {
    let mut r = Reader {
        input: bytes,
        failed: false,
        memory: MAX_LOAD_BYTES,
    };
    visit(&mut r);
    !r.failed && r.input.is_empty()
}
