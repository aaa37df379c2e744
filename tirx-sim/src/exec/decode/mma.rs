//! Decoding of `wgmma.mma_async` (PTX ISA §9.7.15.5.2): the shape `m64nNk16`, the types, the
//! accumulator registers, the descriptors and the immediate scale and transpose operands.
//! Forms the executor does not run yet are refused here with the reason.

use super::Cx;
use crate::exec::diag::SimError;
use crate::exec::ops::Op;
use crate::exec::program::Val;
use crate::ptx::{Operand, Type};

pub(super) fn wgmma(cx: &Cx<'_>) -> Result<Op, SimError> {
    let shape =
        cx.i.opcode
            .modifiers
            .iter()
            .find(|m| m.starts_with("m64n") && m.ends_with("k16"))
            .ok_or_else(|| cx.err("only the .m64nNk16 shapes (16-bit inputs) are supported"))?;
    let n: u32 = shape["m64n".len()..shape.len() - 3]
        .parse()
        .map_err(|_| cx.err("malformed shape"))?;
    if n == 0 || n > 256 || !n.is_multiple_of(8) {
        return Err(cx.err(format!("N = {n} is not a multiple of 8 in 8..=256")));
    }
    let tys = cx.types();
    let [Type::F32, atype, btype] = tys[..] else {
        return Err(cx.err("only an f32 accumulator is supported"));
    };
    if atype != btype || !matches!(atype, Type::Bf16 | Type::F16) {
        return Err(cx.err("only bf16 × bf16 and f16 × f16 inputs are supported"));
    }
    cx.n(8)?;
    if matches!(cx.op(1)?, Operand::Vector(_)) {
        return Err(cx.err("A from registers (the RS form) is not supported yet"));
    }
    let d = cx
        .list(0)?
        .into_iter()
        .map(|o| {
            cx.syms
                .dst(o, cx.i.line, &cx.text)?
                .ok_or_else(|| cx.err("a sink in the accumulator"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if d.len() as u32 != n / 2 {
        return Err(cx.err(format!(
            "{} accumulator registers for N = {n} (expected {})",
            d.len(),
            n / 2
        )));
    }
    let imm = |k: usize| match cx.val(k)? {
        Val::Imm(v) => Ok(v as i64),
        _ => Err(cx.err("scale and transpose operands must be constants")),
    };
    let (scale_a, scale_b, tnsp_a, tnsp_b) = (imm(4)?, imm(5)?, imm(6)?, imm(7)?);
    if ![0, 1].contains(&tnsp_a) || ![0, 1].contains(&tnsp_b) {
        return Err(cx.err("imm-trans-a/b must be 0 or 1"));
    }
    if ![1, -1].contains(&scale_a) || ![1, -1].contains(&scale_b) {
        return Err(cx.err("imm-scale-a/b must be 1 or -1"));
    }
    Ok(Op::Wgmma {
        n,
        atype,
        d,
        a: cx.val(1)?,
        b: cx.val(2)?,
        scale_d: cx.val(3)?,
        neg_a: scale_a == -1,
        neg_b: scale_b == -1,
        tnsp_a: tnsp_a == 1,
        tnsp_b: tnsp_b == 1,
    })
}
