//! Writer tests: hand-built `Phase::Ptx` kernels, a golden text, the errors, and assembly with
//! the real ptxas for both targets (skipped with a note when ptxas is missing, unless
//! `TIRX_REQUIRE_PTXAS=1`).

use tirx_ir::abi::{AbiParam, ElemType, Signature, SymExpr, Target, TensorDecl};
use tirx_ir::{
    Arena, Expr, Handle, Inst, Kernel, Op, Operand, Phase, ScalarType, Scope, Span, Stmt, StmtKind,
    Var,
};

use crate::tools::{find_ptxas, ptxas, tool_for_test};
use crate::{PtxError, write_string};

use ScalarType::{B16, F32, Pred, S32, U32, U64};

/// A kernel shell in `Phase::Ptx` with no variables and an empty body.
fn shell(name: &str, target: Target, params: Vec<AbiParam>, cluster: [u32; 3]) -> Kernel {
    let tensors = ["x", "out"]
        .map(|t| TensorDecl {
            name: t.into(),
            elem: ElemType::Bf16,
            shape: vec!["N".into()],
        })
        .to_vec();
    Kernel {
        name: name.into(),
        config: "default".into(),
        consts: Vec::new(),
        phase: Phase::Ptx,
        sig: Signature {
            entry: format!("{name}_default_{}", target.name()),
            target,
            tensors,
            scalars: Vec::new(),
            scalar_types: Vec::new(),
            params,
            threads: 128,
            cluster,
            grid: [SymExpr::Const(1), SymExpr::Const(1), SymExpr::Const(1)],
            checks: Vec::new(),
            smem_bytes: 0,
            tmem_cols: 0,
        },
        vars: Arena::new(),
        buffers: Arena::new(),
        barriers: Arena::new(),
        pipelines: Arena::new(),
        body: Vec::new(),
    }
}

fn inst(opcode: &str, dsts: Vec<Operand>, srcs: Vec<Operand>) -> Stmt {
    Stmt::new(StmtKind::Inst(Inst {
        opcode: opcode.into(),
        dsts,
        srcs,
        guard: None,
    }))
}

fn guarded(guard: Operand, opcode: &str, dsts: Vec<Operand>, srcs: Vec<Operand>) -> Stmt {
    Stmt::new(StmtKind::Inst(Inst {
        opcode: opcode.into(),
        dsts,
        srcs,
        guard: Some(guard),
    }))
}

fn reg(v: Handle<Var>) -> Operand {
    Operand::Reg(v)
}

fn sym(s: &str) -> Operand {
    Operand::Sym(s.into())
}

fn mem(base: Operand, off: i64) -> Operand {
    Operand::Mem(Box::new(base), off)
}

fn let_(var: Handle<Var>, value: Expr) -> Stmt {
    Stmt::new(StmtKind::Let { var, value })
}

fn assign(var: Handle<Var>, value: Expr) -> Stmt {
    Stmt::new(StmtKind::Assign { var, value })
}

