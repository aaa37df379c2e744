//! Summarising the SASS that `nvdisasm -c` prints as an opcode histogram.

use std::collections::BTreeMap;

/// How often each opcode appears in nvdisasm output: the first word of each instruction, with
/// its predicate (`@P0`, `@!UP0`) and modifiers (`.64x128x16.F32.BF16`) dropped, so
/// `@!P0 SYNCS.ARRIVE.TRANS64.A1T0 …` counts as `SYNCS`. Instruction lines are the ones that
/// start with an offset comment, `/*01c0*/`; everything else (labels, directives) is skipped.
pub fn sass_histogram(sass: &str) -> BTreeMap<String, usize> {
    histogram_by(sass, |word| {
        word.split(['.', ';']).next().unwrap_or_default()
    })
}

/// Like [`sass_histogram`], keyed by the whole mnemonic with its modifiers (`MUFU.EX2`,
/// `SHFL.BFLY`, `LDG.E.128`).
pub fn sass_mnemonics(sass: &str) -> BTreeMap<String, usize> {
    histogram_by(sass, |word| word.split(';').next().unwrap_or_default())
}

fn histogram_by(sass: &str, key: impl Fn(&str) -> &str) -> BTreeMap<String, usize> {
    let mut histogram = BTreeMap::new();
    for line in sass.lines() {
        let Some(rest) = line.trim_start().strip_prefix("/*") else {
            continue;
        };
        let Some((offset, instruction)) = rest.split_once("*/") else {
            continue;
        };
        if offset.is_empty() || !offset.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        // Older targets wrap dual-issued pairs in braces: `{ IADD … ;`.
        let mut words = instruction.split_whitespace().skip_while(|w| *w == "{");
        let Some(mut word) = words.next() else {
            continue;
        };
        if word.starts_with('@') {
            let Some(next) = words.next() else { continue };
            word = next;
        }
        let opcode = key(word);
        if !opcode.is_empty() {
            *histogram.entry(opcode.to_owned()).or_insert(0) += 1;
        }
    }
    histogram
}
