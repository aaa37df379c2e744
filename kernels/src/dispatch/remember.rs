//! Choices remembered for the process: the host entry points (`gemm::host`, `row_kernels::host`,
//! the Python binding) judge the whole catalogue once per distinct call, not on every call.
//!
//! Judging every artifact costs tens of µs of host time per call (about 90 µs for a fused
//! GEMM over the catalogue on the build machine, in release), more than a decode GEMM takes on
//! the GPU: a loop of short calls was bound by the choice, not by the kernel.
//!
//! Invariants:
//! - The key holds everything the judgement reads: the device (name, target, SM count), the
//!   problem in words (`ProblemDef::describe`: family, epilogue, types, shape), and per tensor
//!   its type, shape, strides and address alignment up to 256 bytes (what the launch planner
//!   can tell apart: TMA needs 16), and per scalar whether it is 0 or 1 (α = 1, β = 0 decide
//!   whether C is read). Two calls with one key get the same choice as a fresh judgement.
//! - A refusal is never remembered (the table is rebuilt for the error), so a call that did
//!   not fit costs the same every time and a later one that fits is judged afresh.
//! - The tune cache is read when a key is first chosen: entries `tirx tune` writes later are
//!   taken by the next process ([`forget`] drops what was remembered).

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Mutex;

use tirx::RuntimeError;
use tirx::runtime::TensorMeta;

use super::{Choice, Device, ProblemDef, choose, tune::Cache};
use crate::catalogue;

static REMEMBERED: Mutex<Option<HashMap<String, Choice>>> = Mutex::new(None);

/// The key of a call: see the module's invariants.
pub fn key(
    problem: &dyn ProblemDef,
    tensors: &[&TensorMeta],
    scalars: &[f32],
    device: &Device,
) -> String {
    let mut key = format!(
        "{}|{:?}|{}|{}",
        device.name,
        device.target,
        device.limits.sm_count,
        problem.describe()
    );
    for m in tensors {
        let align = m.addr.trailing_zeros().min(8);
        let _ = write!(key, "|{:?}{:?}{:?}@{align}", m.elem, m.shape, m.strides);
    }
    for s in scalars {
        key.push(match *s {
            0.0 => '0',
            1.0 => '1',
            _ => 'x',
        });
    }
    key
}

/// [`choose`] over the catalogue with the host's tune cache, remembered for the process under
/// [`key`]: a repeated call skips the judging.
pub fn choose_remembered(
    problem: &dyn ProblemDef,
    tensors: &[&TensorMeta],
    scalars: &[f32],
    device: &Device,
) -> Result<Choice, RuntimeError> {
    let key = key(problem, tensors, scalars, device);
    let known = REMEMBERED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&key).copied());
    if let Some(choice) = known {
        return Ok(choice);
    }
    let choice = choose(problem, &catalogue::all(), device, Cache::host())?;
    REMEMBERED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, choice);
    Ok(choice)
}

/// Drops every remembered choice (the next call of each key is judged again).
pub fn forget() {
    *REMEMBERED.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Whether a choice is remembered under `key` (tests).
pub fn is_remembered(key: &str) -> bool {
    REMEMBERED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .is_some_and(|m| m.contains_key(key))
}
