//! The hand-built fixture of the round-trip tests: a module of three kernels (one per `Phase`)
//! that together use every `Expr`, `Op`, `Operand`, `Scope`, `StmtKind`, `Space`, `Swizzle`
//! and `AbiParam` variant, names that need quoting, extreme immediates and spans.

use crate::abi::{AbiParam, ElemType, Signature, Swizzle, SymExpr, Target, TensorDecl};
use crate::arena::{Arena, Handle};
use crate::ir::*;

mod sync;
use sync::{pipeline_stmts, sync_stmts};

/// The handles `declare` makes.
#[derive(Clone, Copy)]
struct H {
    i: Handle<Var>,
    s: Handle<Var>,
    p: Handle<Var>,
    x: Handle<Var>,
    w: Handle<Var>,
    a_s: Handle<Buffer>,
    acc: Handle<Buffer>,
    frag: Handle<Buffer>,
    full: Handle<Barrier>,
    empty: Handle<Barrier>,
    pipe: Handle<Pipeline>,
}

pub(super) fn imm(v: i64, ty: ScalarType) -> Expr {
    Expr::Imm(v, ty)
}
fn var(h: Handle<Var>) -> Expr {
    Expr::Var(h)
}
pub(super) fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::bin(op, a, b)
}
fn stmt(kind: StmtKind) -> Stmt {
    Stmt::new(kind)
}
fn op(o: Op) -> Stmt {
    stmt(StmtKind::Op(o))
}
pub(super) fn boxed(o: Operand) -> Box<Operand> {
    Box::new(o)
}

fn signature(target: Target) -> Signature {
    let sym = |s: &str| Box::new(SymExpr::Sym(s.into()));
    Signature {
        entry: format!("every_{}", target.name()),
        target,
        tensors: vec![
            TensorDecl {
                name: "a".into(),
                elem: ElemType::Bf16,
                shape: vec!["M".into(), "K".into()],
            },
            TensorDecl {
                name: "d".into(),
                elem: ElemType::F16,
                shape: vec!["M".into(), "N".into()],
            },
            TensorDecl {
                name: "weird tensor".into(),
                elem: ElemType::F32,
                shape: vec!["1st".into()],
            },
        ],
        scalars: vec!["alpha".into(), "odd beta".into(), "n".into()],
        scalar_types: vec![ElemType::F32, ElemType::F32, ElemType::U32],
        params: vec![
            AbiParam::TensorMap {
                tensor: "a".into(),
                box_dims: vec![64, 128],
                swizzle: Swizzle::B128,
            },
            AbiParam::TensorMap {
                tensor: "d".into(),
                box_dims: vec![],
                swizzle: Swizzle::None,
            },
            AbiParam::Pointer { tensor: "d".into() },
            AbiParam::Stride {
                tensor: "d".into(),
                dim: 1,
            },
            AbiParam::Dim { symbol: "M".into() },
            AbiParam::Scalar {
                name: "odd beta".into(),
            },
        ],
        threads: 256,
        cluster: [2, 1, 1],
        grid: [
            SymExpr::CeilDiv(sym("N"), Box::new(SymExpr::Const(256))),
            SymExpr::Mul(sym("M"), Box::new(SymExpr::CeilDiv(sym("K"), sym("1st")))),
            SymExpr::Const(1),
        ],
        checks: Vec::new(),
        smem_bytes: 200_704,
        tmem_cols: 256,
    }
}

/// A kernel in the `Tile` phase holding every `Expr`, `Op`, `Scope`, `StmtKind` and `Space`.
fn cmp(c: CmpOp, a: Expr, b: Expr) -> Expr {
    Expr::cmp(c, a, b)
}
fn and(a: Expr, b: Expr) -> Expr {
    Expr::AndP(Box::new(a), Box::new(b))
}
fn not(a: Expr) -> Expr {
    Expr::Not(Box::new(a))
}
fn let_(var: Handle<Var>, value: Expr) -> Stmt {
    stmt(StmtKind::Let { var, value })
}
fn assign(var: Handle<Var>, value: Expr) -> Stmt {
    stmt(StmtKind::Assign { var, value })
}

