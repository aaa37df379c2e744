//! Round-trip and error tests of the text form: the fixture module (`fixture.rs`), which uses
//! every node variant, is printed, parsed back, compared, and printed again; malformed texts
//! report the line and column of the mistake.

use super::fixture::{bin, boxed, imm, module, ptx_kernel, without_spans};
use super::{parse_kernel, parse_module};
use crate::arena::Handle;
use crate::ir::*;

#[test]
fn every_variant_round_trips() {
    let m = module();
    let text = m.to_string();
    let back = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, without_spans(m.clone()));
    assert_eq!(back.to_string(), text);
    let has_span = |l: &str| {
        l.rsplit_once(" !")
            .is_some_and(|(_, id)| id.trim_end_matches(" {").parse::<u32>().is_ok())
    };
    assert!(!text.lines().any(has_span), "spans only print under {{:#}}");
    assert!(format!("{m:#}").lines().any(has_span));
}

#[test]
fn every_variant_round_trips_with_spans() {
    let m = module();
    let text = format!("{m:#}");
    let back = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, m);
    assert_eq!(format!("{back:#}"), text);
    assert!(text.contains("  scope warp 1..=1 !12 {\n"), "{text}");
    assert!(text.contains(
        "  buffer @a_s: smem bf16 (4, 128, 64):(8192, 64, 1) swizzle B128 offset 0 !3\n"
    ));
}

#[test]
fn single_kernel_and_empty_module() {
    let k = ptx_kernel();
    assert_eq!(parse_kernel(&format!("{k:#}")), Ok(k));
    assert_eq!(parse_module(""), Ok(Module { kernels: vec![] }));
    assert_eq!(Module { kernels: vec![] }.to_string(), "");
}

#[test]
fn expr_and_operand_display() {
    let e = bin(
        BinOp::Mul,
        bin(BinOp::Add, Expr::Dim("M".into()), imm(1, ScalarType::U32)),
        imm(-2, ScalarType::S32),
    );
    assert_eq!(e.to_string(), "(dim M + 1:u32) * -2:s32");
    let o = Operand::TensorMem(
        boxed(Operand::Sym("map".into())),
        vec![Operand::F32Bits(0x3F80_0000), Operand::Imm(-1)],
    );
    assert_eq!(o.to_string(), "[map, {0f3F800000, -1}]");
}

/// The error for `text` as `(line, col, message)`.
fn error(text: &str) -> (usize, usize, String) {
    let e = parse_module(text).expect_err("the text is malformed");
    (e.line, e.col, e.message)
}

const HEADER: &str = "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
  var %0: u32 \"i\"
  barrier @bar: count 1 arrivals 1
";

#[test]
fn errors_point_at_the_mistake() {
    let body = |b: &str| format!("{HEADER}{{\n{b}}}\n");
    assert_eq!(
        error(&body(
            "  scope elect\n    for %0 = 0:u32 to 4:u32 step 1:u32 {\n    }\n  }\n"
        )),
        (12, 14, "expected `{` after scope, found end of line".into())
    );
    assert_eq!(
        error(&body("  scope elect for\n")),
        (12, 15, "expected `{` after scope, found `for`".into())
    );
    assert_eq!(
        error(&body("  let %1 = 0:u32\n")),
        (
            12,
            7,
            "use of undeclared %1 (the kernel declares 1 variables)".into()
        )
    );
    assert_eq!(error(&body("  let %0 = 5\n")).0, 12);
    assert!(error(&body("  let %0 = 5\n")).2.contains("`5:u32`"));
    assert_eq!(
        error(&body("  op mbar_arrive @nope[0:u32]\n")),
        (12, 19, "no barrier named `@nope` is declared".into())
    );
    assert_eq!(
        error(&body("  op frobnicate\n")),
        (12, 6, "unknown op `frobnicate`".into())
    );
    assert_eq!(
        error(&body("  if %0 < 1:u32 < 2:u32 {\n  }\n")).2,
        "comparisons do not chain; add parentheses"
    );
    assert_eq!(
        error(&body("  let %0 = M\n")).2,
        "expected an expression, found `M` (shape symbols are written `dim M`)"
    );
    assert_eq!(
        error(&body("  scope warp 0..=0 {\n    op sync_threads\n")),
        (
            15,
            1,
            "expected `}` to close the block, found end of input".into()
        )
    );
    assert_eq!(
        error(&format!("{HEADER}  var %2: u32 \"j\"\n{{\n}}\n")).0,
        11
    );
    assert_eq!(
        error(&format!(
            "{HEADER}  barrier @bar: count 1 arrivals 1\n{{\n}}\n"
        ))
        .2,
        "a barrier named `@bar` is already declared"
    );
    assert_eq!(
        error("kernel k config default phase tile\n{\n}\n"),
        (2, 1, "the kernel has no `signature` before its body".into())
    );
    assert_eq!(
        error("kernel k config c phase tile\n  var %0: u32 \"unterminated\n").0,
        2
    );
    assert_eq!(
        error("kernel k config c phase warp\n").2,
        "expected a phase (`tile`, `thread` or `ptx`), found `warp`"
    );
}

