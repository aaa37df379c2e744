//! The artifacts this thread chose, kept by the words of the call (issue #32): a repeated
//! Python call of the same op on tensors of the same layout finds its artifact by hashing a few
//! dozen integers, without building the dispatcher's request, its key text, the device's
//! description, or taking the dispatcher's lock.
//!
//! `dispatch::choose_remembered` remembers choices for the process already, but its key is
//! text (`ProblemDef::describe` and each tensor's `Debug` form) behind a global lock: 2.8 µs
//! (softmax) to 4.2 µs (GEMM) per call on the H200, as long as the kernel of a small call.
//! This is its per-thread front: a miss asks it, a hit never does.
//!
//! Invariants:
//! - The words hold everything `choose_remembered`'s key holds and more: the device (its
//!   ordinal in this process: one primary context, one device), which op with every option it
//!   carries (activation, layout, causal, head dims, ε, α, β, the softmax scale: exact bits),
//!   and per tensor its element type, shape, strides and address alignment up to 256 bytes
//!   (the same classes as the dispatcher's key). So two calls with equal words get what a
//!   fresh choice would give them.
//! - Ops are destructured without `..`: a field added to one of them does not compile here
//!   until it is put into the words (or, for an op not kept here, until its absence is
//!   reconsidered).
//! - Only accepted choices are kept; a refusal is rebuilt, with its table, on every call.
//! - At most [`KEPT`] choices per thread; past that the thread starts over.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use tirx::KernelArtifact;
use tirx::runtime::{TensorMeta, WordHasher};

use crate::ops::{Fp8Scales, Gemm, GemmFp8, Op};

/// Choices a thread keeps; past this many it starts over.
pub const KEPT: usize = 4096;

thread_local! {
    static CHOSEN: RefCell<Chosen> = RefCell::new(Chosen::default());
}

#[derive(Default)]
struct Chosen {
    /// Kept choices by their words.
    map: HashMap<Box<[u64]>, &'static KernelArtifact, BuildHasherDefault<WordHasher>>,
    /// The words of the call being chosen (reused: a hit allocates nothing).
    words: Vec<u64>,
}

/// The artifact chosen for `op` on device `ordinal` before, on this thread, if any; `None` for
/// an op not kept here (Blackwell's block-scaled GEMM).
pub fn get(op: &Op, ordinal: usize) -> Option<&'static KernelArtifact> {
    CHOSEN.with_borrow_mut(|c| {
        c.words.clear();
        if !words(op, ordinal, &mut c.words) {
            return None;
        }
        c.map.get(c.words.as_slice()).copied()
    })
}

/// Keeps `artifact` as the choice for `op` on device `ordinal` (nothing for an op not kept).
pub fn keep(op: &Op, ordinal: usize, artifact: &'static KernelArtifact) {
    CHOSEN.with_borrow_mut(|c| {
        c.words.clear();
        if !words(op, ordinal, &mut c.words) {
            return;
        }
        if c.map.len() >= KEPT {
            c.map.clear();
        }
        let key = c.words.clone().into_boxed_slice();
        c.map.insert(key, artifact);
    })
}

/// How many choices this thread keeps (tests).
#[cfg(test)]
pub fn len() -> usize {
    CHOSEN.with_borrow(|c| c.map.len())
}

/// Pushes the words of `op` on device `ordinal`; `false` for an op not kept here.
fn words(op: &Op, ordinal: usize, out: &mut Vec<u64>) -> bool {
    out.push(ordinal as u64);
    match op {
        Op::Gemm(Gemm {
            layout,
            a,
            b,
            c,
            bias,
            res,
            d,
            scaled,
        }) => {
            out.push(1);
            out.push(*layout as u64);
            tensor(out, Some(a));
            tensor(out, Some(b));
            tensor(out, c.as_ref());
            match bias {
                Some((m, act)) => {
                    out.push(1 + *act as u64);
                    tensor(out, Some(m));
                }
                None => out.push(0),
            }
            tensor(out, res.as_ref());
            tensor(out, Some(d));
            match scaled {
                Some((alpha, beta)) => {
                    out.extend([1, u64::from(alpha.to_bits()), u64::from(beta.to_bits())])
                }
                None => out.push(0),
            }
        }
        Op::Row {
            op,
            x,
            w,
            b,
            y,
            eps,
        } => {
            out.extend([2, *op as u64, u64::from(eps.to_bits())]);
            for t in [Some(x), w.as_ref(), b.as_ref(), Some(y)] {
                tensor(out, t);
            }
        }
        Op::SiluMul { x, g, y } => {
            out.push(3);
            for t in [x, g, y] {
                tensor(out, Some(t));
            }
        }
        Op::Attention {
            tensors,
            d,
            dv,
            causal,
            scale,
        } => {
            out.extend([
                4,
                *d as u64,
                *dv as u64,
                u64::from(*causal),
                u64::from(scale.to_bits()),
            ]);
            for t in tensors {
                tensor(out, Some(t));
            }
        }
        Op::GemmFp8(GemmFp8 {
            a,
            b,
            scales,
            values_on_device,
            d,
            accum,
        }) => {
            out.extend([5, *accum as u64, u64::from(*values_on_device)]);
            match scales {
                // The values are launch parameters; kept anyway (exact bits), so a kept
                // choice never outlives anything the request carried.
                Fp8Scales::Tensor(x, y) => {
                    out.extend([1, u64::from(x.to_bits()), u64::from(y.to_bits())])
                }
                Fp8Scales::Rows(sa, sb) => {
                    out.push(2);
                    tensor(out, Some(sa));
                    tensor(out, Some(sb));
                }
                Fp8Scales::Blocks(sa, sb) => {
                    out.push(3);
                    tensor(out, Some(sa));
                    tensor(out, Some(sb));
                }
                Fp8Scales::BlocksMn(sa, sb) => {
                    out.push(4);
                    tensor(out, Some(sa));
                    tensor(out, Some(sb));
                }
            }
            for t in [a, b, d] {
                tensor(out, Some(t));
            }
        }
        // Blackwell's block-scaled request (sm_100a only: no device here takes it) carries a
        // whole `GemmRequest`; it asks `choose_remembered` on every call.
        Op::BlockScaled(_) => return false,
    }
    true
}

/// A tensor's words: present, element type, rank, shape, strides, address alignment (the
/// dispatcher's key's classes: trailing zero bits, up to 8).
fn tensor(out: &mut Vec<u64>, t: Option<&TensorMeta>) {
    let Some(m) = t else {
        out.push(0);
        return;
    };
    out.extend([
        1,
        m.elem as u64,
        u64::from(m.addr.trailing_zeros().min(8)),
        m.shape.len() as u64,
    ]);
    out.extend(m.shape.iter().map(|&n| n as u64));
    out.extend(m.strides.iter().map(|&s| s as u64));
}