/// The declarations of the `Tile`-phase kernel (a buffer in each `Space`, dotted barrier
/// names, optional offsets, spans on some).
fn declare() -> (Kernel, H) {
    let mut k = Kernel {
        name: "every".into(),
        config: "odd config".into(),
        consts: vec![
            ("BM".into(), 128),
            ("NEG".into(), -4),
            ("MIN".into(), i64::MIN),
        ],
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
        alias: None,
        regs: None,
        span: Span(3),
    });
    let acc = k.buffers.append(Buffer {
        name: "acc".into(),
        space: Space::Tmem,
        elem: ElemType::F32,
        layout: Layout {
            shape: vec![128, 256],
            stride: vec![256],
            swizzle: Swizzle::None,
            major: Major::K,
        },
        offset: Some(196_608),
        tmem_cols: Some(256),
        alias: None,
        regs: None,
        span: Span::NONE,
    });
    let frag = k.buffers.append(Buffer {
        name: "frag 1".into(),
        space: Space::Reg,
        elem: ElemType::F16,
        layout: Layout {
            shape: vec![],
            stride: vec![],
            swizzle: Swizzle::B32,
            major: Major::MN,
        },
        offset: None,
        tmem_cols: None,
        alias: None,
        regs: None,
        span: Span(0),
    });
    let full = k.barriers.append(Barrier {
        name: "pipe.full".into(),
        count: 4,
        arrivals: 1,
        offset: Some(1024),
        span: Span::NONE,
    });
    let empty = k.barriers.append(Barrier {
        name: "pipe.empty".into(),
        count: 4,
        arrivals: 2,
        offset: None,
        span: Span(9),
    });
    let pipe = k.pipelines.append(Pipeline {
        name: "pipe".into(),
        stages: 4,
        full,
        empty,
        peers: 2,
        span: Span(10),
    });
    let h = H {
        i,
        s,
        p,
        x,
        w,
        a_s,
        acc,
        frag,
        full,
        empty,
        pipe,
    };
    (k, h)
}

/// Every binary operator, the precedence corner cases, every special register and `dim`.
fn arith_stmts(h: H) -> Block {
    let H { i, x, .. } = h;
    let all_bins = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::CeilDiv,
        BinOp::Min,
        BinOp::Max,
    ];
    let mut body: Block = all_bins
        .iter()
        .map(|&o| assign(x, bin(o, var(x), imm(-3, ScalarType::S32))))
        .collect();
    // Precedence and grouping: every parenthesisation must come back as it was.
    let (e1, e2, e3) = (var(i), Expr::Dim("M".into()), imm(7, ScalarType::U32));
    for value in [
        bin(
            BinOp::Sub,
            e1.clone(),
            bin(BinOp::Sub, e2.clone(), e3.clone()),
        ),
        bin(
            BinOp::Sub,
            bin(BinOp::Sub, e1.clone(), e2.clone()),
            e3.clone(),
        ),
        bin(
            BinOp::Mul,
            bin(BinOp::Add, e1.clone(), e2.clone()),
            e3.clone(),
        ),
        bin(
            BinOp::Add,
            e1.clone(),
            bin(BinOp::Mul, e2.clone(), e3.clone()),
        ),
        bin(
            BinOp::Shl,
            bin(BinOp::And, e1.clone(), e2.clone()),
            bin(BinOp::Or, e3.clone(), e1.clone()),
        ),
        bin(
            BinOp::Xor,
            bin(BinOp::Or, e1.clone(), e2.clone()),
            bin(
                BinOp::CeilDiv,
                e3.clone(),
                bin(BinOp::Min, e1.clone(), e2.clone()),
            ),
        ),
        bin(
            BinOp::Max,
            Expr::Special(Special::CtaId(3)),
            imm(i64::MIN, ScalarType::U64),
        ),
    ] {
        body.push(let_(i, value));
    }
    for sp in Special::ALL {
        body.push(let_(i, Expr::Special(sp)));
    }
    body.push(let_(i, Expr::Dim("weird dim".into())));
    body
}

/// Comparisons, `!`, `&&` and immediates of every scalar type.
fn pred_stmts(h: H) -> Block {
    let H { i, p, x, w, .. } = h;
    let e3 = imm(7, ScalarType::U32);
    let mut body = Vec::new();
    let cmps = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];
    for c in cmps {
        body.push(assign(p, Expr::cmp(c, var(i), imm(-1, ScalarType::S32))));
    }
    body.push(stmt(StmtKind::Assign {
        var: p,
        value: and(
            and(var(p), not(cmp(CmpOp::Lt, var(i), e3.clone()))),
            and(
                not(not(var(p))),
                cmp(
                    CmpOp::Eq,
                    cmp(CmpOp::Ne, var(i), e3.clone()),
                    imm(1, ScalarType::Pred),
                ),
            ),
        ),
    }));
    body.push(let_(p, not(imm(0, ScalarType::Pred))));
    body.push(let_(x, not(imm(-5, ScalarType::B16))));
    body.push(let_(x, imm(2, ScalarType::F32)));
    body.push(let_(w, imm(-1, ScalarType::U64)));
    body.push(let_(w, imm(i64::MAX, ScalarType::U64)));

    body
}

mod tile;

/// A kernel in the `Tile` phase holding every `Expr`, `Op`, `Scope`, `StmtKind`, `Space` and
/// register-tile form.
fn tile_kernel() -> Kernel {
    let (mut k, h) = declare();
    tile::declare_tiles(&mut k);
    k.body = [
        arith_stmts,
        pred_stmts,
        pipeline_stmts,
        sync_stmts,
        tile::tile_stmts,
    ]
    .iter()
    .flat_map(|f| f(h))
    .collect();
    k
}

