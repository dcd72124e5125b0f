//! CRC-32 (IEEE 802.3, the gzip trailer's checksum), table-driven eight bytes at a time.

/// The reflected IEEE polynomial.
const POLY: u32 = 0xEDB8_8320;

/// `TABLES[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
static TABLES: [[u32; 256]; 8] = make_tables();

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut b = 0;
    while b < 256 {
        let mut c = b as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][b] = c;
        b += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut b = 0;
        while b < 256 {
            let prev = t[k - 1][b];
            t[k][b] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            b += 1;
        }
        k += 1;
    }
    t
}

/// A running CRC-32.
#[derive(Clone, Copy, Debug, Default)]
pub struct Crc32 {
    /// The register, inverted (so a fresh value is 0).
    value: u32,
}

impl Crc32 {
    pub fn new() -> Self {
        Crc32 { value: 0 }
    }

    /// The checksum of all bytes given so far.
    pub fn value(&self) -> u32 {
        self.value
    }

    pub fn update(&mut self, bytes: &[u8]) {
        let mut c = !self.value;
        let mut chunks = bytes.chunks_exact(8);
        for w in &mut chunks {
            let lo = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) ^ c;
            c = TABLES[7][(lo & 0xFF) as usize]
                ^ TABLES[6][((lo >> 8) & 0xFF) as usize]
                ^ TABLES[5][((lo >> 16) & 0xFF) as usize]
                ^ TABLES[4][(lo >> 24) as usize]
                ^ TABLES[3][w[4] as usize]
                ^ TABLES[2][w[5] as usize]
                ^ TABLES[1][w[6] as usize]
                ^ TABLES[0][w[7] as usize];
        }
        for &b in chunks.remainder() {
            c = (c >> 8) ^ TABLES[0][((c ^ b as u32) & 0xFF) as usize];
        }
        self.value = !c;
    }
}

#[cfg(test)]
mod tests {
    use super::Crc32;

    /// The bit-at-a-time definition, as the slow reference.
    fn reference(bytes: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn known_check_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        let mut c = Crc32::new();
        c.update(b"123456789");
        assert_eq!(c.value(), 0xCBF4_3926);
    }

    #[test]
    fn matches_the_bitwise_reference_in_any_pieces() {
        let data: Vec<u8> = (0..10_007u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for split in [0, 1, 7, 8, 9, 4096, 10_006] {
            let mut c = Crc32::new();
            c.update(&data[..split]);
            c.update(&data[split..]);
            assert_eq!(c.value(), reference(&data), "split at {split}");
        }
    }
}