#[test]
fn spans_and_comments_in_hand_written_text() {
    let text = format!(
        "// a comment\n{HEADER}{{\n  scope elect !5 {{ // the producer\n    let %0 = !1:pred !6\n  }}\n}}\n"
    );
    let k = parse_kernel(&text).unwrap();
    let StmtKind::Scope { body, .. } = &k.body[0].kind else {
        panic!()
    };
    assert_eq!((k.body[0].span, body[0].span), (Span(5), Span(6)));
    assert_eq!(
        body[0].kind,
        StmtKind::Let {
            var: Handle::from_index(0),
            value: Expr::Not(Box::new(imm(1, ScalarType::Pred)))
        }
    );
}

/// Names of the variants a module uses. The matches are exhaustive on purpose: a new IR
/// variant stops this compiling until it is added here and to the fixture.
fn variants(m: &Module) -> std::collections::BTreeSet<String> {
    fn expr(e: &Expr, out: &mut Vec<String>) {
        let name = match e {
            Expr::Imm(_, ty) => format!("Imm:{}", ty.name()),
            Expr::Var(_) => "Var".into(),
            Expr::Dim(_) => "Dim".into(),
            Expr::Special(s) => format!("Special:{s:?}"),
            Expr::Bin(op, a, b) => {
                expr(a, out);
                expr(b, out);
                format!("Bin:{op:?}")
            }
            Expr::Cmp(op, a, b) => {
                expr(a, out);
                expr(b, out);
                format!("Cmp:{op:?}")
            }
            Expr::Not(a) => {
                expr(a, out);
                "Not".into()
            }
            Expr::AndP(a, b) => {
                expr(a, out);
                expr(b, out);
                "AndP".into()
            }
        };
        out.push(name);
    }
    fn operand(o: &Operand, out: &mut Vec<String>) {
        let name = match o {
            Operand::Reg(_) => "Reg",
            Operand::NotReg(_) => "NotReg",
            Operand::Imm(_) => "OImm",
            Operand::F32Bits(_) => "F32Bits",
            Operand::Sym(_) => "Sym",
            Operand::Mem(b, _) => {
                operand(b, out);
                "Mem"
            }
            Operand::TensorMem(b, cs) => {
                operand(b, out);
                cs.iter().for_each(|c| operand(c, out));
                "TensorMem"
            }
            Operand::Vector(xs) => {
                xs.iter().for_each(|x| operand(x, out));
                "Vector"
            }
            Operand::Pair(a, b) => {
                operand(a, out);
                operand(b, out);
                "Pair"
            }
        };
        out.push(name.into());
    }
    fn tile(t: &TileRef, out: &mut Vec<String>) {
        match t {
            TileRef::Buf { index, .. } => {
                index.iter().for_each(|e| expr(e, out));
                out.push("TileBuf".into());
            }
            TileRef::Global { coords, .. } => {
                coords.iter().for_each(|e| expr(e, out));
                out.push("TileGlobal".into());
            }
        }
    }
    fn texpr(e: &TExpr, out: &mut Vec<String>) {
        let name = match e {
            TExpr::Tile(_) => "TTile".into(),
            TExpr::F32(_) => "TF32".into(),
            TExpr::Arg(_) => "TArg".into(),
            TExpr::Int(x) => {
                expr(x, out);
                "TInt".into()
            }
            TExpr::Index(a) => format!("TIndex:{a}"),
            TExpr::Un(f, a) => {
                texpr(a, out);
                format!("TUn:{}", f.name())
            }
            TExpr::Bin(o, a, b) => {
                texpr(a, out);
                texpr(b, out);
                format!("TBin:{}", o.name())
            }
            TExpr::Cmp(c, a, b) => {
                texpr(a, out);
                texpr(b, out);
                format!("TCmp:{c:?}")
            }
            TExpr::Fma(a, b, c) | TExpr::Select(a, b, c) => {
                [a, b, c].into_iter().for_each(|x| texpr(x, out));
                if matches!(e, TExpr::Fma(..)) {
                    "TFma"
                } else {
                    "TSelect"
                }
                .into()
            }
            TExpr::Gather {
                tensor,
                index,
                oob_zero,
            } => {
                index.iter().for_each(|x| texpr(x, out));
                format!("TGather:{tensor}:{oob_zero}")
            }
        };
        out.push(name);
    }
    fn op(o: &Op, out: &mut Vec<String>) {
        match o {
            Op::Copy { dst, src, bar, .. } => {
                tile(dst, out);
                tile(src, out);
                bar.iter().for_each(|b| expr(&b.index, out));
            }
            Op::Mma {
                acc,
                a,
                b,
                accumulate,
                ..
            } => {
                [acc, a, b].into_iter().for_each(|t| tile(t, out));
                expr(accumulate, out);
            }
            Op::ProducerAcquire { iter: e, .. }
            | Op::ConsumerWait { iter: e, .. }
            | Op::ConsumerRelease { stage: e, .. } => expr(e, out),
            Op::MbarArrive { bar }
            | Op::MbarArriveExpectTx { bar, .. }
            | Op::Tcgen05Commit { bar, .. } => expr(&bar.index, out),
            Op::MbarWait { bar, parity } => {
                expr(&bar.index, out);
                expr(parity, out);
            }
            Op::ClcTryCancel { resp, bar, .. } => {
                tile(resp, out);
                expr(&bar.index, out);
            }
            Op::ClcIsCanceled { resp, .. }
            | Op::ClcFirstCta { resp, .. }
            | Op::Tcgen05Shift { tile: resp, .. } => tile(resp, out),
            Op::LoadScalar { index, .. } => index.iter().for_each(|e| expr(e, out)),
            Op::MbarInit { .. }
            | Op::FenceMbarrierInit
            | Op::FenceProxyAsync
            | Op::GridDepWait
            | Op::GridDepLaunch
            | Op::SyncThreads
            | Op::TmaCommitGroup
            | Op::TmaWaitGroup { .. }
            | Op::TmemAlloc { .. }
            | Op::TmemRelinquish { .. }
            | Op::TmemDealloc { .. }
            | Op::Tcgen05FenceBefore
            | Op::Tcgen05FenceAfter
            | Op::WgmmaFence
            | Op::WgmmaCommit
            | Op::WgmmaWait { .. }
            | Op::SetMaxNReg { .. }
            | Op::ClusterSync
            | Op::NamedBarrier { .. } => {}
            Op::Compute { value, .. } => texpr(value, out),
            Op::Reduce { kind, .. } => out.push(format!("Reduce:{kind:?}")),
            Op::WarpVote { kind, pred, .. } => {
                out.push(format!("Vote:{kind:?}"));
                match pred {
                    VotePred::Scalar(e) => {
                        out.push("VoteScalar".into());
                        expr(e, out);
                    }
                    VotePred::Tile { value, .. } => {
                        out.push("VoteTile".into());
                        texpr(value, out);
                    }
                }
            }
        }
        let name = format!("{o:?}");
        out.push(format!(
            "Op:{}",
            name.split([' ', '{', '(']).next().unwrap()
        ));
    }
    fn block(b: &Block, out: &mut Vec<String>) {
        for s in b {
            let name = match &s.kind {
                StmtKind::Let { value, .. } | StmtKind::Assign { value, .. } => {
                    expr(value, out);
                    if matches!(s.kind, StmtKind::Let { .. }) {
                        "Let"
                    } else {
                        "Assign"
                    }
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    expr(cond, out);
                    block(then_body, out);
                    block(else_body, out);
                    if else_body.is_empty() { "If" } else { "IfElse" }
                }
                StmtKind::For {
                    start,
                    end,
                    step,
                    body,
                    ..
                } => {
                    [start, end, step].into_iter().for_each(|e| expr(e, out));
                    block(body, out);
                    "For"
                }
                StmtKind::Loop { body, .. } => {
                    block(body, out);
                    "Loop"
                }
                StmtKind::Scope { scope, body } => {
                    block(body, out);
                    out.push(format!(
                        "Scope:{}",
                        format!("{scope:?}").split('(').next().unwrap()
                    ));
                    "Scope"
                }
                StmtKind::Op(o) => {
                    op(o, out);
                    "Op"
                }
                StmtKind::Inst(i) => {
                    i.guard
                        .iter()
                        .chain(&i.dsts)
                        .chain(&i.srcs)
                        .for_each(|o| operand(o, out));
                    "Inst"
                }
            };
            out.push(name.into());
        }
    }
    let mut out = Vec::new();
    for k in &m.kernels {
        out.push(format!("Phase:{:?}", k.phase));
        block(&k.body, &mut out);
        k.buffers
            .iter()
            .for_each(|(_, b)| out.push(format!("Space:{:?}", b.space)));
        for (_, b) in k.buffers.iter() {
            out.push(match b.layout.major {
                Major::K => "Major:K".into(),
                Major::MN => "Major:Mn".into(),
            });
        }
        for p in &k.sig.params {
            out.push(format!(
                "Param:{}",
                format!("{p:?}").split(' ').next().unwrap()
            ));
        }
    }
    out.into_iter().collect()
}

