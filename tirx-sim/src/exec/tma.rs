//! The tensor memory accelerator: tensor maps and `cp.async.bulk.tensor` tile copies
//! (PTX ISA §5.5 "Tensors": tensor, bounding box, traversal, out-of-bounds access, swizzling
//! modes; §9.7.9.25 `cp.async.bulk.tensor`).
//!
//! A [`TensorMapDesc`] holds exactly the arguments the runtime passes to
//! `cuTensorMapEncodeTiled` (CUDA Driver API §6.30): data type, rank, global address,
//! dimensions and byte strides innermost first, box dimensions, element strides, swizzle and
//! out-of-bounds fill. The emulator never sees an encoded `CUtensorMap`; the kernel's
//! 128-byte tensor-map parameter stands for the description passed with it.
//!
//! Box layout in shared memory (§5.5): the box's elements in order, innermost dimension
//! fastest, densely packed from the destination address; then the swizzle permutes 16-byte
//! chunks by the address bits above them:
//!
//! | mode | the 16-byte chunk index, address bits | is XORed with bits |
//! |---|---|---|
//! | 32B  | [4]   | [7]   |
//! | 64B  | [5:4] | [8:7] |
//! | 128B | [6:4] | [9:7] |
//!
//! i.e. within each span (32/64/128 bytes), row `r` of 128-byte rows has its chunks
//! permuted by `r mod (span/16)`; the pattern repeats every 256/512/1024 bytes, which is why
//! the buffer is aligned to that. The mapping uses the shared-memory address itself, so a
//! buffer at a smaller alignment gets the pattern the hardware would give it.
//!
//! Out of bounds (§5.5 "out-of-bounds access"): a load writes the fill value (zero, or a
//! NaN for `OobFill::Nan` on float types) for each element outside the tensor; a store
//! skips it. The mbarrier of a load is signalled with the full box's bytes either way.

use super::device::Device;

/// Shared-memory swizzle of a tensor map (`CUtensorMapSwizzle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaSwizzle {
    /// No swizzle.
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle.
    B128,
}

impl TmaSwizzle {
    /// The span in bytes (the widest inner box row it allows), or `None`.
    pub fn span(self) -> Option<u32> {
        match self {
            TmaSwizzle::None => None,
            TmaSwizzle::B32 => Some(32),
            TmaSwizzle::B64 => Some(64),
            TmaSwizzle::B128 => Some(128),
        }
    }

    /// Where the byte at shared-memory address `addr` of the unswizzled box lands.
    pub fn apply(self, addr: u32) -> u32 {
        let mask = match self {
            TmaSwizzle::None => return addr,
            TmaSwizzle::B32 => 0x1,
            TmaSwizzle::B64 => 0x3,
            TmaSwizzle::B128 => 0x7,
        };
        addr ^ (((addr >> 7) & mask) << 4)
    }
}

/// The element type of a tensor map (`CUtensorMapDataType`, the ones tirx uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaElem {
    /// 8-bit unsigned.
    U8,
    /// 16-bit unsigned.
    U16,
    /// 32-bit unsigned.
    U32,
    /// 32-bit signed (what a reduce-store's `min`/`max` compares as).
    I32,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single.
    F32,
    /// 64-bit unsigned (an `i64`/`u64` tensor's words, moved as bits).
    U64,
}

impl TmaElem {
    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            TmaElem::U8 => 1,
            TmaElem::U16 | TmaElem::F16 | TmaElem::Bf16 => 2,
            TmaElem::U32 | TmaElem::I32 | TmaElem::F32 => 4,
            TmaElem::U64 => 8,
        }
    }
    fn nan(self) -> Option<u64> {
        match self {
            TmaElem::F16 | TmaElem::Bf16 => Some(0x7fff),
            TmaElem::F32 => Some(0x7fff_ffff),
            _ => None,
        }
    }
}

/// Out-of-bounds fill (`CUtensorMapFloatOOBfill`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OobFill {
    /// Zeros (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`).
    Zero,
    /// A NaN for float types (`…_NAN_REQUEST_ZERO_FMA`).
    Nan,
}