/// A scalar kernel: every control construct, every register type, guarded stores.
fn scalar_kernel(target: Target) -> Kernel {
    let params = vec![
        AbiParam::Pointer {
            tensor: "out".into(),
        },
        AbiParam::Dim { symbol: "N".into() },
    ];
    let mut k = shell("scalar", target, params, [1, 1, 1]);
    let out = k.new_var("out", U64); // %rd0
    let n = k.new_var("n", U32); // %r1
    let tid = k.new_var("tid", U32); // %r2
    let in_range = k.new_var("in_range", Pred); // %p3
    let acc = k.new_var("acc", U32); // %r4
    let i = k.new_var("i", U32); // %r5
    let spins = k.new_var("spins", U32); // %r6
    let done = k.new_var("done", Pred); // %p7
    let half = k.new_var("two", F32); // %f8
    let bits = k.new_var("bits", B16); // %h9
    let packed = k.new_var("packed", U32); // %r10
    let signed = k.new_var("signed", S32); // %r11
    let addr = k.new_var("addr", U64); // %rd12
    let off = k.new_var("off", U64); // %rd13
    let _unused = k.new_var("unused", U32); // %r14: never mentioned, never declared
    let as_int = k.new_var("as_int", U32); // %r15
    let v = Expr::Var;
    k.body = vec![
        inst(
            "ld.param.u64",
            vec![reg(out)],
            vec![mem(sym("p_out_ptr"), 0)],
        ),
        inst("ld.param.u32", vec![reg(n)], vec![mem(sym("p_dim_N"), 0)]),
        inst("mov.u32", vec![reg(tid)], vec![sym("%tid.x")]),
        inst("setp.lt.u32", vec![reg(in_range)], vec![reg(tid), reg(n)]),
        let_(acc, Expr::u32(0)),
        Stmt::new(StmtKind::If {
            cond: v(in_range),
            then_body: vec![inst("add.u32", vec![reg(acc)], vec![reg(acc), reg(tid)])],
            else_body: vec![assign(acc, Expr::u32(1))],
        }),
        Stmt::new(StmtKind::For {
            var: i,
            start: Expr::u32(0),
            end: v(n),
            step: Expr::u32(1),
            body: vec![inst("add.u32", vec![reg(acc)], vec![reg(acc), reg(i)])],
        }),
        let_(spins, Expr::u32(0)),
        Stmt::new(StmtKind::Loop {
            body: vec![
                inst(
                    "add.u32",
                    vec![reg(spins)],
                    vec![reg(spins), Operand::Imm(1)],
                ),
                inst(
                    "setp.ge.u32",
                    vec![reg(done)],
                    vec![reg(spins), Operand::Imm(4)],
                ),
            ],
            until: done,
        }),
        let_(half, Expr::Imm(2, U32)),
        inst("cvt.rzi.u32.f32", vec![reg(as_int)], vec![reg(half)]),
        inst(
            "add.f32",
            vec![reg(half)],
            vec![reg(half), Operand::F32Bits(0x3f80_0000)],
        ),
        let_(bits, Expr::Imm(0x3f80, B16)),
        inst(
            "mov.b32",
            vec![reg(packed)],
            vec![Operand::Vector(vec![reg(bits), reg(bits)])],
        ),
        let_(signed, Expr::Imm(-3, S32)),
        assign(signed, v(acc)),
        Stmt::new(StmtKind::If {
            cond: Expr::Not(Box::new(v(in_range))),
            then_body: vec![assign(acc, v(packed))],
            else_body: Vec::new(),
        }),
        inst("cvta.to.global.u64", vec![reg(addr)], vec![reg(out)]),
        inst(
            "mul.wide.u32",
            vec![reg(off)],
            vec![reg(tid), Operand::Imm(4)],
        ),
        inst("add.u64", vec![reg(addr)], vec![reg(addr), reg(off)]),
        guarded(
            reg(in_range),
            "st.global.u32",
            vec![mem(reg(addr), 0)],
            vec![reg(acc)],
        ),
        guarded(
            Operand::NotReg(in_range),
            "st.global.u32",
            vec![mem(reg(addr), 4)],
            vec![reg(signed)],
        ),
        inst("ld.global.u32", vec![reg(acc)], vec![mem(reg(addr), -4)]),
        inst("st.global.u32", vec![mem(reg(addr), 8)], vec![reg(as_int)]),
    ];
    k
}