#[test]
fn fixture_uses_every_variant() {
    let seen = variants(&module());
    let mut missing = Vec::new();
    let mut want = |name: String| {
        if !seen.contains(&name) {
            missing.push(name);
        }
    };
    let ops = "Copy Mma ProducerAcquire ConsumerWait ConsumerRelease MbarInit MbarArrive \
        MbarArriveExpectTx MbarWait FenceMbarrierInit FenceProxyAsync GridDepWait GridDepLaunch SyncThreads TmaCommitGroup \
        TmaWaitGroup TmemAlloc TmemRelinquish TmemDealloc Tcgen05Commit Tcgen05FenceBefore \
        Tcgen05FenceAfter WgmmaFence WgmmaCommit WgmmaWait SetMaxNReg ClusterSync NamedBarrier \
        Compute Reduce ClcTryCancel ClcIsCanceled ClcFirstCta LoadScalar WarpVote Tcgen05Shift";
    ops.split_whitespace().for_each(|o| want(format!("Op:{o}")));
    let plain = "Let Assign If IfElse For Loop Scope Op Inst Var Dim Not AndP Reg NotReg OImm \
        F32Bits Sym Mem TensorMem Vector Pair TileBuf TileGlobal";
    plain.split_whitespace().for_each(|n| want(n.into()));
    for ty in ["pred", "b16", "u32", "s32", "u64", "f32"] {
        want(format!("Imm:{ty}"));
    }
    for s in Special::ALL {
        want(format!("Special:{s:?}"));
    }
    for b in "Add Sub Mul Div Rem And Or Xor Shl Shr CeilDiv Min Max".split(' ') {
        want(format!("Bin:{b}"));
    }
    for c in "Eq Ne Lt Le Gt Ge".split(' ') {
        want(format!("Cmp:{c}"));
    }
    for s in "Cta Warpgroup Warp Thread Elect Leader".split(' ') {
        want(format!("Scope:{s}"));
    }
    for s in "Shared Tmem Reg".split(' ') {
        want(format!("Space:{s}"));
    }
    for m in "K Mn".split(' ') {
        want(format!("Major:{m}"));
    }
    for p in "TensorMap Pointer Stride Dim".split(' ') {
        want(format!("Param:{p}"));
    }
    for p in "Tile Thread Ptx".split(' ') {
        want(format!("Phase:{p}"));
    }
    for t in "TTile TF32 TArg TInt TIndex:0 TIndex:1 TFma TSelect Reduce:Max Reduce:Sum \
        Vote:Any Vote:All Vote:Ballot VoteScalar VoteTile"
        .split(' ')
    {
        want(t.into());
    }
    for f in TUn::ALL {
        want(format!("TUn:{}", f.name()));
    }
    for o in TBin::ALL {
        want(format!("TBin:{}", o.name()));
    }
    for c in "Eq Ne Lt Le Gt Ge".split(' ') {
        want(format!("TCmp:{c}"));
    }
    assert!(missing.is_empty(), "the fixture lacks {missing:?}");
}
