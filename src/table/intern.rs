//! String interning for dictionary-encoded columns, with a small fast hash (FxHash) for short keys.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The Fx hash (as in rustc): fast for short keys, not DoS-resistant (inputs are the user's own file).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;

/// Byte-string equality with the short cases (up to 16 bytes) inline, without a call to `memcmp`.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        if n > 16 {
            return a == b;
        }
        let w = |s: &[u8], k: usize| u64::from_le_bytes(s[k..k + 8].try_into().unwrap());
        return w(a, 0) == w(b, 0) && w(a, n - 8) == w(b, n - 8);
    }
    if n >= 4 {
        let w = |s: &[u8], k: usize| u32::from_le_bytes(s[k..k + 4].try_into().unwrap());
        return w(a, 0) == w(b, 0) && w(a, n - 4) == w(b, n - 4);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// Hash of a short byte string for [`Interner`]: Fx over 8-byte words (the last one overlapping the
/// one before, so no tail is copied), with the length mixed in.
#[inline(always)]
fn hash_bytes(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let mut h = FxHasher { hash: n as u64 };
    if n >= 8 {
        let word = |k: usize| u64::from_le_bytes(bytes[k..k + 8].try_into().unwrap());
        let mut k = 0;
        while k + 8 < n {
            h.add(word(k));
            k += 8;
        }
        h.add(word(n - 8));
    } else if n >= 4 {
        let half = |k: usize| u32::from_le_bytes(bytes[k..k + 4].try_into().unwrap()) as u64;
        h.add(half(0) << 32 | half(n - 4));
    } else if n > 0 {
        h.add(bytes[0] as u64 | (bytes[n / 2] as u64) << 8 | (bytes[n - 1] as u64) << 16);
    }
    // Fx leaves the low bits weak; the table indexes with the high bits of one more multiply.
    h.hash.wrapping_mul(SEED)
}

/// Maps distinct byte strings to dense ids (0, 1, 2, ... in order of first appearance).
/// An open-addressing table over one contiguous byte store: one hash, one probe (whose slot also
/// holds the top of the hash, so a miss reads nothing else) and one inline comparison per lookup,
/// and each distinct string is stored once.
#[derive(Clone)]
pub struct Interner {
    /// Slots hold `(top 32 bits of the hash) << 32 | (id + 1)`; 0 is empty. The length is a power of
    /// two (at most 2^32), at most half full.
    slots: Vec<u64>,
    /// `32 - log2(slots.len())`: the slot of a hash is the top bits of its top 32 bits.
    shift: u32,
    /// Every distinct string, back to back.
    bytes: Vec<u8>,
    /// End of string `id` in `bytes` (its start is the previous end).
    ends: Vec<u32>,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            slots: vec![0; 16],
            shift: 32 - 4,
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl Interner {
    #[inline]
    pub fn intern(&mut self, s: &[u8]) -> u32 {
        let tag = (hash_bytes(s) >> 32) as u32;
        let mask = self.slots.len() - 1;
        let mut slot = (tag >> self.shift) as usize;
        loop {
            let entry = self.slots[slot];
            if entry == 0 {
                break;
            }
            if (entry >> 32) as u32 == tag {
                let id = entry as u32 - 1;
                if same_bytes(self.get(id), s) {
                    return id;
                }
            }
            slot = (slot + 1) & mask;
        }
        let id = self.ends.len() as u32;
        self.bytes.extend_from_slice(s);
        self.ends.push(self.bytes.len() as u32);
        self.slots[slot] = (tag as u64) << 32 | (id as u64 + 1);
        if self.ends.len() * 2 > self.slots.len() {
            self.grow();
        }
        id
    }

    #[cold]
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        self.shift -= 1;
        let old = std::mem::replace(&mut self.slots, vec![0; n]);
        let mask = n - 1;
        for entry in old.into_iter().filter(|&e| e != 0) {
            let mut slot = ((entry >> 32) as u32 >> self.shift) as usize;
            while self.slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = entry;
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    #[inline]
    pub fn get(&self, id: u32) -> &[u8] {
        let id = id as usize;
        let start = if id == 0 {
            0
        } else {
            self.ends[id - 1] as usize
        };
        &self.bytes[start..self.ends[id] as usize]
    }

    /// The values as text (invalid UTF-8 replaced), in id order.
    pub fn into_strings(self) -> Vec<String> {
        (0..self.len() as u32)
            .map(|id| String::from_utf8_lossy(self.get(id)).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_is_equality() {
        let words: Vec<Vec<u8>> = (0..40)
            .flat_map(|n| {
                let base: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
                let mut first = base.clone();
                let mut last = base.clone();
                let mut mid = base.clone();
                if n > 0 {
                    first[0] ^= 1;
                    last[n - 1] ^= 1;
                    mid[n / 2] ^= 1;
                }
                [base, first, last, mid]
            })
            .collect();
        for a in &words {
            for b in &words {
                assert_eq!(same_bytes(a, b), a == b);
            }
        }
    }

    #[test]
    fn ids_are_dense_and_stable_across_growth() {
        let mut interner = Interner::default();
        let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(interner.intern(w.as_bytes()), i as u32);
        }
        assert_eq!(interner.intern(b""), 1000);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(interner.intern(w.as_bytes()), i as u32);
            assert_eq!(interner.get(i as u32), w.as_bytes());
        }
        assert_eq!(interner.get(1000), b"");
        assert_eq!(interner.len(), 1001);
    }
}
