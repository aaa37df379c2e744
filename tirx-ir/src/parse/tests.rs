//! Round-trip and error tests of the text form: a hand-built module that uses every node
//! variant is printed, parsed back, compared, and printed again; malformed texts report the
//! line and column of the mistake.

use super::{parse_kernel, parse_module};
use crate::abi::{AbiParam, ElemType, Signature, Swizzle, SymExpr, Target, TensorDecl};
use crate::arena::{Arena, Handle};
use crate::ir::*;

fn imm(v: i64, ty: ScalarType) -> Expr {
    Expr::Imm(v, ty)
}
fn var(h: Handle<Var>) -> Expr {
    Expr::Var(h)
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::bin(op, a, b)
}
fn stmt(kind: StmtKind) -> Stmt {
    Stmt::new(kind)
}
fn op(o: Op) -> Stmt {
    stmt(StmtKind::Op(o))
}
fn boxed(o: Operand) -> Box<Operand> {
    Box::new(o)
}

fn signature(target: Target) -> Signature {
    let sym = |s: &str| Box::new(SymExpr::Sym(s.into()));
    Signature {
        entry: format!("every_{}", target.name()),
        target,
        tensors: vec![
            TensorDecl { name: "a".into(), elem: ElemType::Bf16, shape: vec!["M".into(), "K".into()] },
            TensorDecl { name: "d".into(), elem: ElemType::F16, shape: vec!["M".into(), "N".into()] },
            TensorDecl { name: "weird tensor".into(), elem: ElemType::F32, shape: vec!["1st".into()] },
        ],
        params: vec![
            AbiParam::TensorMap { tensor: "a".into(), box_dims: vec![64, 128], swizzle: Swizzle::B128 },
            AbiParam::TensorMap { tensor: "d".into(), box_dims: vec![], swizzle: Swizzle::None },
            AbiParam::Pointer { tensor: "d".into() },
            AbiParam::Stride { tensor: "d".into(), dim: 1 },
            AbiParam::Dim { symbol: "M".into() },
        ],
        threads: 256,
        cluster: [2, 1, 1],
        grid: [
            SymExpr::CeilDiv(sym("N"), Box::new(SymExpr::Const(256))),
            SymExpr::Mul(sym("M"), Box::new(SymExpr::CeilDiv(sym("K"), sym("1st")))),
            SymExpr::Const(1),
        ],
        smem_bytes: 200_704,
        tmem_cols: 256,
    }
}

