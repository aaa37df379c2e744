//! The thread maps of `tcgen05.ld` / `tcgen05.st` (PTX ISA §9.7.16.2.3 "Data movement shape",
//! the matrix-fragment figures of §9.7.16.8.3 tcgen05.ld and §9.7.16.8.4 tcgen05.st): which
//! TMEM (lane, column) register `r` of lane `l` of the warp moves, for each `.shape` and
//! `.num` (`.x1` … `.x128`), written from the ISA's figures independently of the compiler's
//! register layouts (`tirx-ir` `RegLayout::tmem_*`).
//!
//! Per `.x1`, with `l` the lane within the warp:
//!
//! | shape | lanes × bits | registers | register `r` of lane `l` holds (lane, 32-bit column) |
//! |---|---|---|---|
//! | `32x32b`  | 32 × 32  | 1 | (`l`, `r`) |
//! | `16x64b`  | 16 × 64  | 1 | (`l/4 + 8·(l%2)`, `(l/2)%2 + 2r`) |
//! | `16x128b` | 16 × 128 | 2 | (`l/4 + 8·(r%2)`, `l%4 + 4·(r/2)`) |
//! | `16x256b` | 16 × 256 | 4 | (`l/4 + 8·((r/2)%2)`, `2·(l%4) + r%2 + 8·(r/4)`) |
//! | `16x32bx2`| 2 × 16 × 32 | 1 | (`l%16`, `r` + `immHalfSplitoff` for `l ≥ 16`) |
//!
//! `.xN` repeats the pattern N times along the columns: the registers of repeat `k` follow
//! those of repeat `k − 1` and their columns are `k` times the pattern's width further (the
//! formulas above already include it through `r`). For `16x32bx2` the second half (lanes
//! 16–31 of the warp) reads the same 16 TMEM lanes at the column offset `immHalfSplitoff`.
//!
//! **Packing** (§9.7.16.2.4 "Packing formats"): `tcgen05.ld….pack::16b` reads the low 16 bits
//! of two adjacent columns into one register (the first column in the low half);
//! `tcgen05.st….unpack::16b` writes each half of a register into the low 16 bits of its own
//! column. Every 32-bit column of the table above becomes two physical columns: physical
//! column `2c` and `2c + 1` for logical column `c`; `immHalfSplitoff` stays a physical column
//! offset. The emulator writes the high 16 bits of an unpacked column as zero.

/// The `.shape` of a tcgen05 data movement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TmemShape {
    /// `.32x32b`.
    S32x32b,
    /// `.16x64b`.
    S16x64b,
    /// `.16x128b`.
    S16x128b,
    /// `.16x256b`.
    S16x256b,
    /// `.16x32bx2` with its `immHalfSplitoff` (physical columns).
    S16x32bx2 {
        /// Column offset of the second half.
        split: u32,
    },
}

impl TmemShape {
    /// The shape named by an instruction modifier, without the split (filled in later).
    pub(crate) fn from_modifier(m: &str) -> Option<TmemShape> {
        Some(match m {
            "32x32b" => TmemShape::S32x32b,
            "16x64b" => TmemShape::S16x64b,
            "16x128b" => TmemShape::S16x128b,
            "16x256b" => TmemShape::S16x256b,
            "16x32bx2" => TmemShape::S16x32bx2 { split: 0 },
            _ => return None,
        })
    }

    /// TMEM lanes one instruction of the warp covers.
    pub(crate) fn lanes(self) -> u32 {
        match self {
            TmemShape::S32x32b => 32,
            _ => 16,
        }
    }

    /// Registers per thread for `.x1`.
    pub(crate) fn regs_per_rep(self) -> u32 {
        match self {
            TmemShape::S16x128b => 2,
            TmemShape::S16x256b => 4,
            _ => 1,
        }
    }

    /// The largest `.num` the ISA allows (the registers of one instruction stay ≤ 128).
    pub(crate) fn max_num(self) -> u32 {
        128 / self.regs_per_rep()
    }

    /// Register `r` of lane `l`: its TMEM lane offset, its logical 32-bit column, and whether
    /// it lies in the second half of a `16x32bx2` (whose columns add `immHalfSplitoff`).
    pub(crate) fn cell(self, l: u32, r: u32) -> (u32, u32, bool) {
        match self {
            TmemShape::S32x32b => (l, r, false),
            TmemShape::S16x64b => (l / 4 + 8 * (l % 2), (l / 2) % 2 + 2 * r, false),
            TmemShape::S16x128b => (l / 4 + 8 * (r % 2), l % 4 + 4 * (r / 2), false),
            TmemShape::S16x256b => (
                l / 4 + 8 * ((r / 2) % 2),
                2 * (l % 4) + r % 2 + 8 * (r / 4),
                false,
            ),
            TmemShape::S16x32bx2 { .. } => (l % 16, r, l >= 16),
        }
    }

