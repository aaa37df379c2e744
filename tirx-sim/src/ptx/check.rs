//! `// tirx.check …` notes: comments (PTX ISA §4.2, so ptxas and the driver ignore them) that
//! tirx writes on the line before an instruction whose operands include a coordinate read
//! from data — a gathered index, a TMA coordinate from a page table — which the build cannot
//! prove inside its tensor. The emulator checks it when the instruction runs.
//!
//! - `// tirx.check gather TENSOR DIM`: the next instruction is the `setp` that bounds
//!   dimension `DIM` (outermost first) of `TENSOR`, `setp.lo.u32 %p, index, extent`; a lane
//!   where it is false reads outside the tensor.
//! - `// tirx.check tma TENSOR K…`: the next instruction is a TMA load whose coordinates at
//!   positions `K…` (as written, innermost first) are data-dependent; a box that starts
//!   outside the tensor map's extent in one of them reads nothing of the tensor.
//!
//! Any other comment is ignored; a malformed note is ignored too (it only adds checks).

/// What a note asks the emulator to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The bound check of a gathered index.
    Gather {
        /// The tensor parameter's name.
        tensor: String,
        /// Its dimension, outermost first.
        dim: u32,
    },
    /// The data-dependent coordinates of a TMA load.
    Tma {
        /// The tensor parameter's name.
        tensor: String,
        /// Coordinate positions as written (innermost first).
        coords: Vec<u32>,
    },
}

/// Every note of `src` with the line of the instruction it describes (the next line that is
/// not blank).
pub fn checks(src: &str) -> Vec<(u32, Check)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.trim().strip_prefix("// tirx.check ") else {
            continue;
        };
        let Some(check) = note(rest) else {
            continue;
        };
        let next = (i + 1..lines.len()).find(|&j| !lines[j].trim().is_empty());
        if let Some(j) = next.and_then(|j| u32::try_from(j + 1).ok()) {
            out.push((j, check));
        }
    }
    out
}

fn note(rest: &str) -> Option<Check> {
    let mut w = rest.split_whitespace();
    let (kind, tensor) = (w.next()?, w.next()?.to_owned());
    let ns: Vec<u32> = w.map(str::parse).collect::<Result<_, _>>().ok()?;
    match (kind, ns.as_slice()) {
        ("gather", &[dim]) => Some(Check::Gather { tensor, dim }),
        ("tma", [_, ..]) => Some(Check::Tma { tensor, coords: ns }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_attach_to_the_next_instruction_line() {
        let src = "a;\n\t// tirx.check gather x 1\n\tsetp.lo.u32 %p1, %r1, %r2;\n\n\t// tirx.check tma t 0 2\n\n\tcp;\n// tirx.check gather x\n// other\n";
        assert_eq!(
            checks(src),
            vec![
                (
                    3,
                    Check::Gather {
                        tensor: "x".into(),
                        dim: 1
                    }
                ),
                (
                    7,
                    Check::Tma {
                        tensor: "t".into(),
                        coords: vec![0, 2]
                    }
                ),
            ]
        );
    }
}