/// A kernel in the `Tile` phase holding every `Expr`, `Op`, `Scope`, `StmtKind` and `Space`.
fn tile_kernel() -> Kernel {
    let mut k = Kernel {
        name: "every".into(),
        config: "odd config".into(),
        consts: vec![("BM".into(), 128), ("NEG".into(), -4), ("MIN".into(), i64::MIN)],
        phase: Phase::Tile,
        sig: signature(Target::Sm100a),
        vars: Arena::new(),
        buffers: Arena::new(),
        barriers: Arena::new(),
        pipelines: Arena::new(),
        body: Vec::new(),
    };
    let i = k.new_var("k", ScalarType::U32);
    let s = k.new_var("stage", ScalarType::U32);
    let p = k.new_var("done?", ScalarType::Pred);
    let x = k.new_var("esc \"q\" \\ \n\t\u{1} é", ScalarType::S32);
    let w = k.new_var("", ScalarType::U64);
    let a_s = k.buffers.append(Buffer {
        name: "a_s".into(),
        space: Space::Shared,
        elem: ElemType::Bf16,
        layout: Layout::row_major(&[4, 128, 64], Swizzle::B128),
        offset: Some(0),
        tmem_cols: None,
        span: Span(3),
    });
    let acc = k.buffers.append(Buffer {
        name: "acc".into(),
        space: Space::Tmem,
        elem: ElemType::F32,
        layout: Layout { shape: vec![128, 256], stride: vec![256], swizzle: Swizzle::None },
        offset: Some(196_608),
        tmem_cols: Some(256),
        span: Span::NONE,
    });
    let frag = k.buffers.append(Buffer {
        name: "frag 1".into(),
        space: Space::Reg,
        elem: ElemType::F16,
        layout: Layout { shape: vec![], stride: vec![], swizzle: Swizzle::B32 },
        offset: None,
        tmem_cols: None,
        span: Span(0),
    });
    let full = k.barriers.append(Barrier { name: "pipe.full".into(), count: 4, arrivals: 1, offset: Some(1024), span: Span::NONE });
    let empty = k.barriers.append(Barrier { name: "pipe.empty".into(), count: 4, arrivals: 2, offset: None, span: Span(9) });
    let pipe = k.pipelines.append(Pipeline { name: "pipe".into(), stages: 4, full, empty, span: Span(10) });
    let b = |h, e| BarRef { bar: h, index: e };
    let buf = |h, index| TileRef::Buf { buf: h, index };

    let all_bins = [
        BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem, BinOp::And, BinOp::Or,
        BinOp::Xor, BinOp::Shl, BinOp::Shr, BinOp::CeilDiv, BinOp::Min, BinOp::Max,
    ];
    let mut body: Block = all_bins
        .iter()
        .map(|&o| stmt(StmtKind::Assign { var: x, value: bin(o, var(x), imm(-3, ScalarType::S32)) }))
        .collect();
    // Precedence and grouping: every parenthesisation must come back as it was.
    let (e1, e2, e3) = (var(i), Expr::Dim("M".into()), imm(7, ScalarType::U32));
    for value in [
        bin(BinOp::Sub, e1.clone(), bin(BinOp::Sub, e2.clone(), e3.clone())),
        bin(BinOp::Sub, bin(BinOp::Sub, e1.clone(), e2.clone()), e3.clone()),
        bin(BinOp::Mul, bin(BinOp::Add, e1.clone(), e2.clone()), e3.clone()),
        bin(BinOp::Add, e1.clone(), bin(BinOp::Mul, e2.clone(), e3.clone())),
        bin(BinOp::Shl, bin(BinOp::And, e1.clone(), e2.clone()), bin(BinOp::Or, e3.clone(), e1.clone())),
        bin(BinOp::Xor, bin(BinOp::Or, e1.clone(), e2.clone()), bin(BinOp::CeilDiv, e3.clone(), bin(BinOp::Min, e1.clone(), e2.clone()))),
        bin(BinOp::Max, Expr::Special(Special::CtaId(3)), imm(i64::MIN, ScalarType::U64)),
    ] {
        body.push(stmt(StmtKind::Let { var: i, value }));
    }
    for sp in Special::ALL {
        body.push(stmt(StmtKind::Let { var: i, value: Expr::Special(sp) }));
    }
    body.push(stmt(StmtKind::Let { var: i, value: Expr::Dim("weird dim".into()) }));
    let cmps = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];
    for c in cmps {
        body.push(stmt(StmtKind::Assign { var: p, value: Expr::cmp(c, var(i), imm(-1, ScalarType::S32)) }));
    }
    let cmp = |c, a, b| Expr::cmp(c, a, b);
    let and = |a, b| Expr::AndP(Box::new(a), Box::new(b));
    let not = |a| Expr::Not(Box::new(a));
    body.push(stmt(StmtKind::Assign {
        var: p,
        value: and(
            and(var(p), not(cmp(CmpOp::Lt, var(i), e3.clone()))),
            and(not(not(var(p))), cmp(CmpOp::Eq, cmp(CmpOp::Ne, var(i), e3.clone()), imm(1, ScalarType::Pred))),
        ),
    }));
    body.push(stmt(StmtKind::Let { var: p, value: not(imm(0, ScalarType::Pred)) }));
    body.push(stmt(StmtKind::Let { var: x, value: not(imm(-5, ScalarType::B16)) }));
    body.push(stmt(StmtKind::Let { var: x, value: imm(2, ScalarType::F32) }));
    body.push(stmt(StmtKind::Let { var: w, value: imm(-1, ScalarType::U64) }));
    body.push(stmt(StmtKind::Let { var: w, value: imm(i64::MAX, ScalarType::U64) }));

    let producer = vec![
        op(Op::ProducerAcquire { pipe, iter: var(i), stage: s }),
        Stmt::at(
            StmtKind::Op(Op::Copy {
                dst: buf(a_s, vec![var(s)]),
                src: TileRef::Global { tensor: "a".into(), coords: vec![Expr::Special(Special::CtaId(1)), var(i)] },
                bar: Some(b(full, var(s))),
                variant: Some("tma_load".into()),
            }),
            Span(11),
        ),
        op(Op::MbarArriveExpectTx { bar: b(full, var(s)), bytes: None }),
        op(Op::MbarArriveExpectTx { bar: b(full, var(s)), bytes: Some(32_768) }),
    ];
    let consumer = vec![
        op(Op::ConsumerWait { pipe, iter: bin(BinOp::Add, var(i), e3.clone()), stage: s }),
        op(Op::Mma {
            acc: buf(acc, vec![]),
            a: buf(a_s, vec![var(s)]),
            b: buf(a_s, vec![var(s), imm(0, ScalarType::U32)]),
            accumulate: cmp(CmpOp::Gt, var(i), imm(0, ScalarType::U32)),
            variant: None,
        }),
        op(Op::Mma {
            acc: buf(frag, vec![]),
            a: buf(a_s, vec![]),
            b: buf(a_s, vec![]),
            accumulate: imm(1, ScalarType::Pred),
            variant: Some("wgmma".into()),
        }),
        op(Op::Tcgen05Commit { bar: b(empty, var(s)) }),
        op(Op::ConsumerRelease { pipe, stage: var(s) }),
    ];
    let for_loop = |body| StmtKind::For {
        var: i,
        start: imm(0, ScalarType::U32),
        end: bin(BinOp::CeilDiv, Expr::Dim("K".into()), imm(64, ScalarType::U32)),
        step: imm(1, ScalarType::U32),
        body,
    };
    let elect = |body| stmt(StmtKind::Scope { scope: Scope::Elect, body: vec![stmt(for_loop(body))] });
    body.extend([
        Stmt::at(StmtKind::Scope { scope: Scope::Cta, body: vec![op(Op::MbarInit { bar: full }), op(Op::MbarInit { bar: empty }), op(Op::FenceMbarrierInit), op(Op::SyncThreads)] }, Span(1)),
        stmt(StmtKind::Scope { scope: Scope::Warp(0, 0), body: vec![op(Op::TmemAlloc { buf: acc }), op(Op::TmemRelinquish)] }),
        Stmt::at(StmtKind::Scope { scope: Scope::Warp(1, 1), body: vec![elect(producer)] }, Span(12)),
        stmt(StmtKind::Scope { scope: Scope::Warp(2, 3), body: vec![elect(consumer)] }),
        stmt(StmtKind::Scope {
            scope: Scope::Warpgroup(1, 1),
            body: vec![
                op(Op::MbarWait { bar: b(full, imm(0, ScalarType::U32)), parity: bin(BinOp::And, var(i), imm(1, ScalarType::U32)) }),
                op(Op::Tcgen05FenceAfter),
                op(Op::Copy { dst: TileRef::Global { tensor: "weird tensor".into(), coords: vec![] }, src: buf(acc, vec![]), bar: None, variant: None }),
                op(Op::FenceProxyAsync),
                op(Op::TmaCommitGroup),
                op(Op::TmaWaitGroup { n: 0, read: true }),
                op(Op::TmaWaitGroup { n: 1, read: false }),
                op(Op::Tcgen05FenceBefore),
                op(Op::WgmmaFence),
                op(Op::WgmmaCommit),
                op(Op::WgmmaWait { n: 0 }),
                op(Op::MbarArrive { bar: b(empty, imm(3, ScalarType::U32)) }),
            ],
        }),
        stmt(StmtKind::Scope { scope: Scope::Thread(0), body: vec![op(Op::TmemDealloc { buf: acc })] }),
        stmt(StmtKind::If { cond: var(p), then_body: vec![], else_body: vec![] }),
        Stmt::at(StmtKind::If { cond: and(var(p), var(p)), then_body: vec![op(Op::SyncThreads)], else_body: vec![stmt(StmtKind::Assign { var: w, value: imm(0, ScalarType::U64) })] }, Span(0)),
        Stmt::at(StmtKind::Loop { body: vec![stmt(StmtKind::Assign { var: p, value: not(var(p)) })], until: p }, Span(7)),
        stmt(StmtKind::Loop { body: vec![], until: p }),
        stmt(StmtKind::Inst(Inst { opcode: "nop".into(), dsts: vec![], srcs: vec![], guard: None })),
    ]);
    k.body = body;
    k
}