/// The arguments of `cuTensorMapEncodeTiled`, innermost dimension first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapDesc {
    /// `tensorDataType`.
    pub elem: TmaElem,
    /// `globalAddress`.
    pub global_address: u64,
    /// `globalDim`, innermost first.
    pub dims: Vec<u64>,
    /// `globalStrides`: byte strides of dimensions 1.. (rank − 1 entries).
    pub strides_bytes: Vec<u64>,
    /// `boxDim`, innermost first.
    pub box_dims: Vec<u32>,
    /// `elementStrides` (only all-ones is supported).
    pub element_strides: Vec<u32>,
    /// `swizzle`.
    pub swizzle: TmaSwizzle,
    /// `oobFill`.
    pub oob_fill: OobFill,
}

impl TensorMapDesc {
    /// Checks the encoder's rules (CUDA Driver API §6.30, `cuTensorMapEncodeTiled`): rank
    /// 1..=5, box extents 1..=256, the inner box row a multiple of 16 bytes and within the
    /// swizzle span, a 16-byte aligned base, byte strides multiples of 16 below 2^40.
    pub fn validate(&self) -> Result<(), String> {
        let rank = self.dims.len();
        if !(1..=5).contains(&rank) {
            return Err(format!("rank {rank} is not in 1..=5"));
        }
        if self.box_dims.len() != rank || self.strides_bytes.len() != rank - 1 {
            return Err("box, dims and strides disagree on the rank".to_owned());
        }
        if self.element_strides.len() != rank || self.element_strides.iter().any(|&e| e != 1) {
            return Err("element strides other than 1 are not supported".to_owned());
        }
        if let Some(b) = self.box_dims.iter().find(|b| !(1..=256).contains(*b)) {
            return Err(format!("box extent {b} is not in 1..=256"));
        }
        if let Some(d) = self.dims.iter().find(|d| **d == 0 || **d > 1 << 32) {
            return Err(format!("tensor extent {d} is not in 1..=2^32"));
        }
        let inner = self.box_dims[0] * self.elem.bytes();
        if !inner.is_multiple_of(16) {
            return Err(format!(
                "inner box row of {inner} bytes is not a multiple of 16"
            ));
        }
        if let Some(span) = self.swizzle.span()
            && inner > span
        {
            return Err(format!(
                "inner box row of {inner} bytes exceeds the {span}-byte swizzle span"
            ));
        }
        // The hardware lays a swizzled box's rows one span apart: a narrower row would make
        // the box cover more shared memory than its bytes (an H100 faulted on a 64-byte row
        // under the 128-byte swizzle, 2026-12-06), which the packed model below does not.
        if let Some(span) = self.swizzle.span()
            && inner < span
        {
            return Err(format!(
                "inner box row of {inner} bytes is narrower than the {span}-byte swizzle span"
            ));
        }
        if !self.global_address.is_multiple_of(16) {
            return Err(format!(
                "global address {:#x} is not 16-byte aligned",
                self.global_address
            ));
        }
        if let Some(s) = self
            .strides_bytes
            .iter()
            .find(|s| !s.is_multiple_of(16) || **s >= 1 << 40)
        {
            return Err(format!(
                "stride of {s} bytes is not a multiple of 16 below 2^40"
            ));
        }
        Ok(())
    }

    /// Bytes of one box: what a load signals on its mbarrier.
    pub fn box_bytes(&self) -> u32 {
        self.box_dims.iter().product::<u32>() * self.elem.bytes()
    }

    /// The global address of element `coords` (innermost first), or `None` when outside the
    /// tensor.
    fn element_addr(&self, coords: &[i64]) -> Option<u64> {
        let mut addr = self.global_address;
        for (d, &c) in coords.iter().enumerate() {
            if c < 0 || c as u64 >= self.dims[d] {
                return None;
            }
            let stride = if d == 0 {
                u64::from(self.elem.bytes())
            } else {
                self.strides_bytes[d - 1]
            };
            addr += c as u64 * stride;
        }
        Some(addr)
    }

    /// Calls `f(linear index, global address or None)` for each element of the box at
    /// `start`, innermost fastest.
    fn for_each<E>(
        &self,
        start: &[i64],
        mut f: impl FnMut(u32, Option<u64>) -> Result<(), E>,
    ) -> Result<(), E> {
        let rank = self.box_dims.len();
        let total: u32 = self.box_dims.iter().product();
        let mut idx = vec![0u32; rank];
        let mut coords = vec![0i64; rank];
        for linear in 0..total {
            for ((c, &s), &i) in coords.iter_mut().zip(start).zip(&idx) {
                *c = s + i64::from(i);
            }
            f(linear, self.element_addr(&coords))?;
            for (i, &extent) in idx.iter_mut().zip(&self.box_dims) {
                *i += 1;
                if *i < extent {
                    break;
                }
                *i = 0;
            }
        }
        Ok(())
    }
}