/// A cluster kernel with a TMA load: the tensor map's generic address through
/// `cvta.param.u64`, an mbarrier in dynamic shared memory, an elected issue and a spin wait.
fn tma_kernel(target: Target) -> Kernel {
    let params = vec![
        AbiParam::TensorMap {
            tensor: "x".into(),
            box_dims: vec![64, 128],
            swizzle: tirx_ir::abi::Swizzle::B128,
        },
        AbiParam::Pointer {
            tensor: "out".into(),
        },
        AbiParam::Stride {
            tensor: "out".into(),
            dim: 0,
        },
        AbiParam::Dim { symbol: "N".into() },
    ];
    let tmap = params[0].ptx_name();
    let mut k = shell("tma", target, params, [2, 1, 1]);
    let map = k.new_var("map", U64); // %rd0
    let bar = k.new_var("bar", U32); // %r1
    let tile = k.new_var("tile", U32); // %r2
    let tid = k.new_var("tid", U32); // %r3
    let leader = k.new_var("leader", Pred); // %p4
    let ready = k.new_var("ready", Pred); // %p5
    let rank = k.new_var("rank", U32); // %r6
    let out = k.new_var("out", U64); // %rd7
    let stride = k.new_var("stride", U64); // %rd8
    let value = k.new_var("value", U32); // %r9
    let x0 = k.new_var("x0", U32); // %r10
    let lane = k.new_var("lane", U32); // %r11
    let elected = k.new_var("elected", Pred); // %p12
    k.body = vec![
        inst("mov.u64", vec![reg(map)], vec![sym(&tmap)]),
        inst("cvta.param.u64", vec![reg(map)], vec![reg(map)]),
        inst(
            "elect.sync",
            vec![Operand::Pair(Box::new(reg(lane)), Box::new(reg(elected)))],
            vec![Operand::Imm(0xffff_ffff)],
        ),
        guarded(
            reg(elected),
            "prefetch.tensormap",
            vec![],
            vec![mem(reg(map), 0)],
        ),
        inst("mov.u32", vec![reg(bar)], vec![sym(crate::SMEM_SYMBOL)]),
        inst(
            "add.u32",
            vec![reg(tile)],
            vec![reg(bar), Operand::Imm(1024)],
        ),
        inst("mov.u32", vec![reg(tid)], vec![sym("%tid.x")]),
        inst("mov.u32", vec![reg(rank)], vec![sym("%cluster_ctarank")]),
        inst(
            "setp.eq.u32",
            vec![reg(leader)],
            vec![reg(tid), Operand::Imm(0)],
        ),
        Stmt::new(StmtKind::If {
            cond: Expr::Var(leader),
            then_body: vec![inst(
                "mbarrier.init.shared::cta.b64",
                vec![mem(reg(bar), 0)],
                vec![Operand::Imm(1)],
            )],
            else_body: Vec::new(),
        }),
        inst("fence.mbarrier_init.release.cluster", vec![], vec![]),
        inst("bar.sync", vec![], vec![Operand::Imm(0)]),
        let_(x0, Expr::u32(0)),
        Stmt::new(StmtKind::If {
            cond: Expr::Var(leader),
            then_body: vec![
                inst(
                    "mbarrier.arrive.expect_tx.shared::cta.b64",
                    vec![sym("_")],
                    vec![mem(reg(bar), 0), Operand::Imm(16384)],
                ),
                inst(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                    vec![mem(reg(tile), 0)],
                    vec![
                        Operand::TensorMem(Box::new(reg(map)), vec![reg(x0), reg(rank)]),
                        mem(reg(bar), 0),
                    ],
                ),
            ],
            else_body: Vec::new(),
        }),
        Stmt::new(StmtKind::Loop {
            body: vec![inst(
                "mbarrier.try_wait.parity.shared::cta.b64",
                vec![reg(ready)],
                vec![mem(reg(bar), 0), Operand::Imm(0)],
            )],
            until: ready,
        }),
        inst("ld.shared.u32", vec![reg(value)], vec![mem(reg(tile), 0)]),
        inst(
            "ld.param.u64",
            vec![reg(out)],
            vec![mem(sym("p_out_ptr"), 0)],
        ),
        inst(
            "ld.param.u64",
            vec![reg(stride)],
            vec![mem(sym("p_out_stride0"), 0)],
        ),
        inst("cvta.to.global.u64", vec![reg(out)], vec![reg(out)]),
        inst("add.u64", vec![reg(out)], vec![reg(out), reg(stride)]),
        guarded(
            reg(leader),
            "st.global.u32",
            vec![mem(reg(out), 0)],
            vec![reg(value)],
        ),
    ];
    k
}

