//! plan-memory — lays out dynamic shared memory and sizes tensor memory.
//!
//! Phase: Tile. Preconditions: variants chosen. Postconditions:
//! - every barrier has an 8-byte-aligned `offset` (mbarrier objects are 8 bytes, PTX ISA
//!   §9.7.13.15.1); every TMEM buffer has the `offset` of a 4-byte slot that receives its
//!   base address from `tcgen05.alloc`, and `tmem_cols`;
//! - every shared buffer has an `offset` aligned for its swizzle (`Swizzle::align_bytes`:
//!   1024 B for 128B swizzle — the pattern repeats every 8 rows of 128 B and TMA and the MMA
//!   descriptors assume the atom starts at an aligned address);
//! - `sig.smem_bytes` is the total plus 1024 bytes of slack, because the kernel aligns the
//!   dynamic shared-memory base up to 1024 at run time; `sig.tmem_cols` is the TMEM total.
//!
//! A shared buffer declared with `alias = base` is a *view*: another shape over the bytes of
//! the shared buffer `base`, at its offset, with no allocation of its own. It must fit in the
//! base, name the same swizzle, majorness and element size, and each of its tiles (its last
//! two dimensions) must span whole swizzle atoms, so that every tile it indexes starts where
//! an atom starts (the swizzle pattern is a function of the address: a TMA box written
//! through the view lands where the base's MMA descriptor reads it).
//!
//! A TMEM buffer `[stages.., rows, cols]` is allocated as one range of `stages · cols` columns
//! (the stages side by side). Errors (at the declaration that crosses the limit): shared
//! memory over 227 KB; TMEM columns of a buffer not a power of two in 32..=512, or more than 512 in total, or more
//! than 128 rows (TMEM has 128 lanes; PTX ISA §9.7.16.1).

use super::Pass;
use crate::abi::MAX_SMEM_BYTES;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Kernel, Space};

/// The pass.
pub struct PlanMemory;

/// Slack for aligning the dynamic shared-memory base at run time.
pub const BASE_ALIGN: u32 = 1024;

/// A memory budget or TMEM allocation rule a declaration breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// A TMEM buffer of more rows than TMEM has lanes.
    #[error("tensor memory has 128 lanes; `{buffer}` asks for {rows} rows")]
    TmemLanes {
        /// The buffer.
        buffer: String,
        /// Its rows.
        rows: u32,
    },
    /// A TMEM buffer whose column count `tcgen05.alloc` cannot allocate.
    #[error(
        "`{buffer}` needs {cols} TMEM columns; tcgen05.alloc takes a power of two in 32..=512 (use {} columns{})",
        alloc_cols(*.cols),
        if *.cols > 512 { ", or split the tile: 512 is the most a CTA has" } else { "" }
    )]
    TmemColumns {
        /// The buffer.
        buffer: String,
        /// The 32-bit columns it needs.
        cols: u32,
    },
    /// A TMEM buffer that is not rows × columns (with optional leading stages).
    #[error(
        "`{buffer}`: TMEM buffers are rows × columns, with optional leading stages ([S, rows, columns])"
    )]
    TmemRank {
        /// The buffer.
        buffer: String,
    },
    /// A TMEM view (`alias = base`) that is not inside its base's columns and lanes.
    #[error(
        "`{buffer}` is a view of `{base}`: {why}; a view names the first columns of a TMEM buffer declared before it"
    )]
    TmemAlias {
        /// The view.
        buffer: String,
        /// The buffer it names.
        base: String,
        /// What does not fit.
        why: String,
    },
    /// A shared view (`alias = base`) that does not name the base's bytes the way the base
    /// lays them out.
    #[error(
        "`{buffer}` is a view of `{base}`: {why}; a shared view names the bytes of a shared buffer declared before it, with its swizzle and majorness, each tile whole swizzle atoms"
    )]
    SmemAlias {
        /// The view.
        buffer: String,
        /// The buffer it names.
        base: String,
        /// What does not fit.
        why: String,
    },
    /// The TMEM buffers together need more columns than a CTA has.
    #[error("TMEM over budget: {total} columns allocated, a CTA has 512")]
    TmemBudget {
        /// Columns allocated up to and including this buffer.
        total: u32,
    },
    /// An mbarrier array larger than shared memory.
    #[error(
        "shared memory over budget: the mbarriers `{barrier}` ({count} of 8 bytes, {bytes} bytes) do not fit in {} (227 KB)",
        MAX_SMEM_BYTES
    )]
    BarrierBudget {
        /// The barrier array.
        barrier: String,
        /// Its barriers.
        count: u32,
        /// Their bytes.
        bytes: u64,
    },
    /// Shared memory ends past what a CTA can have.
    #[error(
        "shared memory over budget: `{buffer}` ({bytes} bytes) ends at {end} bytes (with {} bytes of alignment slack); a CTA has at most {} (227 KB) — fewer stages or a smaller tile would fit",
        BASE_ALIGN,
        MAX_SMEM_BYTES
    )]
    SmemBudget {
        /// The buffer that crosses the limit.
        buffer: String,
        /// Its size.
        bytes: u64,
        /// Where it ends, with the alignment slack.
        end: u64,
    },
}