/// A failed access of an asynchronous copy: (space is shared, address).
pub(crate) enum CopyFault {
    Global(u64),
    Shared(u32),
}

/// Copies the box at `start` from global memory into `smem` at offset `dst`: loads of
/// elements outside the tensor write the fill value.
pub(crate) fn load_box(
    map: &TensorMapDesc,
    start: &[i64],
    dev: &Device,
    smem: &mut [u8],
    dst: u32,
) -> Result<(), CopyFault> {
    let eb = map.elem.bytes();
    let fill = match map.oob_fill {
        OobFill::Nan => map.elem.nan().unwrap_or(0),
        OobFill::Zero => 0,
    };
    map.for_each(start, |linear, src| {
        let at = map.swizzle.apply(dst + linear * eb) as usize;
        let out = smem
            .get_mut(at..at + eb as usize)
            .ok_or(CopyFault::Shared(at as u32))?;
        match src {
            Some(a) => out.copy_from_slice(dev.slice(a, eb as usize).ok_or(CopyFault::Global(a))?),
            None => out.copy_from_slice(&fill.to_le_bytes()[..eb as usize]),
        }
        Ok(())
    })
}

/// Copies the box at `start` from `smem` at offset `src` to global memory, skipping
/// elements outside the tensor.
pub(crate) fn store_box(
    map: &TensorMapDesc,
    start: &[i64],
    dev: &mut Device,
    smem: &[u8],
    src: u32,
) -> Result<(), CopyFault> {
    let eb = map.elem.bytes();
    map.for_each(start, |linear, dst| {
        let Some(a) = dst else { return Ok(()) };
        let at = map.swizzle.apply(src + linear * eb) as usize;
        let v = smem
            .get(at..at + eb as usize)
            .ok_or(CopyFault::Shared(at as u32))?;
        dev.slice_mut(a, eb as usize)
            .ok_or(CopyFault::Global(a))?
            .copy_from_slice(v);
        Ok(())
    })
}

/// `cp.reduce.async.bulk.tensor` (§9.7.9.25.5.2): like [`store_box`], each element in the
/// tensor combined with the box's by `op` in the map's type (`atom.rs`'s arithmetic: f32 adds
/// round to nearest even, 16-bit floats as `.noftz`, integers wrap; `min`/`max` signed for
/// i32 maps), each element atomically.
pub(crate) fn reduce_box(
    map: &TensorMapDesc,
    start: &[i64],
    dev: &mut Device,
    smem: &[u8],
    src: u32,
    op: super::atom::AtomOp,
) -> Result<(), CopyFault> {
    use crate::ptx::Type;
    let eb = map.elem.bytes();
    let ty = match map.elem {
        TmaElem::F32 => Type::F32,
        TmaElem::Bf16 => Type::Bf16,
        TmaElem::F16 => Type::F16,
        TmaElem::I32 => Type::S32,
        TmaElem::U32 => Type::U32,
        TmaElem::U64 => Type::U64,
        TmaElem::U8 | TmaElem::U16 => Type::B16,
    };
    map.for_each(start, |linear, dst| {
        let Some(a) = dst else { return Ok(()) };
        let at = map.swizzle.apply(src + linear * eb) as usize;
        let v = smem
            .get(at..at + eb as usize)
            .ok_or(CopyFault::Shared(at as u32))?;
        let b = super::mem::le_read(v);
        let out = dev.slice_mut(a, eb as usize).ok_or(CopyFault::Global(a))?;
        let old = super::mem::le_read(out);
        super::mem::le_write(out, super::atom::apply(op, ty, old, b, 0));
        Ok(())
    })
}

/// The global (address, bytes) of each element of the box at `start` inside the tensor.
pub(crate) fn box_addrs(map: &TensorMapDesc, start: &[i64]) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let eb = map.elem.bytes();
    let _ = map.for_each(start, |_, a| -> Result<(), ()> {
        if let Some(a) = a {
            out.push((a, eb));
        }
        Ok(())
    });
    out
}
