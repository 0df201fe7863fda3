//! A seeded random stream that counts its draws, so a checkpoint saves it as (seed, draws) and
//! takes it up again with the generator's own jump-ahead (`Pcg64Mcg::advance`): the generator
//! keeps its state private.
use rand_core::{RngCore, SeedableRng};

use rand_pcg::Pcg64Mcg;

#[derive(Clone)]
pub struct Stream {
    seed: u64,
    draws: u64,
    rng: Pcg64Mcg,
}

impl Stream {
    pub fn new(seed: u64) -> Stream {
        Stream {
            seed,
            draws: 0,
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// The stream `draws` draws after its start.
    fn at(seed: u64, draws: u64) -> Stream {
        let mut stream = Stream::new(seed);
        stream.rng.advance(u128::from(draws));
        stream.draws = draws;
        stream
    }
}

/// Seed and draws: two streams that print alike give the same numbers from here on.
impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({}, {})", self.seed, self.draws)
    }
}

impl RngCore for Stream {
    fn next_u32(&mut self) -> u32 {
        self.draws += 1;
        self.rng.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.draws += 1;
        self.rng.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        // Through this stream's own draws (as the generator fills bytes), so each is counted.
        rand_core::impls::fill_bytes_via_next(self, dest)
    }
}

/// As its seed and draws; read, the generator jumps ahead to where it was.
impl crate::codec::Saved for Stream {
    fn blank() -> Self {
        Stream::new(0)
    }
    fn visit(&mut self, io: &mut dyn crate::codec::Io) {
        let (mut seed, mut draws) = (self.seed, self.draws);
        crate::codec::Saved::visit(&mut seed, io);
        crate::codec::Saved::visit(&mut draws, io);
        if io.loading() {
            *self = Stream::at(seed, draws);
        }
    }
}