/// The column count `tcgen05.alloc` would take for `cols`.
fn alloc_cols(cols: u32) -> u32 {
    cols.next_power_of_two().clamp(32, 512)
}

fn tmem_cols(rows: u32, cols: u32, name: &str) -> Result<u32, MemoryError> {
    if rows > 128 {
        return Err(MemoryError::TmemLanes {
            buffer: name.into(),
            rows,
        });
    }
    if !(32..=512).contains(&cols) || !cols.is_power_of_two() {
        return Err(MemoryError::TmemColumns {
            buffer: name.into(),
            cols,
        });
    }
    Ok(cols)
}

impl Pass for PlanMemory {
    fn name(&self) -> &'static str {
        "plan-memory"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        let mut errs = Vec::new();
        let mut off = 0u32;
        for (_, b) in k.barriers.iter_mut() {
            b.offset = Some(off);
            // Counts come from the user: checked, and over budget long before they overflow.
            match b.count.checked_mul(8).and_then(|n| off.checked_add(n)) {
                Some(end) if end + BASE_ALIGN <= MAX_SMEM_BYTES => off = end,
                _ => {
                    let bytes = u64::from(b.count) * 8;
                    errs.push(Diagnostic::new(
                        b.span,
                        MemoryError::BarrierBudget {
                            barrier: b.name.clone(),
                            count: b.count,
                            bytes,
                        },
                    ));
                    return Err(errs);
                }
            }
        }
        let mut tmem_total = 0u32;
        for (_, b) in k.buffers.iter_mut() {
            // A view takes its base's slot below; it allocates nothing.
            if b.space != Space::Tmem || b.alias.is_some() {
                continue;
            }
            // `[stages.., rows, cols]`: the stages lie side by side along the columns (TMEM's
            // 128 lanes are the rows; PTX ISA §9.7.16.1), so the allocation is their product.
            let (rows, cols) = match (b.layout.shape.as_slice(), b.tmem_tile()) {
                ([stages @ .., _, _], Some((lanes, c))) => {
                    let cols = stages.iter().fold(u64::from(c), |n, &s| n * u64::from(s));
                    (lanes, u32::try_from(cols).unwrap_or(u32::MAX))
                }
                _ => {
                    errs.push(Diagnostic::new(
                        b.span,
                        MemoryError::TmemRank {
                            buffer: b.name.clone(),
                        },
                    ));
                    continue;
                }
            };
            // A block-scale factor tile is a few columns (4 per 128 rows × 4 factors); its
            // allocation is the least `tcgen05.alloc` takes (PTX ISA §9.7.16.7.1: a power
            // of two, at least 32), not an error.
            let cols = if b.elem.is_scale() {
                alloc_cols(cols)
            } else {
                cols
            };
            match tmem_cols(rows, cols, &b.name) {
                Ok(c) => {
                    b.offset = Some(off);
                    off += 4;
                    b.tmem_cols = Some(c);
                    tmem_total += c;
                    if tmem_total > 512 {
                        errs.push(Diagnostic::new(
                            b.span,
                            MemoryError::TmemBudget { total: tmem_total },
                        ));
                    }
                }
                Err(e) => errs.push(Diagnostic::new(b.span, e)),
            }
        }
        plan_views(k, &mut errs);
        for (_, b) in k.buffers.iter_mut() {
            // A view takes its base's offset below; it allocates nothing.
            if b.space != Space::Shared || b.alias.is_some() {
                continue;
            }
            let align = b.layout.swizzle.align_bytes();
            off = off.div_ceil(align) * align;
            b.offset = Some(off);
            let bytes = b.layout.elements() * b.elem.bytes() as u64;
            let end = off as u64 + bytes;
            if end + BASE_ALIGN as u64 > MAX_SMEM_BYTES as u64 {
                errs.push(Diagnostic::new(
                    b.span,
                    MemoryError::SmemBudget {
                        buffer: b.name.clone(),
                        bytes,
                        end: end + BASE_ALIGN as u64,
                    },
                ));
                break;
            }
            off = end as u32;
        }
        plan_smem_views(k, &mut errs);
        k.sig.smem_bytes = if off == 0 { 0 } else { off + BASE_ALIGN };
        k.sig.tmem_cols = tmem_total;
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

/// TMEM views (`alias = base`): each takes its base's address slot, and must fit in the
/// base's lanes and allocated columns (its own columns counted as for an allocation: 16-bit
/// elements two to a column).
fn plan_views(k: &mut Kernel, errs: &mut Vec<Diagnostic>) {
    let views: Vec<_> = k
        .buffers
        .iter()
        .filter_map(|(h, b)| b.alias.map(|a| (h, a)))
        .collect();
    for (h, a) in views {
        let (v, base) = (&k.buffers[h], &k.buffers[a]);
        if v.space == Space::Shared {
            continue; // `plan_smem_views`
        }
        let fail = |why: String| {
            Diagnostic::new(
                v.span,
                MemoryError::TmemAlias {
                    buffer: v.name.clone(),
                    base: base.name.clone(),
                    why,
                },
            )
        };
        let cols = |b: &crate::ir::Buffer| match (b.layout.shape.as_slice(), b.tmem_tile()) {
            ([stages @ .., _, _], Some((r, c))) => Some((r, stages.iter().product::<u32>() * c)),
            _ => None,
        };
        let why = match (cols(v), cols(base), base.tmem_cols) {
            _ if v.space != Space::Tmem || base.space != Space::Tmem || base.alias.is_some() => {
                Some("both must be TMEM buffers, the base not itself a view".to_string())
            }
            (Some((vr, vc)), Some((br, _)), Some(bc)) if vr > br || vc > bc => Some(format!(
                "its {vr} rows × {vc} columns exceed the base's {br} × {bc}"
            )),
            (Some(_), Some(_), Some(_)) => None,
            _ => Some("the base has no TMEM allocation".to_string()),
        };
        if let Some(why) = why {
            errs.push(fail(why));
            continue;
        }
        k.buffers[h].offset = k.buffers[a].offset;
    }
}

/// Shared views (`alias = base`, module docs): each takes its base's offset once the base is
/// placed, and must lay out the base's bytes as the base does.
fn plan_smem_views(k: &mut Kernel, errs: &mut Vec<Diagnostic>) {
    let views: Vec<_> = k
        .buffers
        .iter()
        .filter(|(_, b)| b.space == Space::Shared)
        .filter_map(|(h, b)| b.alias.map(|a| (h, a)))
        .collect();
    for (h, a) in views {
        let (v, base) = (&k.buffers[h], &k.buffers[a]);
        let bytes = |b: &crate::ir::Buffer| b.layout.elements() * b.elem.bytes() as u64;
        let atom = u64::from(v.layout.swizzle.align_bytes());
        let tile = match v.layout.shape.as_slice() {
            [.., r, c] => u64::from(*r) * u64::from(*c) * v.elem.bytes() as u64,
            [c] => u64::from(*c) * v.elem.bytes() as u64,
            [] => 0,
        };
        let why = if base.space != Space::Shared || base.alias.is_some() {
            Some("the base must be a shared buffer, not itself a view".to_string())
        } else if v.layout.swizzle != base.layout.swizzle || v.layout.major != base.layout.major {
            Some("its swizzle or majorness differs from the base's".to_string())
        } else if v.elem.bytes() != base.elem.bytes() {
            Some(format!(
                "its {}-byte elements are not the base's {}-byte ones",
                v.elem.bytes(),
                base.elem.bytes()
            ))
        } else if bytes(v) > bytes(base) {
            Some(format!(
                "its {} bytes exceed the base's {}",
                bytes(v),
                bytes(base)
            ))
        } else if !tile.is_multiple_of(atom) {
            Some(format!(
                "its tiles of {tile} bytes are not whole {atom}-byte swizzle atoms (a tile would start inside one)"
            ))
        } else {
            None
        };
        if let Some(why) = why {
            errs.push(Diagnostic::new(
                v.span,
                MemoryError::SmemAlias {
                    buffer: v.name.clone(),
                    base: base.name.clone(),
                    why,
                },
            ));
            continue;
        }
        k.buffers[h].offset = k.buffers[a].offset;
    }
}
