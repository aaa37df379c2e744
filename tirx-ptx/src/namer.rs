//! `Namer`: deterministic PTX register names for a kernel's variables.
//!
//! A variable's name is a prefix chosen by its type followed by its arena index, so the same
//! kernel always prints the same names and a register in the PTX can be traced back to `%N` in
//! the IR text form by its number alone:
//!
//! | type | prefix | example |
//! |------|--------|---------|
//! | `pred` | `%p` | `%p3` |
//! | `b16` | `%h` | `%h4` |
//! | `u32`, `s32` | `%r` | `%r12` |
//! | `u64` | `%rd` | `%rd7` |
//! | `f32` | `%f` | `%f9` |
//!
//! Registers the writer makes itself (not IR variables) use prefixes no variable can have:
//! the loop-bound predicate of the `N`-th control construct is `%pfN`. Because variable names
//! are a prefix and then only digits, `%pf…` never collides with `%p…`, nor `%rd…` with `%r…`.

use tirx_ir::{Arena, Handle, ScalarType, Var};

use crate::error::PtxError;

/// Register names for the variables of one kernel, indexed by arena index.
#[derive(Clone, Debug)]
pub struct Namer {
    names: Vec<String>,
}

impl Namer {
    /// Names every variable of `vars`.
    pub fn new(vars: &Arena<Var>) -> Namer {
        let names = vars
            .iter()
            .map(|(h, v)| format!("{}{}", Self::prefix(v.ty), h.index()))
            .collect();
        Namer { names }
    }

    /// The register prefix of a type.
    pub fn prefix(ty: ScalarType) -> &'static str {
        match ty {
            ScalarType::Pred => "%p",
            ScalarType::B8 => "%c",
            ScalarType::B16 => "%h",
            ScalarType::U32 | ScalarType::S32 => "%r",
            ScalarType::U64 | ScalarType::S64 => "%rd",
            ScalarType::F32 => "%f",
            ScalarType::B128 => "%q",
        }
    }

    /// The name of `var`, or `UnknownVar` when the handle is out of range.
    pub fn name(&self, var: Handle<Var>) -> Result<&str, PtxError> {
        self.names
            .get(var.index())
            .map(String::as_str)
            .ok_or(PtxError::UnknownVar { index: var.index() })
    }

    /// The scratch predicate holding the loop test of control construct `n` (`%pfN`).
    pub fn loop_pred(n: u32) -> String {
        format!("%pf{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefix_and_index() {
        let mut vars = Arena::new();
        for ty in [
            ScalarType::Pred,
            ScalarType::B16,
            ScalarType::U32,
            ScalarType::S32,
            ScalarType::U64,
            ScalarType::F32,
        ] {
            vars.append(Var {
                name: "v".into(),
                ty,
            });
        }
        let namer = Namer::new(&vars);
        let names: Vec<&str> = (0..6)
            .map(|i| namer.name(Handle::from_index(i)).unwrap())
            .collect();
        assert_eq!(names, ["%p0", "%h1", "%r2", "%r3", "%rd4", "%f5"]);
        assert_eq!(
            namer.name(Handle::from_index(6)),
            Err(PtxError::UnknownVar { index: 6 })
        );
        assert_eq!(Namer::loop_pred(3), "%pf3");
    }
}
