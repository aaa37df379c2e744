//! Unit tests of the PTX front end on small hand-written snippets: one test per construct
//! (PTX ISA §4 syntax, §5 declarations, §6 operands, §9.7 instructions, §11 directives), the
//! positions errors report, and that no prefix or byte flip of a snippet panics.

use super::*;

/// A complete module in the shape `tirx-ptx` writes, with every construct it uses.
const SNIPPET: &str = "\
// tirx 0.1.0 - demo, config default, target sm_90a
.version 8.7
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 tirx_smem[];

.visible .entry demo_default_sm_90a(
\t.param .align 64 .b8 p_a_tmap_64x128[128],
\t.param .u64 p_d_ptr,
\t.param .u32 p_dim_M,
\t.param .f32 p_s_alpha
)
.maxntid 384, 1, 1
.reqnctapercluster 2, 1, 1
{
\t.reg .b32 %r0;
\t.reg .pred %p1;
\t.reg .b64 %rd2;
\t.reg .f32 %f3;

\tmov.u32 %r0, %tid.x;
\tsetp.eq.u32 %p1, %r0, 0;
\t@!%p1 bra $L_end_0;
\tmov.u64 %rd2, p_a_tmap_64x128;
\tcvta.param.u64 %rd2, %rd2;
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r0], [%rd2, {%r0, %r0}], [%r0];
$L_end_0:
\t@%p1 st.global.v2.f32 [%rd2+16], {%f3, %f3};
\tand.b32 %r0, %r0, -1024;
\tmov.f32 %f3, 0f3F800000;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r0+-4], 8192;
\telect.sync %r0|%p1, 4294967295;
\tld.param.u32 %r0, [p_dim_M];
\tret;
}
";

fn parse_ok(src: &str) -> Module {
    match parse(src) {
        Ok(m) => m,
        Err(e) => panic!("{e}\n{src}"),
    }
}

/// `HEADER` + an entry with `body` and no parameters.
fn with_body(body: &str) -> String {
    format!(".version 8.7\n.target sm_100a\n.address_size 64\n.entry k()\n{{\n{body}}}\n")
}

fn instrs(m: &Module) -> Vec<&Instr> {
    m.kernels[0].instructions().collect()
}

