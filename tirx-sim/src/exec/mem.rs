//! Address spaces: where an address points, and loads and stores with bounds and alignment
//! checks (PTX ISA §5.1 "State Spaces", §6.4.1 "Addresses as Operands", §9.7.9 `ld`,
//! §9.7.9 `st`, §9.7.9 `cvta`, §9.7.9 `mapa`).
//!
//! The emulator's address map (64-bit generic addresses):
//!
//! | window | generic addresses | the space's own addresses |
//! |---|---|---|
//! | shared::cta | [`SHARED_GENERIC`] + offset | offset in `[SMEM_BASE, window end)` |
//! | shared::cluster | the same, with the CTA rank in bits 24.. | `(rank + 1) << 24 \| offset` from `mapa`; a plain offset is the executing CTA |
//! | param | [`PARAM_GENERIC`] + offset | offset in the parameter buffer |
//! | global | everything else | the address itself (allocations from `GLOBAL_BASE`) |
//!
//! The first [`SMEM_BASE`] bytes of the shared window are unmapped, so a null or small
//! shared pointer faults. Every access must be aligned to its full size (the vector's, for
//! `.v2`/`.v4`), as §5.4.5 requires; a misaligned access is an error, not a silent split.

use super::diag::{SimError, Space, ThreadId};
use super::ops::MemSpace;

/// The first mapped offset of a CTA's shared window.
pub const SMEM_BASE: u32 = 0x400;
/// Generic address of shared offset 0 of the executing CTA.
pub const SHARED_GENERIC: u64 = 0x1000_0000_0000;
/// Generic address of parameter offset 0.
pub const PARAM_GENERIC: u64 = 0x2000_0000_0000;
/// Size of each generic window.
const WINDOW: u64 = 1 << 32;
/// Bit where a `shared::cluster` address keeps the target CTA's rank (plus one).
pub const RANK_SHIFT: u32 = 24;

/// A resolved location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loc {
    /// Global memory at this address.
    Global(u64),
    /// Shared memory of the cluster's CTA `cta` (its rank) at offset `off`.
    Shared { cta: u32, off: u32 },
    /// The parameter buffer at this offset.
    Param(u32),
}

/// Where `addr`, used with `space` by the CTA of cluster rank `own`, points.
pub(crate) fn resolve(space: MemSpace, addr: u64, own: u32) -> Result<Loc, (Space, u64)> {
    let shared = |a: u64| -> Result<Loc, (Space, u64)> {
        let a32 = u32::try_from(a).map_err(|_| (Space::Shared, a))?;
        let hi = a32 >> RANK_SHIFT;
        let off = a32 & ((1 << RANK_SHIFT) - 1);
        Ok(Loc::Shared {
            cta: if hi == 0 { own } else { hi - 1 },
            off,
        })
    };
    match space {
        MemSpace::Global => Ok(Loc::Global(addr)),
        MemSpace::Param => u32::try_from(addr)
            .map(Loc::Param)
            .map_err(|_| (Space::Param, addr)),
        MemSpace::SharedCta => {
            // A shared::cta address names the executing CTA only.
            match shared(addr)? {
                Loc::Shared { cta, off } if cta == own => Ok(Loc::Shared { cta, off }),
                _ => Err((Space::Shared, addr)),
            }
        }
        MemSpace::SharedCluster => shared(addr),
        MemSpace::Generic => {
            if (SHARED_GENERIC..SHARED_GENERIC + WINDOW).contains(&addr) {
                shared(addr - SHARED_GENERIC)
            } else if (PARAM_GENERIC..PARAM_GENERIC + WINDOW).contains(&addr) {
                Ok(Loc::Param((addr - PARAM_GENERIC) as u32))
            } else {
                Ok(Loc::Global(addr))
            }
        }
    }
}

/// `cvta.space` (to generic) of a space address.
pub(crate) fn to_generic(space: MemSpace, addr: u64) -> u64 {
    match space {
        MemSpace::SharedCta | MemSpace::SharedCluster => SHARED_GENERIC + (addr & 0xffff_ffff),
        MemSpace::Param => PARAM_GENERIC + (addr & 0xffff_ffff),
        MemSpace::Global | MemSpace::Generic => addr,
    }
}

/// `cvta.to.space` of a generic address.
pub(crate) fn from_generic(space: MemSpace, addr: u64) -> u64 {
    match space {
        MemSpace::SharedCta | MemSpace::SharedCluster => addr.wrapping_sub(SHARED_GENERIC),
        MemSpace::Param => addr.wrapping_sub(PARAM_GENERIC),
        MemSpace::Global | MemSpace::Generic => addr,
    }
}

/// `mapa.shared::cluster`: the address of offset `addr` (of any CTA) in CTA `rank`.
pub(crate) fn mapa(addr: u64, rank: u32) -> u64 {
    let off = addr & ((1 << RANK_SHIFT) - 1);
    (u64::from(rank + 1) << RANK_SHIFT) | off
}

/// The bytes `[off, off+len)` of a shared window, if mapped.
pub(crate) fn smem_range(smem_len: usize, off: u32, len: u32) -> Option<std::ops::Range<usize>> {
    let start = off as usize;
    let end = start.checked_add(len as usize)?;
    (off >= SMEM_BASE && end <= smem_len).then_some(start..end)
}

/// The alignment error, or `Ok`.
pub(crate) fn check_align(
    line: u32,
    thread: ThreadId,
    space: Space,
    addr: u64,
    size: u32,
) -> Result<(), SimError> {
    if addr.is_multiple_of(u64::from(size)) {
        Ok(())
    } else {
        Err(SimError::Misaligned {
            line,
            thread,
            space,
            addr,
            align: size,
        })
    }
}

/// Reads `len ≤ 8` little-endian bytes as an integer.
pub(crate) fn le_read(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |acc, &x| (acc << 8) | u64::from(x))
}

/// Writes the low `b.len()` bytes of `v`, little-endian.
pub(crate) fn le_write(b: &mut [u8], v: u64) {
    for (i, x) in b.iter_mut().enumerate() {
        // Bytes past the 8 of `v` (a 16-byte slot) are zero.
        *x = v.checked_shr(8 * i as u32).unwrap_or(0) as u8;
    }
}
