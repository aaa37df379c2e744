//! The golden test of the printed text: a small TMA-copy kernel, printed with and without
//! spans, against its exact expected text.

use crate::abi::{AbiParam, ElemType, Signature, Swizzle, SymExpr, Target, TensorDecl};
use crate::arena::Arena;
use crate::ir::*;

/// A TMA copy: one elected thread of warp 0 loads a tile per iteration.
fn tma_copy() -> Kernel {
    let cdiv = |s: &str, n| {
        SymExpr::CeilDiv(
            Box::new(SymExpr::Sym(s.into())),
            Box::new(SymExpr::Const(n)),
        )
    };
    let tensor = |n: &str| TensorDecl {
        name: n.into(),
        elem: ElemType::Bf16,
        shape: vec!["M".into(), "N".into()],
    };
    let mut k = Kernel {
        name: "tma_copy".into(),
        config: "default".into(),
        consts: vec![("BM".into(), 64)],
        phase: Phase::Tile,
        sig: Signature {
            entry: "tma_copy_default_sm_90a".into(),
            target: Target::Sm90a,
            tensors: vec![tensor("src")],
            scalars: vec![],
            scalar_types: vec![],
            params: vec![
                AbiParam::TensorMap {
                    tensor: "src".into(),
                    box_dims: vec![64, 64],
                    swizzle: Swizzle::B128,
                },
                AbiParam::Dim { symbol: "M".into() },
            ],
            threads: 128,
            cluster: [1, 1, 1],
            grid: [cdiv("N", 64), cdiv("M", 64), SymExpr::Const(1)],
            checks: Vec::new(),
            smem_bytes: 32_832,
            tmem_cols: 0,
        },
        vars: Arena::new(),
        buffers: Arena::new(),
        barriers: Arena::new(),
        pipelines: Arena::new(),
        body: Vec::new(),
    };
    let i = k.new_var("k", ScalarType::U32);
    let s = k.new_var("s", ScalarType::U32);
    let tile = k.buffers.append(Buffer {
        name: "tile".into(),
        space: Space::Shared,
        elem: ElemType::Bf16,
        layout: Layout::row_major(&[4, 64, 64], Swizzle::B128),
        offset: Some(0),
        tmem_cols: None,
        alias: None,
        regs: None,
        span: Span(2),
    });
    let full = k.barriers.append(Barrier {
        name: "pipe.full".into(),
        count: 4,
        arrivals: 1,
        offset: Some(32_768),
        span: Span::NONE,
    });
    let empty = k.barriers.append(Barrier {
        name: "pipe.empty".into(),
        count: 4,
        arrivals: 1,
        offset: Some(32_800),
        span: Span::NONE,
    });
    let pipe = k.pipelines.append(Pipeline {
        name: "pipe".into(),
        stages: 4,
        full,
        empty,
        peers: 1,
        span: Span(3),
    });
    let bound = Expr::bin(BinOp::CeilDiv, Expr::Dim("M".into()), Expr::u32(64));
    let copy = Op::Copy {
        dst: TileRef::Buf {
            buf: tile,
            index: vec![Expr::Var(s)],
        },
        src: TileRef::Global {
            tensor: "src".into(),
            coords: vec![Expr::Special(Special::CtaId(1)), Expr::Var(i)],
            elements: None,
        },
        bar: Some(BarRef {
            bar: full,
            index: Expr::Var(s),
        }),
        multicast: None,
        scale: None,
        variant: None,
        pair: false,
        atomic: None,
    };
    let body = vec![
        Stmt::new(StmtKind::Op(Op::ProducerAcquire {
            pipe,
            iter: Expr::Var(i),
            stage: s,
        })),
        Stmt::at(StmtKind::Op(copy), Span(5)),
    ];
    let lp = StmtKind::For {
        var: i,
        start: Expr::u32(0),
        end: bound,
        step: Expr::u32(1),
        body,
    };
    let elect = Stmt::new(StmtKind::Scope {
        scope: Scope::Elect,
        body: vec![Stmt::at(lp, Span(4))],
    });
    k.body = vec![Stmt::new(StmtKind::Scope {
        scope: Scope::Warp(0, 0),
        body: vec![elect],
    })];
    k
}

const GOLDEN: &str = "\
kernel tma_copy config default phase tile
  const BM = 64
  signature tma_copy_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (cdiv(N, 64), cdiv(M, 64), 1)
    smem 32832
    tmem 0
    tensor src: bf16[M, N]
    param tensormap src box [64, 64] swizzle B128
    param dim M
  var %0: u32 \"k\"
  var %1: u32 \"s\"
  buffer @tile: smem bf16 (4, 64, 64):(4096, 64, 1) swizzle B128 offset 0
  barrier @pipe.full: count 4 arrivals 1 offset 32768
  barrier @pipe.empty: count 4 arrivals 1 offset 32800
  pipeline @pipe: stages 4 full @pipe.full empty @pipe.empty
{
  scope warp 0..=0 {
    scope elect {
      for %0 = 0:u32 to cdiv(dim M, 64:u32) step 1:u32 {
        op producer_acquire @pipe iter %0 -> %1
        op copy @tile[%1] <- global src[ctaid.y, %0] bar @pipe.full[%1]
      }
    }
  }
}
";

#[test]
fn golden_text() {
    let k = tma_copy();
    assert_eq!(k.to_string(), GOLDEN);
    assert_eq!(
        crate::parse::parse_kernel(GOLDEN).as_ref(),
        Ok(&without_spans(k))
    );
}

#[test]
fn golden_text_with_spans() {
    let text = format!("{:#}", tma_copy());
    let expected = GOLDEN
        .replace("offset 0\n", "offset 0 !2\n")
        .replace("@pipe.empty\n{", "@pipe.empty !3\n{")
        .replace("1:u32 {", "1:u32 !4 {")
        .replace("@pipe.full[%1]\n", "@pipe.full[%1] !5\n");
    assert_eq!(text, expected);
    assert_eq!(crate::parse::parse_kernel(&text), Ok(tma_copy()));
}

fn without_spans(mut k: Kernel) -> Kernel {
    k.buffers.iter_mut().for_each(|(_, b)| b.span = Span::NONE);
    k.pipelines
        .iter_mut()
        .for_each(|(_, p)| p.span = Span::NONE);
    let StmtKind::Scope { body, .. } = &mut k.body[0].kind else {
        unreachable!()
    };
    let StmtKind::Scope { body, .. } = &mut body[0].kind else {
        unreachable!()
    };
    body[0].span = Span::NONE;
    let StmtKind::For { body, .. } = &mut body[0].kind else {
        unreachable!()
    };
    body[1].span = Span::NONE;
    k
}