    /// The physical columns (relative to the address's column) register `r` of lane `l`
    /// moves: one, or two when packed (`.pack::16b` / `.unpack::16b`).
    pub(crate) fn columns(self, l: u32, r: u32, packed: bool) -> (u32, [u32; 2], usize) {
        let (lane, c, second) = self.cell(l, r);
        let split = match self {
            TmemShape::S16x32bx2 { split } if second => split,
            _ => 0,
        };
        if packed {
            (lane, [split + 2 * c, split + 2 * c + 1], 2)
        } else {
            (lane, [split + c, 0], 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TmemShape::{self, *};
    use std::collections::HashSet;

    /// Every (lane, column) of the shape's `lanes × width·num` block is moved by exactly one
    /// (thread, register).
    fn covers_once(s: TmemShape, num: u32, width: u32) {
        let mut seen = HashSet::new();
        for l in 0..32 {
            for r in 0..s.regs_per_rep() * num {
                let (lane, c, second) = s.cell(l, r);
                assert!(lane < s.lanes(), "{s:?} lane {l} reg {r}");
                assert!(c < width * num, "{s:?} lane {l} reg {r}: column {c}");
                assert!(seen.insert((lane, c, second)), "{s:?} twice: {lane}, {c}");
            }
        }
        let halves = if matches!(s, S16x32bx2 { .. }) { 2 } else { 1 };
        assert_eq!(seen.len() as u32, s.lanes() * width * num * halves);
    }

    #[test]
    fn each_shape_covers_its_block_once() {
        for num in [1, 2, 4, 8, 16, 32] {
            covers_once(S32x32b, num, 1);
            covers_once(S16x64b, num, 2);
            covers_once(S16x128b, num, 4);
            covers_once(S16x256b, num, 8);
            covers_once(S16x32bx2 { split: 0 }, num, 1);
        }
    }

    #[test]
    fn the_16x256b_map_is_the_figures() {
        // Lane 0: rows 0 and 8, columns 0, 1; lane 5: row 1, columns 2, 3; `.x2`'s second
        // repeat 8 columns further.
        assert_eq!(S16x256b.cell(0, 0), (0, 0, false));
        assert_eq!(S16x256b.cell(0, 1), (0, 1, false));
        assert_eq!(S16x256b.cell(0, 2), (8, 0, false));
        assert_eq!(S16x256b.cell(0, 3), (8, 1, false));
        assert_eq!(S16x256b.cell(5, 0), (1, 2, false));
        assert_eq!(S16x256b.cell(31, 3), (15, 7, false));
        assert_eq!(S16x256b.cell(5, 4), (1, 10, false));
    }

    #[test]
    fn the_16x64b_and_16x128b_maps_are_the_figures() {
        // 16x64b: lanes 0 and 1 split rows 0 and 8, lanes 2 and 3 the second column.
        assert_eq!(S16x64b.cell(0, 0), (0, 0, false));
        assert_eq!(S16x64b.cell(1, 0), (8, 0, false));
        assert_eq!(S16x64b.cell(2, 0), (0, 1, false));
        assert_eq!(S16x64b.cell(4, 1), (1, 2, false));
        // 16x128b: four lanes across a row's four columns, register 1 eight rows down.
        assert_eq!(S16x128b.cell(3, 0), (0, 3, false));
        assert_eq!(S16x128b.cell(3, 1), (8, 3, false));
        assert_eq!(S16x128b.cell(4, 2), (1, 4, false));
    }

    #[test]
    fn the_second_half_of_16x32bx2_adds_the_split() {
        let s = S16x32bx2 { split: 8 };
        assert_eq!(s.columns(3, 2, false), (3, [2, 0], 1));
        assert_eq!(s.columns(19, 2, false), (3, [10, 0], 1));
        assert_eq!(s.columns(19, 2, true), (3, [12, 13], 2));
    }

    #[test]
    fn packing_doubles_the_columns() {
        assert_eq!(S32x32b.columns(7, 3, true), (7, [6, 7], 2));
        assert_eq!(S16x256b.columns(5, 1, true), (1, [6, 7], 2));
    }
}
