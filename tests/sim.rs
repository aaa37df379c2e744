//! The emulator's PTX front end (`tirx-sim`, issue #10) on every shipped artifact: each PTX
//! parses; its one entry matches the artifact's signature (name, parameters in ABI order with
//! their sizes, `.maxntid`, `.reqnctapercluster`); every mnemonic splits into a name the PTX
//! ISA lists; and truncated or garbled PTX gives an error, never a panic.

use tirx_ir::abi::AbiParam;
use tirx_kernels::catalogue;
use tirx_sim::ptx::{self, Directive, Module};

/// Every artifact with its label (`kernel config target`) and parsed module.
fn parsed() -> Vec<(String, &'static tirx::KernelArtifact, Module)> {
    let mut out = Vec::new();
    for k in catalogue::all() {
        for a in k.artifacts {
            let label = format!("{} {} {}", k.name, a.config, a.target.name());
            match ptx::parse(a.ptx) {
                Ok(m) => out.push((label, a, m)),
                Err(e) => panic!("{label}: {e}"),
            }
        }
    }
    out
}

#[test]
fn every_shipped_ptx_parses_and_matches_its_signature() {
    let all = parsed();
    assert!(
        all.len() >= 5,
        "expected every kernel × target, found {}",
        all.len()
    );
    for (label, a, m) in &all {
        let sig = (a.signature)();
        assert_eq!(m.target, [a.target.name()], "{label}");
        assert_eq!(m.kernels.len(), 1, "{label}: one entry");
        let e = &m.kernels[0];
        assert_eq!(e.name, sig.entry, "{label}");
        assert!(e.visible, "{label}");
        // One `.param` line per ABI parameter, in order, named and sized by the ABI.
        assert_eq!(e.params.len(), sig.params.len(), "{label}: param count");
        for (p, abi) in e.params.iter().zip(&sig.params) {
            let (size, align) = abi.size_align(&sig);
            assert_eq!(p.name, abi.ptx_name(), "{label}");
            assert_eq!(p.size_bytes() as usize, size, "{label}: {}", p.name);
            if matches!(abi, AbiParam::TensorMap { .. }) {
                assert_eq!(
                    p.align.map(|a| a as usize),
                    Some(align),
                    "{label}: {}",
                    p.name
                );
            }
        }
        assert!(
            e.directives
                .contains(&Directive::MaxNtid([sig.threads, 1, 1])),
            "{label}"
        );
        let cluster = e.directives.iter().find_map(|d| match d {
            Directive::ReqNctaPerCluster(c) => Some(*c),
            _ => None,
        });
        assert_eq!(cluster.unwrap_or([1, 1, 1]), sig.cluster, "{label}");
        assert!(e.instructions().count() > 0, "{label}: no instructions");
        // Every register an instruction names is declared.
        let declared: std::collections::HashSet<&str> =
            e.regs.iter().map(|r| r.name.as_str()).collect();
        for g in e.instructions().filter_map(|i| i.pred.as_ref()) {
            assert!(
                declared.contains(g.reg.as_str()),
                "{label}: guard {}",
                g.reg
            );
        }
    }
}

/// The executor's to-do list: every opcode of every shipped kernel, its name one the ISA
/// lists (`--nocapture` prints the inventory).
#[test]
fn every_shipped_opcode_has_an_isa_name() {
    let all = parsed();
    let inv = ptx::inventory(all.iter().map(|(_, _, m)| m));
    let unknown: Vec<String> = inv
        .iter()
        .filter(|c| !c.opcode.is_known())
        .map(|c| c.opcode.to_string())
        .collect();
    assert!(
        unknown.is_empty(),
        "mnemonics with no ISA name: {unknown:?}"
    );
    let bases = ptx::bases(&inv);
    for (base, n) in &bases {
        println!("{n:>8}  {base}");
    }
    println!("{} distinct opcodes, {} names", inv.len(), bases.len());
    for want in [
        "wgmma.mma_async",
        "tcgen05.mma",
        "cp.async.bulk.tensor",
        "mbarrier.try_wait",
    ] {
        assert!(bases.iter().any(|(b, _)| b == want), "{want} missing");
    }
}

/// Every prefix of the smallest shipped PTX, a spread of prefixes of the Blackwell GEMM, and
/// byte flips of both: `Ok` or `Err`, never a panic.
#[test]
fn truncated_or_garbled_ptx_never_panics() {
    let small = catalogue::find("tma_copy").expect("shipped").artifacts[0].ptx;
    let big = catalogue::find("gemm_sm100").expect("shipped").artifacts[0].ptx;
    for end in 0..=small.len() {
        let _ = ptx::parse(&small[..end]);
    }
    for end in (0..=big.len()).step_by(997) {
        let _ = ptx::parse(&big[..end]);
    }
    for (text, step) in [(small, 1), (big, 4001)] {
        let bytes = text.as_bytes();
        for i in (0..bytes.len()).step_by(step) {
            for c in [b'.', b'[', b'{', b'%', b'/', b';', b'x', b' '] {
                let mut b = bytes.to_vec();
                b[i] = c;
                let garbled = String::from_utf8_lossy(&b);
                let _ = ptx::parse(&garbled);
            }
        }
    }
    // The untouched texts parse, so the flips started from valid modules.
    assert!(ptx::parse(small).is_ok() && ptx::parse(big).is_ok());
}
