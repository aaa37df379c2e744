//! `setmaxnreg` (PTX ISA §9.7.19.6): the warp-specialised split the shipped GEMMs use, a pool
//! the requests exceed (the `.inc` blocks: a deadlock naming it), counts moving the wrong way,
//! and warpgroups whose warps do not execute the same instruction once each.

use super::*;

/// Runs `body` (after [`PROLOGUE`]; each thread then stores 1 at its slot) on one CTA of
/// `threads` threads, launched with `launch_regs` registers per thread.
fn run_regs(threads: u32, launch_regs: Option<u32>, body: &str) -> Result<Vec<u32>, SimError> {
    run_regs_seeded(threads, launch_regs, body, 5)
}

/// [`run_regs`] with scheduler seed `seed`.
fn run_regs_seeded(
    threads: u32,
    launch_regs: Option<u32>,
    body: &str,
    seed: u64,
) -> Result<Vec<u32>, SimError> {
    let m = module(
        OUT,
        &format!("{PROLOGUE}{body}\tst.global.u32 [%rd1], 1;\n\tret;\n"),
    );
    let policy = Policy {
        launch_regs,
        ..Policy::default()
    };
    let mut dev = Device::new();
    let out = dev.alloc(4 * threads as usize);
    let p = Program::new(&m, "k")?;
    run_program(
        &p,
        &one_cta(threads, 0),
        &[ParamValue::U64(out)],
        &mut dev,
        seed,
        &policy,
    )?;
    Ok(u32s(&dev.read(out, 4 * threads as usize).unwrap()))
}

/// Warpgroup 0 (threads 0..128) lowers its count to `dec`; the others raise theirs to `inc`.
fn split(dec: u32, inc: u32) -> String {
    format!(
        "\tsetp.lt.u32 %p0, %r0, 128;\n\t@!%p0 bra $L_inc;\n\
         \tsetmaxnreg.dec.sync.aligned.u32 {dec};\n\tbra.uni $L_done;\n\
         $L_inc:\n\tsetmaxnreg.inc.sync.aligned.u32 {inc};\n$L_done:\n"
    )
}

#[test]
fn the_producer_consumer_split_fits_the_launch_allocation() {
    // 384 threads launched at 168 registers: 4·32·40 + 8·32·232 = 12·32·168 exactly.
    let out = run_regs(384, Some(168), &split(40, 232)).expect("fits");
    assert!(out.iter().all(|&v| v == 1));
    // Launched at 160 it does not fit: the consumers' `.inc` waits for registers nobody frees.
    let e = run_regs(384, Some(160), &split(40, 232)).unwrap_err();
    let SimError::Deadlock(blocked) = &e else {
        panic!("{e}")
    };
    assert!(
        blocked.iter().any(|b| matches!(
            b.on,
            WaitOn::Registers {
                count: 232,
                capacity: 61440,
                ..
            }
        )),
        "{e}"
    );
    assert!(e.to_string().contains("setmaxnreg.inc to 232"), "{e}");
}

#[test]
fn requests_beyond_the_register_file_block_without_a_launch_count() {
    // Unknown launch count: nothing is assumed of warps that have not executed setmaxnreg, so
    // the split passes; three warpgroups at 232 (12·32·232 = 89088 > 65536) cannot.
    run_regs(384, None, &split(40, 232)).expect("fits");
    let e = run_regs(384, None, &split(232, 232).replace("dec.sync", "inc.sync")).unwrap_err();
    assert!(
        matches!(&e, SimError::Deadlock(b) if b.iter().any(|b| matches!(
            b.on,
            WaitOn::Registers { capacity: REGISTER_FILE, .. }
        ))),
        "{e}"
    );
}

#[test]
fn counts_must_move_the_way_the_action_says() {
    // dec from 168 to 40, then (after the warpgroup synchronises) dec to 64: above 40.
    let body = "\tsetmaxnreg.dec.sync.aligned.u32 40;\n\tbar.sync 0;\n\
                \tsetmaxnreg.dec.sync.aligned.u32 64;\n";
    let e = run_regs(128, Some(168), body).unwrap_err();
    assert!(
        e.to_string()
            .contains("setmaxnreg.dec to 64 registers per thread from warp")
            && e.to_string().contains("current 40"),
        "{e}"
    );
    // inc below the launch count.
    let e = run_regs(128, Some(168), "\tsetmaxnreg.inc.sync.aligned.u32 160;\n").unwrap_err();
    assert!(e.to_string().contains("current 168"), "{e}");
    // Equal is no change, and dec then inc back is consistent.
    let body = "\tsetmaxnreg.dec.sync.aligned.u32 40;\n\tbar.sync 0;\n\
                \tsetmaxnreg.inc.sync.aligned.u32 168;\n";
    run_regs(128, Some(168), body).expect("consistent");
}

#[test]
fn every_warp_of_the_warpgroup_executes_the_same_setmaxnreg_once() {
    // Warp 0 at one setmaxnreg, warps 1–3 at another.
    let body = "\tsetp.lt.u32 %p0, %r0, 32;\n\t@!%p0 bra $L_b;\n\
                \tsetmaxnreg.dec.sync.aligned.u32 40;\n\tbra.uni $L_done;\n\
                $L_b:\n\tsetmaxnreg.dec.sync.aligned.u32 40;\n$L_done:\n";
    let e = run_regs(128, None, body).unwrap_err();
    assert!(e.to_string().contains("different setmaxnreg"), "{e}");
    // Warp 3 skips it.
    let body = "\tsetp.lt.u32 %p0, %r0, 96;\n\t@!%p0 bra $L_done;\n\
                \tsetmaxnreg.dec.sync.aligned.u32 40;\n$L_done:\n";
    let e = run_regs(128, None, body).unwrap_err();
    assert!(e.to_string().contains("warps 0b0111"), "{e}");
    // Warp 0 executes it twice while warps 1–3 wait at a barrier for it.
    let body = "\tmov.u32 %r5, 0;\n\tsetp.ge.u32 %p1, %r0, 32;\n\t@%p1 bar.sync 1, 128;\n\
                $L_loop:\n\tsetmaxnreg.dec.sync.aligned.u32 40;\n\tadd.u32 %r5, %r5, 1;\n\
                \tsetp.lt.u32 %p2, %r5, 2;\n\t@%p1 bra $L_out;\n\t@%p2 bra $L_loop;\n\
                \tbar.arrive 1, 128;\n$L_out:\n";
    let e = run_regs(128, None, body).unwrap_err();
    assert!(
        e.to_string()
            .contains("warp 0 executes setmaxnreg again before warps 0b1110"),
        "{e}"
    );
}

#[test]
fn an_inc_waits_for_registers_a_later_dec_releases() {
    // The producers spin before releasing; the consumers' `.inc` to 232 cannot be granted
    // until then (at 168 per thread the CTA's pool is full), blocks, and resumes.
    let body = split(40, 232).replace(
        "\tsetmaxnreg.dec.sync.aligned.u32 40;\n",
        "\tmov.u32 %r5, 0;\n$L_spin:\n\tadd.u32 %r5, %r5, 1;\n\tsetp.lt.u32 %p1, %r5, 300;\n\
         \t@%p1 bra $L_spin;\n\tsetmaxnreg.dec.sync.aligned.u32 40;\n",
    );
    for seed in [5, 6] {
        let out = run_regs_seeded(384, Some(168), &body, seed).expect("granted after the dec");
        assert!(out.iter().all(|&v| v == 1));
    }
}