const SCALAR_SM90A: &str = concat!(
    "// tirx ",
    env!("CARGO_PKG_VERSION"),
    " - scalar, config default, target sm_90a\n",
    r".version 8.7
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 tirx_smem[];

.visible .entry scalar_default_sm_90a(
	.param .u64 p_out_ptr,
	.param .u32 p_dim_N
)
.maxntid 128, 1, 1
{
	.reg .b64 %rd0;
	.reg .b32 %r1;
	.reg .b32 %r2;
	.reg .pred %p3;
	.reg .b32 %r4;
	.reg .b32 %r5;
	.reg .b32 %r6;
	.reg .pred %p7;
	.reg .f32 %f8;
	.reg .b16 %h9;
	.reg .b32 %r10;
	.reg .b32 %r11;
	.reg .b64 %rd12;
	.reg .b64 %rd13;
	.reg .b32 %r15;
	.reg .pred %pf1;

	ld.param.u64 %rd0, [p_out_ptr];
	ld.param.u32 %r1, [p_dim_N];
	mov.u32 %r2, %tid.x;
	setp.lt.u32 %p3, %r2, %r1;
	mov.u32 %r4, 0;
	@!%p3 bra $L_else_0;
	add.u32 %r4, %r4, %r2;
	bra.uni $L_end_0;
$L_else_0:
	mov.u32 %r4, 1;
$L_end_0:
	mov.u32 %r5, 0;
$L_for_1:
	setp.lt.u32 %pf1, %r5, %r1;
	@!%pf1 bra $L_for_end_1;
	add.u32 %r4, %r4, %r5;
	add.u32 %r5, %r5, 1;
	bra.uni $L_for_1;
$L_for_end_1:
	mov.u32 %r6, 0;
$L_loop_2:
	add.u32 %r6, %r6, 1;
	setp.ge.u32 %p7, %r6, 4;
	@!%p7 bra $L_loop_2;
	mov.f32 %f8, 0f40000000;
	cvt.rzi.u32.f32 %r15, %f8;
	add.f32 %f8, %f8, 0f3F800000;
	mov.b16 %h9, 16256;
	mov.b32 %r10, {%h9, %h9};
	mov.s32 %r11, -3;
	mov.s32 %r11, %r4;
	@%p3 bra $L_end_3;
	mov.u32 %r4, %r10;
$L_end_3:
	cvta.to.global.u64 %rd12, %rd0;
	mul.wide.u32 %rd13, %r2, 4;
	add.u64 %rd12, %rd12, %rd13;
	@%p3 st.global.u32 [%rd12], %r4;
	@!%p3 st.global.u32 [%rd12+4], %r11;
	ld.global.u32 %r4, [%rd12+-4];
	st.global.u32 [%rd12+8], %r15;
	ret;
}
"
);

#[test]
fn golden_scalar_kernel() {
    let text = write_string(&scalar_kernel(Target::Sm90a)).unwrap();
    assert_eq!(text, SCALAR_SM90A, "\n--- got ---\n{text}");
}

#[test]
fn output_is_stable() {
    for build in [scalar_kernel, tma_kernel] {
        for target in Target::ALL {
            let kernel = build(target);
            assert_eq!(
                write_string(&kernel).unwrap(),
                write_string(&kernel.clone()).unwrap()
            );
        }
    }
}

