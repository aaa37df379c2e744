//! The shared-memory swizzle: the permutation of 16-byte chunks that TMA applies when it writes a
//! box with a swizzle mode, and that `wgmma` / `tcgen05.mma` undo when they read an operand whose
//! descriptor names the same mode.
//!
//! Source: PTX ISA 9.x §5.5.7 "Swizzling Modes" (numbered §5.5.6 in ISA 8.x). Its tables show,
//! for each mode, 16-byte cells in 128-byte shared-memory lines, starting at the mode's repeat
//! boundary (256 B for 32B, 512 B for 64B, 1024 B for 128B):
//!
//! | mode | line `l` holds, at chunk position `p`, source chunk |
//! |------|------------------------------------------------------|
//! | 32B  | `p ^ (l % 2)`                                         |
//! | 64B  | `p ^ (l % 4)`                                         |
//! | 128B | `p ^ (l % 8)`  (16-byte atomicity sub-mode)          |
//!
//! In address bits that is: chunk bits `[4, 4+B)` are XORed with line bits `[7, 7+B)`, with
//! `B` = 1, 2, 3 — exactly CuTe's `Swizzle<B, 4, 3>` (`cute/swizzle.hpp`: `offset ^ ((offset &
//! yyy_msk) >> 3)` with `yyy_msk = ((1 << B) - 1) << 7`), the swizzles CUTLASS composes with its
//! GMMA/UMMA layout atoms (`Layout_K_SW128_Atom` = `Swizzle<3,4,3>` etc. in
//! `cute/atom/mma_traits_sm90_gmma.hpp`).
//!
//! Invariants: the permutation moves whole 16-byte chunks (bits 0-3 are kept), never leaves its
//! 1024-byte block (bits 7 and up are kept), and is an involution (applying it twice is the
//! identity), hence a bijection on every block. The offset is relative to a base aligned to
//! `Swizzle::align_bytes()`; a base that is not aligned needs the descriptor's base offset field.
//!
//! Not modelled: the 128B sub-modes with 32-byte or 64-byte atomicity and the 96B mode
//! (`abi::Swizzle` cannot name them).

use crate::abi::Swizzle;

/// CuTe's `Swizzle<B, M, S>` parameters of a mode: XOR `B` bits at `M` with the `B` bits at
/// `M + S`. `None` for the identity (no swizzle).
pub fn cute_params(sw: Swizzle) -> Option<(u32, u32, u32)> {
    match sw {
        Swizzle::None => None,
        Swizzle::B32 => Some((1, 4, 3)),
        Swizzle::B64 => Some((2, 4, 3)),
        Swizzle::B128 => Some((3, 4, 3)),
    }
}