fn err(src: &str) -> ParseError {
    match parse(src) {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn header_and_module_variables() {
    let m = parse_ok(SNIPPET);
    assert_eq!(m.version, Version { major: 8, minor: 7 });
    assert_eq!(m.target, ["sm_90a"]);
    assert_eq!(m.address_size, Some(64));
    assert_eq!(
        m.globals,
        [VarDecl {
            linkage: Linkage::Extern,
            space: StateSpace::Shared,
            align: Some(1024),
            ty: Type::B8,
            name: "tirx_smem".into(),
            len: ArrayLen::Unsized,
            line: 6,
        }]
    );
}

#[test]
fn entry_params_and_tuning_directives() {
    let m = parse_ok(SNIPPET);
    let e = m.entry("demo_default_sm_90a").expect("the entry");
    assert!(e.visible);
    assert_eq!(e.line, 8);
    let names: Vec<_> = e.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["p_a_tmap_64x128", "p_d_ptr", "p_dim_M", "p_s_alpha"]
    );
    let tmap = &e.params[0];
    assert_eq!(
        (tmap.align, tmap.ty, tmap.array),
        (Some(64), Type::B8, Some(128))
    );
    assert_eq!(tmap.size_bytes(), 128);
    assert_eq!(e.params[1].ty, Type::U64);
    assert_eq!(e.params[3].ty, Type::F32);
    assert_eq!(
        e.directives,
        [
            Directive::MaxNtid([384, 1, 1]),
            Directive::ReqNctaPerCluster([2, 1, 1])
        ]
    );
    let src = ".version 9.0\n.target sm_100a\n.entry k()\n.reqntid 128\n.maxnreg 168\n\
               .minnctapersm 1\n.maxclusterrank 2\n.explicitcluster\n{\nret;\n}\n";
    let m = parse_ok(src);
    assert!(!m.kernels[0].visible && m.kernels[0].params.is_empty());
    assert_eq!(m.address_size, None);
    assert_eq!(
        m.kernels[0].directives,
        [
            Directive::ReqNtid([128, 1, 1]),
            Directive::MaxNreg(168),
            Directive::MinNctaPerSm(1),
            Directive::MaxClusterRank(2),
            Directive::ExplicitCluster,
        ]
    );
}

#[test]
fn register_declarations_single_lists_and_ranges() {
    let m = parse_ok(SNIPPET);
    let regs = &m.kernels[0].regs;
    assert_eq!(regs.len(), 4);
    assert_eq!((regs[1].ty, regs[1].name.as_str()), (Type::Pred, "%p1"));
    assert_eq!(regs[0].line, 17);
    let m = parse_ok(&with_body(
        ".reg .b32 %r<10>;\n.reg .f32 %f1, %f2<4>;\nret;\n",
    ));
    let regs = &m.kernels[0].regs;
    let got: Vec<_> = regs
        .iter()
        .map(|r| (r.ty, r.name.as_str(), r.count))
        .collect();
    assert_eq!(
        got,
        [
            (Type::B32, "%r", Some(10)),
            (Type::F32, "%f1", None),
            (Type::F32, "%f2", Some(4))
        ]
    );
}

#[test]
fn shared_variables_in_a_body() {
    let m = parse_ok(&with_body(
        ".shared .align 8 .b64 bar[4];\n.shared .u32 flag;\nret;\n",
    ));
    let shared = &m.kernels[0].shared;
    assert_eq!(shared.len(), 2);
    assert_eq!(
        (shared[0].align, shared[0].ty, shared[0].len),
        (Some(8), Type::B64, ArrayLen::Sized(4))
    );
    assert_eq!(
        (shared[1].name.as_str(), shared[1].len),
        ("flag", ArrayLen::Scalar)
    );
}

#[test]
fn labels_and_guards() {
    let m = parse_ok(SNIPPET);
    let body = &m.kernels[0].body;
    let label = body
        .iter()
        .find_map(|s| match s {
            Statement::Label { name, line } => Some((name.as_str(), *line)),
            Statement::Instr(_) => None,
        })
        .expect("a label");
    assert_eq!(label, ("$L_end_0", 28));
    let is = instrs(&m);
    let bra = is.iter().find(|i| i.opcode.base == "bra").expect("bra");
    assert_eq!(
        bra.pred,
        Some(Guard {
            reg: "%p1".into(),
            negated: true
        })
    );
    assert_eq!(bra.operands, [Operand::Sym("$L_end_0".into())]);
    let st = is.iter().find(|i| i.opcode.base == "st").expect("st");
    assert_eq!(st.pred.as_ref().map(|g| g.negated), Some(false));
    assert_eq!(st.line, 29);
}

#[test]
fn opcodes_split_into_the_isa_name_and_modifiers() {
    let split = |s: &str| {
        let parts: Vec<String> = s.split('.').map(str::to_owned).collect();
        let op = Opcode::from_parts(&parts);
        assert_eq!(op.to_string(), s, "Display gives back the mnemonic");
        (op.base.clone(), op.modifiers.join(" "), op.is_known())
    };
    let cases = [
        ("add.u32", "add", "u32"),
        ("ret", "ret", ""),
        ("bra.uni", "bra", "uni"),
        (
            "mbarrier.try_wait.parity.shared::cta.b64",
            "mbarrier.try_wait",
            "parity shared::cta b64",
        ),
        (
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
            "wgmma.mma_async",
            "sync aligned m64n128k16 f32 bf16 bf16",
        ),
        (
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
            "cp.async.bulk.tensor",
            "2d global shared::cta bulk_group",
        ),
        (
            "cp.async.bulk.wait_group.read",
            "cp.async.bulk.wait_group",
            "read",
        ),
        (
            "tcgen05.ld.sync.aligned.32x32b.x32.b32",
            "tcgen05.ld",
            "sync aligned 32x32b x32 b32",
        ),
        (
            "tcgen05.wait::ld.sync.aligned",
            "tcgen05.wait::ld",
            "sync aligned",
        ),
        ("elect.sync", "elect.sync", ""),
        (
            "fence.proxy.async.shared::cta",
            "fence",
            "proxy async shared::cta",
        ),
        (
            "barrier.cluster.arrive.release.aligned",
            "barrier.cluster",
            "arrive release aligned",
        ),
        ("ld.global.nc.u32", "ld.global.nc", "u32"),
        ("ld.global.b16", "ld", "global b16"),
    ];
    for (mnemonic, base, mods) in cases {
        assert_eq!(
            split(mnemonic),
            (base.to_owned(), mods.to_owned(), true),
            "{mnemonic}"
        );
    }
    // Unknown names parse; the first part is the name and `is_known` says so.
    assert_eq!(
        split("frobnicate.x.y"),
        ("frobnicate".into(), "x y".into(), false)
    );
    let m = parse_ok(SNIPPET);
    let cp = instrs(&m)[5];
    assert_eq!(cp.opcode.base, "cp.async.bulk.tensor");
    assert!(cp.opcode.has("mbarrier::complete_tx::bytes") && !cp.opcode.has("bytes"));
}

#[test]
fn operands_of_every_kind() {
    let m = parse_ok(SNIPPET);
    let is = instrs(&m);
    let reg = |s: &str| Operand::Reg(s.into());
    let mem = |base: AddrBase, offset| Operand::Mem(Address { base, offset });
    // Special register with its component; a symbol.
    assert_eq!(is[0].operands, [reg("%r0"), reg("%tid.x")]);
    assert_eq!(is[3].operands[1], Operand::Sym("p_a_tmap_64x128".into()));
    // Tensor map + coordinates.
    assert_eq!(
        is[5].operands[1],
        Operand::Tensor {
            map: Box::new(reg("%rd2")),
            coords: vec![reg("%r0"), reg("%r0")]
        }
    );
    // `[reg+off]` and a vector.
    assert_eq!(
        is[6].operands,
        [
            mem(AddrBase::Reg("%rd2".into()), 16),
            Operand::Vector(vec![reg("%f3"), reg("%f3")])
        ]
    );
    // Negative immediate, f32 bits.
    assert_eq!(is[7].operands[2], Operand::Imm(-1024));
    assert_eq!(is[8].operands[1], Operand::F32(0x3F80_0000));
    // Sink, `[reg+-off]`, decimal.
    assert_eq!(
        is[9].operands,
        [
            Operand::Sink,
            mem(AddrBase::Reg("%r0".into()), -4),
            Operand::Imm(8192)
        ]
    );
    // Pair and a full 32-bit mask.
    assert_eq!(
        is[10].operands,
        [
            Operand::Pair(Box::new(reg("%r0")), Box::new(reg("%p1"))),
            Operand::Imm(4_294_967_295)
        ]
    );
    // `[param]`; no operands.
    assert_eq!(is[11].operands[1], mem(AddrBase::Sym("p_dim_M".into()), 0));
    assert!(is[12].operands.is_empty());
}

#[test]
fn constants_in_every_radix_and_float_form() {
    let m = parse_ok(&with_body(
        "mov.u32 %r1, 0x1F;\nmov.u32 %r1, 0b101;\nmov.u32 %r1, 017;\nmov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;\n\
         mov.u32 %r1, 7U;\nmov.f64 %fd1, 0d3FF0000000000000;\nmov.f64 %fd1, 1.5;\n\
         mov.f32 %f1, 2e3;\nselp.b32 %r1, 1, 0, !%p1;\nld.shared.u32 %r1, [64];\n",
    ));
    let second: Vec<_> = instrs(&m).iter().map(|i| i.operands[1].clone()).collect();
    assert_eq!(
        second,
        [
            Operand::Imm(31),
            Operand::Imm(5),
            Operand::Imm(15),
            Operand::Imm(-1),
            Operand::Imm(7),
            Operand::F64(1.0f64.to_bits()),
            Operand::F64(1.5f64.to_bits()),
            Operand::F64(2000.0f64.to_bits()),
            Operand::Imm(1),
            Operand::Mem(Address {
                base: AddrBase::Absolute,
                offset: 64
            }),
        ]
    );
    assert_eq!(instrs(&m)[8].operands[3], Operand::NotReg("%p1".into()));
}

#[test]
fn comments_are_whitespace() {
    let m = parse_ok(&with_body(
        "// a line comment\n/* a block\n comment */ add.u32 /* inside */ %r1, %r1, 1; // tail\nret;\n",
    ));
    let is = instrs(&m);
    assert_eq!(is.len(), 2);
    assert_eq!(
        (is[0].opcode.to_string(), is[0].line),
        ("add.u32".to_owned(), 8)
    );
    // A comment between the mnemonic's parts is not allowed: the parts must be joined.
    let e = err(&with_body("add/**/.u32 %r1, %r1, 1;\n"));
    assert!(matches!(e.what, ParseErrorKind::Unsupported(_)), "{e}");
}

#[test]
fn lexer_positions_and_joins() {
    let toks = lex("mov.u32\t%r1, %tid.x;\n  ret;").expect("lexes");
    let pos: Vec<_> = toks.iter().map(|t| (t.line, t.col, t.joined)).collect();
    assert_eq!(
        pos,
        [
            (1, 1, false),  // mov
            (1, 4, true),   // .u32
            (1, 9, false),  // %r1
            (1, 12, true),  // ,
            (1, 14, false), // %tid
            (1, 18, true),  // .x
            (1, 20, true),  // ;
            (2, 3, false),  // ret
            (2, 6, true),   // ;
            (2, 7, true),   // Eof
        ]
    );
    assert_eq!(toks[1].tok, Tok::Dot("u32".into()));
    assert_eq!(
        lex("8.7").expect("lexes")[0].tok,
        Tok::Decimal("8.7".into())
    );
}

#[test]
fn errors_name_the_line_and_column() {
    let at = |e: ParseError| (e.line, e.column);
    // A missing `;` is seen at the next token.
    let e = err(&with_body("add.u32 %r1, %r1, 1\nret;\n"));
    assert_eq!(at(e.clone()), (7, 1));
    assert!(
        e.to_string()
            .starts_with("PTX line 7, column 1: expected `,` or `;`"),
        "{e}"
    );
    // A character no token starts with.
    let e = err(&with_body("\tadd.u32 %r1, %r1, #;\n"));
    assert_eq!(
        (at(e.clone()), e.what),
        ((6, 20), ParseErrorKind::UnexpectedChar('#'))
    );
    // An unknown type, at the type.
    let e = err(&with_body(".reg .q32 %r1;\n"));
    assert_eq!(
        (at(e.clone()), e.what),
        ((6, 6), ParseErrorKind::UnknownType("q32".into()))
    );
    // A bad number.
    let e = err(&with_body("mov.f32 %f1, 0f3F80;\n"));
    assert_eq!(
        (at(e.clone()), e.what),
        ((6, 14), ParseErrorKind::BadNumber("0f3F80".into()))
    );
    let e = err(&with_body("mov.u64 %rd1, 0x1FFFFFFFFFFFFFFFF;\n"));
    assert!(matches!(e.what, ParseErrorKind::BadNumber(_)));
    // Header directives are required, in order.
    assert_eq!(
        err(".target sm_90a\n").what,
        ParseErrorKind::Missing("version")
    );
    assert_eq!(
        err(".version 8.7\n").what,
        ParseErrorKind::Missing("target")
    );
    // An unterminated comment reports where it opened.
    let e = err(".version 8.7\n  /* never closed\n");
    assert_eq!(
        (at(e.clone()), e.what),
        ((2, 3), ParseErrorKind::UnterminatedComment)
    );
    // Truncated body: the end of input, just past the last character.
    let e = err(".version 8.7\n.target sm_90a\n.entry k()\n{\nret;");
    assert_eq!(at(e.clone()), (5, 5));
    assert!(e.to_string().ends_with("found end of input"), "{e}");
    // A register where a mnemonic belongs, at the register.
    let e = err(&with_body("  %r1 add.u32;\n"));
    assert_eq!(at(e), (6, 3));
}

#[test]
fn constructs_outside_the_subset_are_named() {
    let unsupported = |src: &str| match err(src).what {
        ParseErrorKind::Unsupported(what) => what,
        other => panic!("expected Unsupported, got {other:?}"),
    };
    assert!(unsupported(&with_body("{\nret;\n}\n")).contains("nested"));
    assert!(unsupported(&with_body(".loc 1 2 3\n")).contains(".loc"));
    assert!(unsupported(&with_body(".reg .v4 .f32 %v;\n")).contains(".v4"));
    assert!(unsupported(".version 8.7\n.target sm_90a\n.func f()\n{\n}\n").contains(".func"));
}

#[test]
fn inventory_counts_distinct_opcodes() {
    let m = parse_ok(&with_body(
        "add.u32 %r1, %r1, 1;\nadd.u32 %r1, %r1, 2;\nadd.u64 %rd1, %rd1, 2;\nret;\n",
    ));
    let inv = inventory([&m]);
    let got: Vec<_> = inv
        .iter()
        .map(|c| (c.opcode.to_string(), c.count))
        .collect();
    assert_eq!(
        got,
        [
            ("add.u32".into(), 2),
            ("add.u64".into(), 1),
            ("ret".into(), 1)
        ]
    );
    assert_eq!(bases(&inv), [("add".into(), 3), ("ret".into(), 1)]);
    // Over two modules the counts add up.
    assert_eq!(inventory([&m, &m])[0].count, 4);
}

#[test]
fn no_prefix_or_byte_flip_panics() {
    for end in (0..=SNIPPET.len()).filter(|&i| SNIPPET.is_char_boundary(i)) {
        let _ = parse(&SNIPPET[..end]);
    }
    // Every position overwritten with each of a few troublesome characters.
    let bytes = SNIPPET.as_bytes();
    for i in 0..bytes.len() {
        for c in [
            b'.', b'[', b'{', b'-', b'0', b'%', b'/', b'*', b';', b'<', b'|', b'!',
        ] {
            let mut b = bytes.to_vec();
            b[i] = c;
            let _ = parse(&String::from_utf8_lossy(&b));
        }
    }
    // The whole snippet parses, so the loop above started from a valid module.
    assert_eq!(instrs(&parse_ok(SNIPPET)).len(), 13);
}