/// A kernel in the `Ptx` phase holding every `Operand` and the forms of `Inst`.
fn ptx_kernel() -> Kernel {
    let mut k = tile_kernel();
    k.name = "every_ptx".into();
    k.config = "default".into();
    k.consts.clear();
    k.phase = Phase::Ptx;
    k.sig = signature(Target::Sm90a);
    let [r0, r1, r2] = [0, 1, 2].map(Handle::<Var>::from_index);
    let (reg, sym) = (|h| Operand::Reg(h), |s: &str| Operand::Sym(s.into()));
    let inst = |opcode: &str, dsts, srcs, guard| stmt(StmtKind::Inst(Inst { opcode: opcode.into(), dsts, srcs, guard }));
    k.body = vec![
        inst("add.u32", vec![reg(r0)], vec![reg(r1), Operand::Imm(-7)], None),
        inst("mov.b32", vec![reg(r1)], vec![Operand::F32Bits(0x3F80_0000), Operand::F32Bits(0)], Some(Operand::NotReg(r2))),
        inst("elect.sync", vec![Operand::Pair(boxed(reg(r0)), boxed(reg(r2)))], vec![Operand::Imm(-1)], None),
        inst(
            "x.pairs",
            vec![Operand::Pair(boxed(Operand::Pair(boxed(reg(r0)), boxed(reg(r1)))), boxed(reg(r2)))],
            vec![Operand::Pair(boxed(reg(r0)), boxed(Operand::Pair(boxed(reg(r1)), boxed(sym("s")))))],
            None,
        ),
        inst("st.shared.u32", vec![], vec![Operand::Mem(boxed(reg(r0)), 0), reg(r1)], Some(reg(r2))),
        inst("ld.shared.u32", vec![reg(r1)], vec![Operand::Mem(boxed(reg(r0)), 16)], None),
        inst("ld.param.u64", vec![reg(r1)], vec![Operand::Mem(boxed(sym("every_param_0")), -8)], None),
        inst("ld.weird", vec![reg(r1)], vec![Operand::Mem(boxed(Operand::Imm(i64::MIN)), i64::MIN)], None),
        inst(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
            vec![Operand::Mem(boxed(reg(r0)), 0)],
            vec![Operand::TensorMem(boxed(sym("a_map")), vec![reg(r1), Operand::Imm(64)]), Operand::Mem(boxed(reg(r2)), 8)],
            None,
        ),
        inst("x.empty", vec![Operand::Vector(vec![])], vec![Operand::TensorMem(boxed(reg(r0)), vec![])], None),
        inst("tcgen05.ld.sync.aligned.32x32b.x2.b32", vec![Operand::Vector(vec![reg(r0), reg(r1)])], vec![Operand::Mem(boxed(reg(r2)), 0)], None),
        inst("weird op", vec![sym("quoted sym"), sym("plain")], vec![sym("q\"")], Some(sym("g"))),
        inst("bar.sync", vec![], vec![Operand::Imm(0)], None),
        inst("fence.proxy.async.shared::cta", vec![], vec![], Some(Operand::NotReg(r0))),
        inst("exit", vec![], vec![], None),
    ];
    k
}