/// The swizzled byte offset of `byte_off`, an offset from a base aligned to
/// `sw.align_bytes()` (1024 B for 128B swizzle): where TMA stores the byte that an unswizzled,
/// row-major copy of the box would put at `byte_off`, and where the MMA reads it back from.
///
/// The function is its own inverse, so it also maps a physical offset back to the logical one.
pub fn swizzle_offset(sw: Swizzle, byte_off: u32) -> u32 {
    match cute_params(sw) {
        None => byte_off,
        Some((bits, base, shift)) => {
            let line_bits = ((1u32 << bits) - 1) << (base + shift);
            byte_off ^ ((byte_off & line_bits) >> shift)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Swizzle; 4] = [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128];

    /// Position of logical 16-byte chunk `c` of 128-byte line `l` after swizzling.
    fn chunk_pos(sw: Swizzle, line: u32, chunk: u32) -> u32 {
        (swizzle_offset(sw, line * 128 + chunk * 16) % 128) / 16
    }

    #[test]
    fn identity_without_swizzle() {
        for off in 0..4096 {
            assert_eq!(swizzle_offset(Swizzle::None, off), off);
        }
    }

    #[test]
    fn bijection_on_every_1024_byte_block() {
        for sw in ALL {
            for block in 0..4u32 {
                let mut seen = vec![false; 1024];
                for i in 0..1024 {
                    let s = swizzle_offset(sw, block * 1024 + i);
                    assert_eq!(s / 1024, block, "{sw:?} left its block");
                    assert!(!seen[(s % 1024) as usize], "{sw:?} is not injective");
                    seen[(s % 1024) as usize] = true;
                }
            }
        }
    }

    #[test]
    fn involution_and_chunk_granular() {
        for sw in ALL {
            for off in 0..2048 {
                let s = swizzle_offset(sw, off);
                assert_eq!(swizzle_offset(sw, s), off);
                assert_eq!(
                    s & 0xF,
                    off & 0xF,
                    "bytes inside a 16-B chunk must stay put"
                );
            }
        }
    }

    #[test]
    fn repeat_period_is_align_bytes() {
        // The pattern repeats every 8 lines of span bytes (= Swizzle::align_bytes()).
        for sw in [Swizzle::B32, Swizzle::B64, Swizzle::B128] {
            let period = sw.align_bytes();
            for off in 0..period {
                assert_eq!(
                    swizzle_offset(sw, off + period),
                    swizzle_offset(sw, off) + period
                );
            }
        }
    }

    /// The destination-layout tables of PTX ISA §5.5.7, typed in cell by cell: row = 128-byte
    /// line, entry = the source chunk found at each 16-byte position.
    #[test]
    fn matches_the_isa_tables() {
        let t32: [[u32; 8]; 2] = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]];
        let t64: [[u32; 8]; 4] = [
            [0, 1, 2, 3, 4, 5, 6, 7],
            [1, 0, 3, 2, 5, 4, 7, 6],
            [2, 3, 0, 1, 6, 7, 4, 5],
            [3, 2, 1, 0, 7, 6, 5, 4],
        ];
        let t128: [[u32; 8]; 8] = [
            [0, 1, 2, 3, 4, 5, 6, 7],
            [1, 0, 3, 2, 5, 4, 7, 6],
            [2, 3, 0, 1, 6, 7, 4, 5],
            [3, 2, 1, 0, 7, 6, 5, 4],
            [4, 5, 6, 7, 0, 1, 2, 3],
            [5, 4, 7, 6, 1, 0, 3, 2],
            [6, 7, 4, 5, 2, 3, 0, 1],
            [7, 6, 5, 4, 3, 2, 1, 0],
        ];
        let check = |sw: Swizzle, table: &[[u32; 8]]| {
            // "… Pattern repeats …": check two periods.
            for line in 0..(2 * table.len() as u32) {
                let row = &table[line as usize % table.len()];
                for (pos, &src) in row.iter().enumerate() {
                    assert_eq!(chunk_pos(sw, line, src), pos as u32, "{sw:?} line {line}");
                }
            }
        };
        check(Swizzle::B32, &t32);
        check(Swizzle::B64, &t64);
        check(Swizzle::B128, &t128);
    }

    #[test]
    fn b128_row_r_chunk_c_lands_at_c_xor_r_mod_8() {
        // A 128B-swizzled tile has 128-byte rows (the TMA box's inner extent is the span).
        for r in 0..32u32 {
            for c in 0..8u32 {
                let s = swizzle_offset(Swizzle::B128, r * 128 + c * 16);
                assert_eq!(s / 128, r, "row is preserved");
                assert_eq!((s % 128) / 16, c ^ (r % 8));
            }
        }
    }

    #[test]
    fn narrower_modes_in_their_own_rows() {
        // 64B: rows of 64 B, two per 128-B line; row r's chunk c (0..4) moves to c ^ ((r/2) % 4)
        // within the line, i.e. it may land in the other row's half of the line.
        for r in 0..16u32 {
            for c in 0..4u32 {
                let s = swizzle_offset(Swizzle::B64, r * 64 + c * 16);
                let logical_pos = (r % 2) * 4 + c;
                assert_eq!((s % 128) / 16, logical_pos ^ ((r / 2) % 4));
            }
        }
        // 32B: rows of 32 B, four per line; chunk position flips bit 0 on odd lines.
        for r in 0..16u32 {
            for c in 0..2u32 {
                let s = swizzle_offset(Swizzle::B32, r * 32 + c * 16);
                let logical_pos = (r % 4) * 2 + c;
                assert_eq!((s % 128) / 16, logical_pos ^ ((r / 4) % 2));
            }
        }
    }

    #[test]
    fn hand_computed_offsets() {
        // 128B: 0x1F0 = line 3 (bits 7-9 = 0b011), chunk 7 (bits 4-6 = 0b111) -> chunk 7^3 = 4:
        // 3*128 + 4*16 = 0x1C0.
        assert_eq!(swizzle_offset(Swizzle::B128, 0x1F0), 0x1C0);
        // 128B: 0x3FF = line 7, chunk 7, byte 15 -> chunk 0: 0x380 + 0xF = 0x38F.
        assert_eq!(swizzle_offset(Swizzle::B128, 0x3FF), 0x38F);
        // 64B: 0x1F0 = bits 7-8 = 0b11, bits 4-5 = 0b11 -> 0b00: 0x1F0 ^ 0x30 = 0x1C0.
        assert_eq!(swizzle_offset(Swizzle::B64, 0x1F0), 0x1C0);
        // 64B ignores bit 9: 0x200 stays.
        assert_eq!(swizzle_offset(Swizzle::B64, 0x200), 0x200);
        // 32B: 0x80 (bit 7) flips bit 4 -> 0x90; 0x100 (bit 8) is not used -> 0x100.
        assert_eq!(swizzle_offset(Swizzle::B32, 0x80), 0x90);
        assert_eq!(swizzle_offset(Swizzle::B32, 0x100), 0x100);
    }
}
