//! The instruction inventory of a module: each distinct [`Opcode`] (name and modifiers) with
//! the number of times it occurs, over all entries (PTX ISA §9.7 names the instructions).
//!
//! This is the executor's to-do list: every opcode listed here must be executable before the
//! module can run. The order is the opcodes' sort order (name, then modifiers), so the list
//! is stable and diffs well.

use std::collections::BTreeMap;

use super::ast::Module;
use super::opcode::Opcode;

/// One distinct opcode and its count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpcodeCount {
    /// The opcode.
    pub opcode: Opcode,
    /// How many instructions use it.
    pub count: usize,
}

/// The distinct opcodes of `modules`, sorted, each with its count.
pub fn inventory<'m>(modules: impl IntoIterator<Item = &'m Module>) -> Vec<OpcodeCount> {
    let mut counts = BTreeMap::<&Opcode, usize>::new();
    for m in modules {
        for i in m.kernels.iter().flat_map(|e| e.instructions()) {
            *counts.entry(&i.opcode).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(opcode, count)| OpcodeCount {
            opcode: opcode.clone(),
            count,
        })
        .collect()
}

/// The distinct instruction names (`Opcode::base`) of an inventory, sorted, each with the
/// sum of its opcodes' counts.
pub fn bases(inventory: &[OpcodeCount]) -> Vec<(String, usize)> {
    let mut counts = BTreeMap::<&str, usize>::new();
    for c in inventory {
        *counts.entry(c.opcode.base.as_str()).or_default() += c.count;
    }
    counts.into_iter().map(|(b, n)| (b.to_owned(), n)).collect()
}
