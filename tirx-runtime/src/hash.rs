//! [`WordHasher`]: the one word-at-a-time hash of the host's keyed caches (the launch cache
//! here, the Python binding's per-thread choices in `tirx-py`).
//!
//! Invariants:
//! - A key is hashed a `u64` word at a time: `write_u64` (and `write_usize`, widened) is one
//!   step, and a byte slice whose length is a multiple of 8 (a `[u64]` key reaches `write` so)
//!   hashes as its native-endian words, exactly as writing each word would.
//! - Users compare keys in full on a hit, so the hash needs no resistance to chosen collisions,
//!   only speed and well-spread output bits.

use std::hash::Hasher;

/// A word-at-a-time hash for keys made of `u64` words: FxHash's step, then MurmurHash3's 64-bit
/// finaliser so every output bit depends on every input bit. The std hasher (SipHash-1-3)
/// costs several times as much per word; use this only where a hit compares the whole key,
/// since it does not resist chosen collisions. Use it in a map as
/// `BuildHasherDefault<WordHasher>`.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        // A `[u64]` key reaches here as its words' bytes, in one call: a word at a time.
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            self.write_u64(u64::from_ne_bytes(w.try_into().unwrap_or_default()));
        }
        words
            .remainder()
            .iter()
            .for_each(|&b| self.write_u64(u64::from(b)));
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `[u64]` written as bytes in one call hashes as its words written one by one (how a
    /// boxed-slice key in a `HashMap` reaches the hasher, and how `LaunchKey` feeds it).
    #[test]
    fn bytes_of_words_hash_as_the_words() {
        let words = [1u64, 0x1000, u64::MAX, 7];
        let mut by_word = WordHasher::default();
        words.iter().for_each(|&w| by_word.write_u64(w));
        let mut by_bytes = WordHasher::default();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        by_bytes.write(&bytes);
        assert_eq!(by_word.finish(), by_bytes.finish());
    }
}
