//! A kernel's parameter bytes ([`ParamBuffer`]) and the `kernelParams` array that points into
//! them ([`ParamPointers`]), as `cuLaunchKernelEx` takes them (CUDA Driver API §6.22).
//!
//! Invariants: the buffer's bytes follow the plan's layout (`LaunchPlan::param_offsets`, C
//! struct layout from offset 0) and start 128-aligned in host memory, so every parameter — a
//! TMA descriptor's 64-byte alignment included — sits at its natural alignment. A buffer is
//! filled once, when its launch is prepared, and only read afterwards: a kept launch hands the
//! same bytes to every launch of it.

use std::ffi::c_void;

use crate::plan::{LaunchPlan, PlannedParam};

/// A kernel's parameter bytes, laid out as the plan says, with the buffer's start aligned to
/// 128 bytes so every parameter sits at its natural alignment in host memory too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamBuffer {
    storage: Vec<u8>,
    start: usize,
    offsets: Vec<usize>,
    len: usize,
}

impl ParamBuffer {
    /// Fills the buffer from `plan`; `maps` holds the encoded descriptors of the plan's
    /// `TensorMap` parameters, in order.
    pub fn new(plan: &LaunchPlan, maps: &[[u8; 128]]) -> ParamBuffer {
        let mut storage = vec![0u8; plan.param_bytes + 128];
        let start = storage.as_ptr().align_offset(128).min(128);
        let mut maps = maps.iter();
        for (param, &offset) in plan.params.iter().zip(&plan.param_offsets) {
            let at = start + offset;
            match param {
                PlannedParam::TensorMap { .. } => {
                    let map = maps
                        .next()
                        .expect("one encoded descriptor per TensorMap parameter");
                    storage[at..at + 128].copy_from_slice(map);
                }
                PlannedParam::Pointer(v) | PlannedParam::Stride(v) => {
                    storage[at..at + 8].copy_from_slice(&v.to_ne_bytes());
                }
                PlannedParam::Dim(v) | PlannedParam::Scalar(v) => {
                    storage[at..at + 4].copy_from_slice(&v.to_ne_bytes())
                }
                PlannedParam::Scalar64(v) => storage[at..at + 8].copy_from_slice(&v.to_ne_bytes()),
            }
        }
        ParamBuffer {
            storage,
            start,
            offsets: plan.param_offsets.clone(),
            len: plan.param_bytes,
        }
    }

    /// The parameter bytes, from offset 0.
    pub fn bytes(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    /// One pointer per parameter, to its bytes: the `kernelParams` array of a launch. The
    /// pointers are `*mut` because the driver's prototype says so; the driver only reads
    /// through them (it copies the parameters before `cuLaunchKernelEx` returns).
    pub(crate) fn pointers(&self) -> ParamPointers {
        let base = self.storage.as_ptr().wrapping_add(self.start);
        let at = |o: usize| base.wrapping_add(o).cast::<c_void>().cast_mut();
        let mut out = ParamPointers {
            inline: [std::ptr::null_mut(); INLINE_PARAMS],
            len: self.offsets.len(),
            heap: Vec::new(),
        };
        if out.len <= INLINE_PARAMS {
            for (p, &o) in out.inline.iter_mut().zip(&self.offsets) {
                *p = at(o);
            }
        } else {
            out.heap = self.offsets.iter().map(|&o| at(o)).collect();
        }
        out
    }
}

/// Parameters whose `kernelParams` array a launch keeps on the stack; a kernel with more (none
/// of the shipped ones has over 20) pays one allocation per launch.
const INLINE_PARAMS: usize = 32;

/// The `kernelParams` array of one launch ([`ParamBuffer::pointers`]): on the stack for up to
/// [`INLINE_PARAMS`] parameters, else on the heap.
pub(crate) struct ParamPointers {
    inline: [*mut c_void; INLINE_PARAMS],
    len: usize,
    /// The pointers when there are more than fit inline (else empty, never allocated).
    heap: Vec<*mut c_void>,
}

impl ParamPointers {
    /// The pointers, one per parameter.
    pub(crate) fn as_slice(&self) -> &[*mut c_void] {
        if self.len <= INLINE_PARAMS {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    /// The array as the driver takes it.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut *mut c_void {
        if self.len <= INLINE_PARAMS {
            self.inline.as_mut_ptr()
        } else {
            self.heap.as_mut_ptr()
        }
    }
}
