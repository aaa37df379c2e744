//! The register layouts of `tcgen05.ld` / `tcgen05.st` (PTX ISA §9.7.16.2.3 "Data movement
//! shape", and the matrix-fragment figures of §9.7.16.8.3 tcgen05.ld): for each `.shape`, the
//! [`RegLayout`] a warpgroup holds when it moves a 128-lane TMEM tile `[128, C]` of 32-bit
//! cells with that shape, so the compiler knows the (row = TMEM lane, column) of every
//! register of every thread and derives elementwise ops, reductions and casts from it.
//!
//! Warp `w` of the warpgroup reaches TMEM lanes `32·(w%4)` … `+31` (§9.7.16.8.1). A 32-lane
//! shape covers them in one instruction per column chunk; a 16-lane shape in two, the second
//! from lane `32·(w%4) + 16` — its registers follow the first half's (the last value mode).
//! Per `.x1` instruction, lane `l` of the warp holds (rows within the 16 or 32 lanes):
//!
//! | shape | register `r` holds (row, column) | columns per `.x1` |
//! |---|---|---|
//! | `32x32b`  | (`l`, `r`) | 1 |
//! | `16x64b`  | (`l/4 + 8·(l%2)`, `(l/2)%2 + 2r`) | 2 |
//! | `16x128b` | (`l/4 + 8·(r%2)`, `l%4 + 4·(r/2)`) | 4 |
//! | `16x256b` | (`l/4 + 8·((r/2)%2)`, `2·(l%4) + r%2 + 8·(r/4)`) | 8 |
//! | `16x32bx2`| (`l%16`, `r + (C/2)·(l/16)`): the two halves of the warp take the two halves of the columns (`immHalfSplitoff` = C/2) | 1 (per half) |
//!
//! A 16-bit tile (`bf16`/`f16`) in one of these layouts names the same (row, column) per
//! register; it moves as 32-bit words of two column-adjacent elements, with the shape whose
//! 32-bit map is the pairs' (`word_shape`): `32x32b` and `16x32bx2` keep theirs, `16x256b`
//! becomes `16x128b` (its register pairs `r, r+1` are adjacent columns); `16x64b` and
//! `16x128b` hold no column-adjacent pairs and cannot move 16-bit tiles.

use super::tile::{LayoutError, Mode, RegLayout};

/// A `.shape` of `tcgen05.ld` / `tcgen05.st` (§9.7.16.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TmemShape {
    /// `.32x32b`: 32 lanes × 32 bits per `.x1`.
    S32x32b,
    /// `.16x64b`: 16 lanes × 64 bits.
    S16x64b,
    /// `.16x128b`: 16 lanes × 128 bits.
    S16x128b,
    /// `.16x256b`: 16 lanes × 256 bits.
    S16x256b,
    /// `.16x32bx2`: two 16 lanes × 32 bits blocks, the second `immHalfSplitoff` columns on.
    S16x32bx2,
}

fn mode(size: u32, row: u32, col: u32) -> Mode {
    Mode {
        size,
        stride: [row, col],
    }
}

impl TmemShape {
    /// Every shape, in the ISA's order.
    pub const ALL: [TmemShape; 5] = [
        TmemShape::S16x64b,
        TmemShape::S16x128b,
        TmemShape::S16x256b,
        TmemShape::S32x32b,
        TmemShape::S16x32bx2,
    ];