#[test]
fn tma_kernel_header_and_tensor_operands() {
    let text = write_string(&tma_kernel(Target::Sm100a)).unwrap();
    assert!(text.starts_with(&format!(
        "// tirx {} - tma, config default, target sm_100a\n.version 8.7\n.target sm_100a\n",
        env!("CARGO_PKG_VERSION")
    )));
    for line in [
        ".visible .entry tma_default_sm_100a(\n\t.param .align 64 .b8 p_x_tmap_64x128[128],\n\t\
         .param .u64 p_out_ptr,\n\t.param .u64 p_out_stride0,\n\t.param .u32 p_dim_N\n)\n",
        ".maxntid 128, 1, 1\n.reqnctapercluster 2, 1, 1\n{\n",
        "\tmov.u64 %rd0, p_x_tmap_64x128;\n\tcvta.param.u64 %rd0, %rd0;\n",
        "\tmov.u32 %r1, tirx_smem;\n",
        "\telect.sync %r11|%p12, 4294967295;\n\t@%p12 prefetch.tensormap [%rd0];\n",
        "[%r2], [%rd0, {%r10, %r6}], [%r1];\n",
        "\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16384;\n",
        "\tfence.mbarrier_init.release.cluster;\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn empty_kernel_has_no_params_and_no_cluster() {
    let kernel = shell("empty", Target::Sm90a, Vec::new(), [1, 1, 1]);
    let text = write_string(&kernel).unwrap();
    assert!(
        text.ends_with(
            ".visible .entry empty_default_sm_90a()\n.maxntid 128, 1, 1\n{\n\n\tret;\n}\n"
        ),
        "{text}"
    );
}

#[test]
fn scope_and_op_are_not_lowered() {
    let mut kernel = scalar_kernel(Target::Sm90a);
    let scope = Stmt::at(
        StmtKind::Scope {
            scope: Scope::Elect,
            body: Vec::new(),
        },
        Span(7),
    );
    kernel.body.push(scope);
    let err = write_string(&kernel).unwrap_err();
    assert_eq!(
        err,
        PtxError::NotLowered {
            what: "scope `Elect` at span 7".into()
        }
    );

    // Nested inside a loop body, without a span.
    let mut kernel = scalar_kernel(Target::Sm90a);
    let StmtKind::For { body, .. } = &mut kernel.body[6].kind else {
        panic!("body[6] is the For")
    };
    body.push(Stmt::new(StmtKind::Op(Op::TmaWaitGroup {
        n: 0,
        read: true,
    })));
    let err = write_string(&kernel).unwrap_err();
    assert_eq!(
        err,
        PtxError::NotLowered {
            what: "op `TmaWaitGroup`".into()
        }
    );
    assert!(
        err.to_string()
            .starts_with("op `TmaWaitGroup` reached the PTX writer unlowered")
    );
}

#[test]
fn non_atom_expressions_are_not_lowered() {
    let mut kernel = shell("k", Target::Sm90a, Vec::new(), [1, 1, 1]);
    let a = kernel.new_var("a", U32);
    kernel.body = vec![let_(
        a,
        Expr::bin(tirx_ir::BinOp::Add, Expr::Var(a), Expr::u32(1)),
    )];
    assert!(
        matches!(write_string(&kernel), Err(PtxError::NotLowered { what }) if what.starts_with("expression `Bin(Add"))
    );

    kernel.body = vec![Stmt::new(StmtKind::If {
        cond: Expr::cmp(tirx_ir::CmpOp::Lt, Expr::Var(a), Expr::u32(1)),
        then_body: Vec::new(),
        else_body: Vec::new(),
    })];
    assert!(matches!(
        write_string(&kernel),
        Err(PtxError::NotLowered { .. })
    ));

    kernel.body = vec![let_(a, Expr::Special(tirx_ir::Special::TidX))];
    assert!(matches!(
        write_string(&kernel),
        Err(PtxError::NotLowered { .. })
    ));
}

#[test]
fn wrong_phase_unknown_vars_and_types_are_errors() {
    let mut kernel = scalar_kernel(Target::Sm90a);
    kernel.phase = Phase::Thread;
    assert!(matches!(
        write_string(&kernel),
        Err(PtxError::WrongPhase {
            phase: Phase::Thread,
            ..
        })
    ));

    let mut kernel = shell("k", Target::Sm90a, Vec::new(), [1, 1, 1]);
    let a = kernel.new_var("a", U32);
    let wide = kernel.new_var("wide", U64);
    kernel.body = vec![let_(Handle::from_index(9), Expr::u32(0))];
    assert_eq!(
        write_string(&kernel),
        Err(PtxError::UnknownVar { index: 9 })
    );

    kernel.body = vec![Stmt::new(StmtKind::Loop {
        body: Vec::new(),
        until: a,
    })];
    assert!(matches!(
        write_string(&kernel),
        Err(PtxError::TypeMismatch {
            index: 0,
            found: "u32",
            expected: "pred",
            ..
        })
    ));

    kernel.body = vec![let_(a, Expr::Var(wide))];
    assert!(matches!(
        write_string(&kernel),
        Err(PtxError::TypeMismatch {
            index: 1,
            found: "u64",
            expected: "u32",
            ..
        })
    ));

    kernel.body = vec![guarded(Operand::Imm(1), "exit", Vec::new(), Vec::new())];
    assert!(matches!(
        write_string(&kernel),
        Err(PtxError::BadOperand { .. })
    ));
}

#[test]
fn constant_conditions_print_one_branch() {
    let mut kernel = shell("k", Target::Sm90a, Vec::new(), [1, 1, 1]);
    let a = kernel.new_var("a", U32);
    let branch = |cond| {
        Stmt::new(StmtKind::If {
            cond,
            then_body: vec![let_(a, Expr::u32(1))],
            else_body: vec![let_(a, Expr::u32(2))],
        })
    };
    kernel.body = vec![
        branch(Expr::Imm(1, Pred)),
        branch(Expr::Not(Box::new(Expr::Imm(1, Pred)))),
    ];
    let text = write_string(&kernel).unwrap();
    assert!(
        text.ends_with("{\n\t.reg .b32 %r0;\n\n\tmov.u32 %r0, 1;\n\tmov.u32 %r0, 2;\n\tret;\n}\n"),
        "{text}"
    );
}

/// A counted loop of wgmmas whose constant bounds run it at least once is tested at the
/// bottom (no path skips it, so none commits an empty group: issue #31's C7519); one that
/// may run no time (constant `2..2` or run-time bounds), or that issues no wgmma, at the top.
#[test]
fn loops_of_wgmmas_known_to_run_are_tested_at_the_bottom() {
    let mut kernel = shell("k", Target::Sm90a, Vec::new(), [1, 1, 1]);
    let i = kernel.new_var("i", U32);
    let m = kernel.new_var("m", U32);
    let counted = |start, end, opcode| {
        Stmt::new(StmtKind::For {
            var: i,
            start: Expr::u32(start),
            end,
            step: Expr::u32(1),
            body: vec![inst(opcode, Vec::new(), Vec::new())],
        })
    };
    // Opcodes stand for the instructions: the writer prints them as they are.
    let mma = "wgmma.mma_async.sync.aligned";
    kernel.body = vec![
        let_(m, Expr::u32(3)),
        counted(0, Expr::u32(2), mma),
        counted(2, Expr::u32(2), mma),
        counted(0, Expr::Var(m), mma),
        counted(0, Expr::u32(2), "nop"),
    ];
    let text = write_string(&kernel).unwrap();
    let body = &text[text.find("\tmov.u32 %r1, 3;").unwrap()..];
    let top = |n: u32, start: u32, end: &str, opcode: &str| {
        format!(
            "\tmov.u32 %r0, {start};\n$L_for_{n}:\n\tsetp.lt.u32 %pf{n}, %r0, {end};\n\
             \t@!%pf{n} bra $L_for_end_{n};\n\t{opcode};\n\tadd.u32 %r0, %r0, 1;\n\
             \tbra.uni $L_for_{n};\n$L_for_end_{n}:\n"
        )
    };
    let bottom = format!(
        "\tmov.u32 %r0, 0;\n$L_for_0:\n\t{mma};\n\tadd.u32 %r0, %r0, 1;\n\
         \tsetp.lt.u32 %pf0, %r0, 2;\n\t@%pf0 bra $L_for_0;\n$L_for_end_0:\n"
    );
    let expected = format!(
        "\tmov.u32 %r1, 3;\n{bottom}{}{}{}\tret;\n}}\n",
        top(1, 2, "2", mma),
        top(2, 0, "%r1", mma),
        top(3, 0, "2", "nop"),
    );
    assert_eq!(body, expected);
}

/// Both kernels assemble for both targets with the real ptxas, without spills or warnings.
#[test]
fn kernels_assemble_with_ptxas() {
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for build in [scalar_kernel, tma_kernel] {
        for target in Target::ALL {
            let kernel = build(target);
            let text = write_string(&kernel).unwrap();
            let report = ptxas(&text, target.name())
                .unwrap_or_else(|e| panic!("{} for {}: {e}\n{text}", kernel.name, target.name()));
            let entry = report
                .entry(&kernel.sig.entry)
                .expect("ptxas reports the entry");
            assert!(!entry.spills() && report.warnings.is_empty(), "{report:?}");
        }
    }
}
