//! [`Device`]: the emulated global memory, a set of allocations with bounds.
//!
//! Addresses are 64-bit, as under `.address_size 64` (PTX ISA §5.1.4 "Global State
//! Space"); allocations start at [`GLOBAL_BASE`], each aligned to 256 bytes (what
//! `cuMemAlloc` guarantees) and separated by an unmapped gap of at least 256 bytes, so an
//! access that runs off the end of one allocation never lands in the next: it is an
//! out-of-bounds error naming the nearest allocation.

use super::diag::{SimError, Space, ThreadId};

/// Where the first allocation lives (away from 0, so a null pointer is out of bounds, and
/// away from the shared and parameter windows, see `mem.rs`).
pub const GLOBAL_BASE: u64 = 0x7f00_0000_0000;

/// One allocation.
#[derive(Clone, Debug)]
struct Alloc {
    base: u64,
    bytes: Vec<u8>,
}

/// The emulated global memory.
#[derive(Clone, Debug, Default)]
pub struct Device {
    allocs: Vec<Alloc>,
}

/// A failed host-side access ([`Device::read`]/[`Device::write`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("host access of {len} bytes at {addr:#x} is outside every allocation")]
pub struct HostAccessError {
    /// The address.
    pub addr: u64,
    /// The length.
    pub len: usize,
}

impl Device {
    /// An empty device.
    pub fn new() -> Device {
        Device::default()
    }

    /// Allocates `bytes` bytes (zeroed), 256-byte aligned; returns the address.
    pub fn alloc(&mut self, bytes: usize) -> u64 {
        let base = match self.allocs.last() {
            None => GLOBAL_BASE,
            Some(a) => (a.base + a.bytes.len() as u64 + 256).next_multiple_of(256),
        };
        self.allocs.push(Alloc {
            base,
            bytes: vec![0; bytes],
        });
        base
    }

    /// Copies `data` to `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), HostAccessError> {
        let len = data.len();
        let slot = self
            .slice_mut(addr, len)
            .ok_or(HostAccessError { addr, len })?;
        slot.copy_from_slice(data);
        Ok(())
    }

    /// Copies `len` bytes from `addr`.
    pub fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, HostAccessError> {
        self.slice(addr, len)
            .map(<[u8]>::to_vec)
            .ok_or(HostAccessError { addr, len })
    }

    fn find(&self, addr: u64) -> Option<usize> {
        // Allocations are sorted by base: the last one starting at or below `addr`.
        let i = self.allocs.partition_point(|a| a.base <= addr);
        i.checked_sub(1)
    }

    /// The bytes `[addr, addr + len)` if one allocation holds all of them.
    pub fn slice(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let a = &self.allocs[self.find(addr)?];
        let off = usize::try_from(addr - a.base).ok()?;
        a.bytes.get(off..off.checked_add(len)?)
    }

    /// Mutable [`Device::slice`].
    pub fn slice_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let i = self.find(addr)?;
        let a = &mut self.allocs[i];
        let off = usize::try_from(addr - a.base).ok()?;
        a.bytes.get_mut(off..off.checked_add(len)?)
    }

    /// The out-of-bounds error for an access by `thread` at `line`, naming the nearest
    /// allocation.
    pub(crate) fn oob(&self, line: u32, thread: ThreadId, addr: u64, size: u32) -> SimError {
        let detail = match self.find(addr).map(|i| &self.allocs[i]) {
            Some(a) => format!(
                "; the allocation below it is [{:#x}, {:#x}), {} bytes",
                a.base,
                a.base + a.bytes.len() as u64,
                a.bytes.len()
            ),
            None => "; no allocation lies below it".to_owned(),
        };
        SimError::OutOfBounds {
            line,
            thread,
            space: Space::Global,
            addr,
            size,
            detail,
        }
    }
}