    /// The PTX modifier (`32x32b`, …) and the DSL layout name (`tmem_32x32b`, …).
    pub fn name(self) -> &'static str {
        match self {
            TmemShape::S32x32b => "32x32b",
            TmemShape::S16x64b => "16x64b",
            TmemShape::S16x128b => "16x128b",
            TmemShape::S16x256b => "16x256b",
            TmemShape::S16x32bx2 => "16x32bx2",
        }
    }

    /// The shape named by a DSL layout (`tmem_16x256b`).
    pub fn from_layout_name(s: &str) -> Option<TmemShape> {
        let s = s.strip_prefix("tmem_")?;
        TmemShape::ALL.into_iter().find(|t| t.name() == s)
    }

    /// TMEM lanes one instruction covers.
    pub fn lanes(self) -> u32 {
        if self == TmemShape::S32x32b { 32 } else { 16 }
    }

    /// 32-bit columns one `.x1` covers (per half for `16x32bx2`).
    pub fn width(self) -> u32 {
        match self {
            TmemShape::S32x32b | TmemShape::S16x32bx2 => 1,
            TmemShape::S16x64b => 2,
            TmemShape::S16x128b => 4,
            TmemShape::S16x256b => 8,
        }
    }

    /// Registers per thread of one `.x1`.
    pub fn regs_per_rep(self) -> u32 {
        match self {
            TmemShape::S16x128b => 2,
            TmemShape::S16x256b => 4,
            _ => 1,
        }
    }

    /// The 32-bit columns of a row one instruction of a warp covers per `.x1` (both halves
    /// of `16x32bx2`).
    pub fn cols_per_rep(self) -> u32 {
        if self == TmemShape::S16x32bx2 {
            2
        } else {
            self.width()
        }
    }

    /// The shape that moves a 16-bit tile of this layout as words of two column-adjacent
    /// elements, if its registers pair up (see the module docs).
    pub fn word_shape(self) -> Option<TmemShape> {
        match self {
            TmemShape::S32x32b | TmemShape::S16x32bx2 => Some(self),
            TmemShape::S16x256b => Some(TmemShape::S16x128b),
            TmemShape::S16x64b | TmemShape::S16x128b => None,
        }
    }

    /// The layout of a `[128, cols]` tile over one warpgroup moved with this shape (see the
    /// module docs); `cols` must be a multiple of the shape's columns per `.x1`.
    pub fn layout(self, cols: u32) -> Result<RegLayout, LayoutError> {
        let per = self.cols_per_rep();
        if cols == 0 || !cols.is_multiple_of(per) {
            return Err(LayoutError::TmemShape {
                shape: self.name(),
                cols,
                per,
            });
        }
        let warps = mode(4, 32, 0);
        let half = mode(2, 16, 0);
        let (threads, values) = match self {
            TmemShape::S32x32b => return Ok(RegLayout::tmem_32x32b(cols)),
            TmemShape::S16x64b => (
                vec![mode(2, 8, 0), mode(2, 0, 1), mode(8, 1, 0), warps],
                vec![mode(cols / 2, 0, 2), half],
            ),
            TmemShape::S16x128b => (
                vec![mode(4, 0, 1), mode(8, 1, 0), warps],
                vec![mode(2, 8, 0), mode(cols / 4, 0, 4), half],
            ),
            TmemShape::S16x256b => (
                vec![mode(4, 0, 2), mode(8, 1, 0), warps],
                vec![mode(2, 0, 1), mode(2, 8, 0), mode(cols / 8, 0, 8), half],
            ),
            TmemShape::S16x32bx2 => (
                vec![mode(16, 1, 0), mode(2, 0, cols / 2), warps],
                vec![mode(cols / 2, 0, 1), half],
            ),
        };
        Ok(RegLayout {
            threads,
            values: values.into_iter().filter(|m| m.size > 1).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::TmemShape;
    use std::collections::HashSet;

    /// Every element of the tile is held once, and warp `w` holds rows of its lane quarter.
    #[test]
    fn each_layout_covers_the_tile_once_within_the_lane_quarters() {
        for s in TmemShape::ALL {
            for cols in [8, 16, 32, 64, 128] {
                let l = s.layout(cols).unwrap();
                assert_eq!(l.thread_count(), 128, "{s:?}");
                let mut seen = HashSet::new();
                for t in 0..128 {
                    let o = l.thread_coord(t);
                    for i in 0..l.value_count() {
                        let v = l.value_coord(i);
                        let (r, c) = (o[0] + v[0], o[1] + v[1]);
                        assert!(r < 128 && c < cols, "{s:?} {cols}: ({r}, {c})");
                        assert_eq!(r / 32, t / 32 % 4, "{s:?}: thread {t} row {r}");
                        assert!(seen.insert((r, c)), "{s:?} {cols}: ({r}, {c}) twice");
                    }
                }
                assert_eq!(seen.len() as u32, 128 * cols);
            }
        }
    }

    /// The first instruction's registers (lane `l` of warp 0, `.x1`) hold what the ISA's
    /// figures give.
    #[test]
    fn the_first_registers_are_the_figures() {
        let at = |s: TmemShape, t: u32, i: u32| {
            let l = s.layout(16).unwrap();
            let (o, v) = (l.thread_coord(t), l.value_coord(i));
            (o[0] + v[0], o[1] + v[1])
        };
        assert_eq!(at(TmemShape::S16x256b, 5, 0), (1, 2));
        assert_eq!(at(TmemShape::S16x256b, 5, 3), (9, 3));
        assert_eq!(at(TmemShape::S16x256b, 5, 4), (1, 10));
        assert_eq!(at(TmemShape::S16x128b, 3, 1), (8, 3));
        assert_eq!(at(TmemShape::S16x64b, 1, 0), (8, 0));
        assert_eq!(at(TmemShape::S16x64b, 2, 1), (0, 3));
        assert_eq!(at(TmemShape::S16x32bx2, 19, 2), (3, 10));
        // The second 16-lane half follows the first half's registers.
        assert_eq!(at(TmemShape::S16x256b, 0, 8), (16, 0));
    }

    #[test]
    fn layout_names_round_trip() {
        for s in TmemShape::ALL {
            let n = format!("tmem_{}", s.name());
            assert_eq!(TmemShape::from_layout_name(&n), Some(s));
        }
        assert_eq!(TmemShape::from_layout_name("tmem_8x8b"), None);
    }
}
