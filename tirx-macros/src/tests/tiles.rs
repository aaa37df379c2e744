//! Register tiles in the front end: the IR of tile expressions, reductions and masks, and
//! the errors at the user's tokens.

use super::*;
use tirx_ir::{Op, StmtKind, TBin, TExpr, TUn};

const ROW_ATTR: &str =
    "target = sm_90a, threads = 128, grid = (M, 1), configs(default = (C = 1024))";

fn row_errors(body: &str) -> Vec<String> {
    errors(
        ROW_ATTR,
        &format!(
            "fn k(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<f32>, s: f32) {{ {body} }}"
        ),
    )
}

fn row_lowered(body: &str) -> tirx_ir::Kernel {
    lowered(
        ROW_ATTR,
        &format!(
            "fn k(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<f32>, s: f32) {{ {body} }}"
        ),
    )
    .kernel
}

fn ops(k: &tirx_ir::Kernel) -> Vec<&Op> {
    k.body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Op(o) => Some(o),
            _ => None,
        })
        .collect()
}

const DECL: &str = "let t = regs::<f32>([1, C], layout = blocked(vec = 8));";

#[test]
fn a_softmax_body_becomes_compute_and_reduce_ops() {
    let k = row_lowered(&format!(
        "{DECL} copy(t, x.tile(cta.x, 0));
         let v = select(col_index(t) < N, t, f32::NEG_INFINITY);
         let m = reduce_max(v, axis = 1);
         let e = exp2_approx((v - m) * 1.5);
         copy(y.tile(cta.x, 0), e * s);"
    ));
    let ops = ops(&k);
    let names: Vec<&str> = ops
        .iter()
        .map(|o| match o {
            Op::Copy { .. } => "copy",
            Op::Compute { .. } => "compute",
            Op::Reduce { .. } => "reduce",
            _ => "other",
        })
        .collect();
    // The operand `e * s` is computed into a temporary right before the store.
    assert_eq!(
        names,
        ["copy", "compute", "reduce", "compute", "compute", "copy"]
    );
    let Op::Compute { value, .. } = ops[1] else {
        unreachable!()
    };
    assert!(matches!(value, TExpr::Select(c, _, f)
        if matches!(**c, TExpr::Cmp(..)) && **f == TExpr::F32(f32::NEG_INFINITY.to_bits())));
    let Op::Compute { value, .. } = ops[3] else {
        unreachable!()
    };
    assert!(matches!(value, TExpr::Un(TUn::Exp2Approx, a)
        if matches!(&**a, TExpr::Bin(TBin::Mul, _, c) if **c == TExpr::F32(1.5f32.to_bits()))));
    let Op::Compute { value, .. } = ops[4] else {
        unreachable!()
    };
    assert!(matches!(value, TExpr::Bin(TBin::Mul, _, a) if **a == TExpr::Arg("s".into())));
    // The statistic has the reduced layout: one register per thread for a one-row tile.
    let Op::Reduce { dst, .. } = ops[2] else {
        unreachable!()
    };
    let stat = k.buffers[*dst].regs.as_ref().expect("a layout");
    assert_eq!(stat.value_count(), 1);
    assert_eq!(k.buffers[*dst].layout.shape, [1, 1]);
}

#[test]
fn masks_and_float_scalars_are_named_expressions() {
    let k = row_lowered(&format!(
        "{DECL} let inside = col_index(t) < N; let n = cast::<f32>(N);
         let u = select(inside, t / n, 0.0);"
    ));
    // No tile for `inside` or `n`: one compute, with both inlined.
    let ops = ops(&k);
    assert_eq!(ops.len(), 1);
    let Op::Compute { value, .. } = ops[0] else {
        unreachable!()
    };
    assert!(matches!(value, TExpr::Select(c, a, _)
        if matches!(**c, TExpr::Cmp(..)) && matches!(&**a, TExpr::Bin(TBin::Div, _, n) if matches!(**n, TExpr::Un(TUn::Cast(_), _)))));
}

#[test]
fn compound_assignment_recomputes_a_mutable_tile() {
    let k = row_lowered(&format!("{DECL} let mut u = t * 2.0; u += t; t = u;"));
    let ops = ops(&k);
    assert_eq!(ops.len(), 3);
    assert!(
        matches!(ops[1], Op::Compute { value: TExpr::Bin(TBin::Add, a, _), .. } if matches!(**a, TExpr::Tile(_)))
    );
}

#[test]
fn errors_point_at_the_tile_expression() {
    let cases: &[(&str, &str)] = &[
        (
            "let u = t * 2; ",
            "`mul` takes two floats or two integers of one type (convert with `cast::<f32>(…)` or `cast::<i32>(…)`); this operand is u32",
        ),
        (
            "let u = t * 2.0; u = t;",
            "cannot assign to `u`: declare it with `let mut u`",
        ),
        (
            "let u = exp2_approx(x);",
            "`x` is a global tensor; copy a tile of it into a register tile first",
        ),
        (
            "let m = reduce_max(t);",
            "say the axis: `reduce_max(tile, axis = 1[, across = cluster])`",
        ),
        (
            "let m = reduce_max(t, axis = 2);",
            "the axis is 0 (down the rows) or 1",
        ),
        (
            "let q = regs::<f32>([1, C], layout = blocked(vec = 3));",
            "cannot be spread over 128 threads",
        ),
        (
            "let q = regs::<f32>([1, C], layout = striped);",
            "expected `wgmma`, `blocked(vec = V)`",
        ),
        (
            "let q = regs::<f32>([64, 32], layout = tmem_32x32b);",
            "spreads 128 TMEM lanes",
        ),
        (
            "let q = regs::<f32>([96, 32], layout = wgmma);",
            "m64·i × n8·j; 96×32 is not",
        ),
        ("let p = t % 2.0;", "`rem` takes two integers of one type"),
        (
            "let p = t << 1;",
            "`shl` takes integers; this operand is f32",
        ),
        ("let z = 1.5f64 * t;", "expected an f32 literal"),
        (
            "let q = smem::<f32>([1, C]); let u = q * t;",
            "is a smem buffer, not a register tile",
        ),
        (
            "let mut inside = col_index(t) < N;",
            "a mask or index tile is a named expression",
        ),
        ("let u = cast::<i16>(t);", "expected an element type"),
        (
            "let u = select(t, t, t);",
            "`select` takes a predicate first; this operand is f32",
        ),
        (
            "exp2_approx(t);",
            "computes on register tiles; bind its value",
        ),
        (
            "let u = exp2_poly3(col_index(t));",
            "`exp2_poly3` takes a float; this operand is u32",
        ),
        (
            "let u = exp2_poly3(x);",
            "`x` is a global tensor; copy a tile of it into a register tile first",
        ),
    ];
    for (body, want) in cases {
        let e = row_errors(&format!("{DECL} {body}"));
        assert!(
            e.iter().any(|m| m.contains(want)),
            "{body}: expected {want:?} among {e:#?}"
        );
    }
}