/// A kernel in the `Ptx` phase holding every `Operand` and the forms of `Inst`.
pub(super) fn ptx_kernel() -> Kernel {
    let mut k = tile_kernel();
    k.name = "every_ptx".into();
    k.config = "default".into();
    k.consts.clear();
    k.phase = Phase::Ptx;
    k.sig = signature(Target::Sm90a);
    let [r0, r1, r2] = [0, 1, 2].map(Handle::<Var>::from_index);
    let (reg, sym) = (|h| Operand::Reg(h), |s: &str| Operand::Sym(s.into()));
    let inst = |opcode: &str, dsts, srcs, guard| {
        stmt(StmtKind::Inst(Inst {
            opcode: opcode.into(),
            dsts,
            srcs,
            guard,
        }))
    };
    k.body = vec![
        inst(
            "add.u32",
            vec![reg(r0)],
            vec![reg(r1), Operand::Imm(-7)],
            None,
        ),
        inst(
            "mov.b32",
            vec![reg(r1)],
            vec![Operand::F32Bits(0x3F80_0000), Operand::F32Bits(0)],
            Some(Operand::NotReg(r2)),
        ),
        inst(
            "elect.sync",
            vec![Operand::Pair(boxed(reg(r0)), boxed(reg(r2)))],
            vec![Operand::Imm(-1)],
            None,
        ),
        inst(
            "x.pairs",
            vec![Operand::Pair(
                boxed(Operand::Pair(boxed(reg(r0)), boxed(reg(r1)))),
                boxed(reg(r2)),
            )],
            vec![Operand::Pair(
                boxed(reg(r0)),
                boxed(Operand::Pair(boxed(reg(r1)), boxed(sym("s")))),
            )],
            None,
        ),
        inst(
            "st.shared.u32",
            vec![],
            vec![Operand::Mem(boxed(reg(r0)), 0), reg(r1)],
            Some(reg(r2)),
        ),
        inst(
            "ld.shared.u32",
            vec![reg(r1)],
            vec![Operand::Mem(boxed(reg(r0)), 16)],
            None,
        ),
        inst(
            "ld.param.u64",
            vec![reg(r1)],
            vec![Operand::Mem(boxed(sym("every_param_0")), -8)],
            None,
        ),
        inst(
            "ld.weird",
            vec![reg(r1)],
            vec![Operand::Mem(boxed(Operand::Imm(i64::MIN)), i64::MIN)],
            None,
        ),
        inst(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
            vec![Operand::Mem(boxed(reg(r0)), 0)],
            vec![
                Operand::TensorMem(boxed(sym("a_map")), vec![reg(r1), Operand::Imm(64)]),
                Operand::Mem(boxed(reg(r2)), 8),
            ],
            None,
        ),
        inst(
            "x.empty",
            vec![Operand::Vector(vec![])],
            vec![Operand::TensorMem(boxed(reg(r0)), vec![])],
            None,
        ),
        inst(
            "tcgen05.ld.sync.aligned.32x32b.x2.b32",
            vec![Operand::Vector(vec![reg(r0), reg(r1)])],
            vec![Operand::Mem(boxed(reg(r2)), 0)],
            None,
        ),
        inst(
            "weird op",
            vec![sym("quoted sym"), sym("plain")],
            vec![sym("q\"")],
            Some(sym("g")),
        ),
        inst("bar.sync", vec![], vec![Operand::Imm(0)], None),
        inst(
            "fence.proxy.async.shared::cta",
            vec![],
            vec![],
            Some(Operand::NotReg(r0)),
        ),
        inst("exit", vec![], vec![], None),
    ];
    k
}

pub(super) fn module() -> Module {
    let mut thread = tile_kernel();
    thread.name = "every_thread".into();
    thread.phase = Phase::Thread;
    Module {
        kernels: vec![tile_kernel(), thread, ptx_kernel()],
    }
}

/// Every span set to `Span::NONE` (what parsing the `{}` form gives).
pub(super) fn without_spans(mut m: Module) -> Module {
    fn block(b: &mut Block) {
        for s in b {
            s.span = Span::NONE;
            match &mut s.kind {
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    block(then_body);
                    block(else_body);
                }
                StmtKind::For { body, .. }
                | StmtKind::Loop { body, .. }
                | StmtKind::Scope { body, .. } => block(body),
                _ => {}
            }
        }
    }
    for k in &mut m.kernels {
        block(&mut k.body);
        k.buffers.iter_mut().for_each(|(_, b)| b.span = Span::NONE);
        k.barriers.iter_mut().for_each(|(_, b)| b.span = Span::NONE);
        k.pipelines
            .iter_mut()
            .for_each(|(_, p)| p.span = Span::NONE);
    }
    m
}