fn module() -> Module {
    let mut thread = tile_kernel();
    thread.name = "every_thread".into();
    thread.phase = Phase::Thread;
    Module { kernels: vec![tile_kernel(), thread, ptx_kernel()] }
}

/// Every span set to `Span::NONE` (what parsing the `{}` form gives).
fn without_spans(mut m: Module) -> Module {
    fn block(b: &mut Block) {
        for s in b {
            s.span = Span::NONE;
            match &mut s.kind {
                StmtKind::If { then_body, else_body, .. } => {
                    block(then_body);
                    block(else_body);
                }
                StmtKind::For { body, .. } | StmtKind::Loop { body, .. } | StmtKind::Scope { body, .. } => block(body),
                _ => {}
            }
        }
    }
    for k in &mut m.kernels {
        block(&mut k.body);
        k.buffers.iter_mut().for_each(|(_, b)| b.span = Span::NONE);
        k.barriers.iter_mut().for_each(|(_, b)| b.span = Span::NONE);
        k.pipelines.iter_mut().for_each(|(_, p)| p.span = Span::NONE);
    }
    m
}

#[test]
fn every_variant_round_trips() {
    let m = module();
    let text = m.to_string();
    let back = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, without_spans(m.clone()));
    assert_eq!(back.to_string(), text);
    let has_span = |l: &str| l.rsplit_once(" !").is_some_and(|(_, id)| id.trim_end_matches(" {").parse::<u32>().is_ok());
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
    assert!(text.contains("  buffer @a_s: smem bf16 (4, 128, 64):(8192, 64, 1) swizzle B128 offset 0 !3\n"));
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
    let e = bin(BinOp::Mul, bin(BinOp::Add, Expr::Dim("M".into()), imm(1, ScalarType::U32)), imm(-2, ScalarType::S32));
    assert_eq!(e.to_string(), "(dim M + 1:u32) * -2:s32");
    let o = Operand::TensorMem(boxed(Operand::Sym("map".into())), vec![Operand::F32Bits(0x3F80_0000), Operand::Imm(-1)]);
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
        error(&body("  scope elect\n    for %0 = 0:u32 to 4:u32 step 1:u32 {\n    }\n  }\n")),
        (12, 14, "expected `{` after scope, found end of line".into())
    );
    assert_eq!(error(&body("  scope elect for\n")), (12, 15, "expected `{` after scope, found `for`".into()));
    assert_eq!(error(&body("  let %1 = 0:u32\n")), (12, 7, "use of undeclared %1 (the kernel declares 1 variables)".into()));
    assert_eq!(error(&body("  let %0 = 5\n")).0, 12);
    assert!(error(&body("  let %0 = 5\n")).2.contains("`5:u32`"));
    assert_eq!(error(&body("  op mbar_arrive @nope[0:u32]\n")), (12, 19, "no barrier named `@nope` is declared".into()));
    assert_eq!(error(&body("  op frobnicate\n")), (12, 6, "unknown op `frobnicate`".into()));
    assert_eq!(error(&body("  if %0 < 1:u32 < 2:u32 {\n  }\n")).2, "comparisons do not chain; add parentheses");
    assert_eq!(error(&body("  let %0 = M\n")).2, "expected an expression, found `M` (shape symbols are written `dim M`)");
    assert_eq!(error(&body("  scope warp 0..=0 {\n    op sync_threads\n")), (15, 1, "expected `}` to close the block, found end of input".into()));
    assert_eq!(error(&format!("{HEADER}  var %2: u32 \"j\"\n{{\n}}\n")).0, 11);
    assert_eq!(error(&format!("{HEADER}  barrier @bar: count 1 arrivals 1\n{{\n}}\n")).2, "a barrier named `@bar` is already declared");
    assert_eq!(error("kernel k config default phase tile\n{\n}\n"), (2, 1, "the kernel has no `signature` before its body".into()));
    assert_eq!(error("kernel k config c phase tile\n  var %0: u32 \"unterminated\n").0, 2);
    assert_eq!(error("kernel k config c phase warp\n").2, "expected a phase (`tile`, `thread` or `ptx`), found `warp`");
}

#[test]
fn spans_and_comments_in_hand_written_text() {
    let text = format!("// a comment\n{HEADER}{{\n  scope elect !5 {{ // the producer\n    let %0 = !1:pred !6\n  }}\n}}\n");
    let k = parse_kernel(&text).unwrap();
    let StmtKind::Scope { body, .. } = &k.body[0].kind else { panic!() };
    assert_eq!((k.body[0].span, body[0].span), (Span(5), Span(6)));
    assert_eq!(body[0].kind, StmtKind::Let { var: Handle::from_index(0), value: Expr::Not(Box::new(imm(1, ScalarType::Pred))) });
}

#[test]
fn zz_dump() {
    println!("{:#}", module());
}
