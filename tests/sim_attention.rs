//! The Hopper attention kernel in the emulator (`tirx-sim`): configs of every head dim and
//! both masks on odd lengths, several schedules each, O and the LSE against the f64 reference,
//! with the emulator's strict checks on (the RS operand's `wgmma.fence` rule, `setmaxnreg`
//! budgets at the 168 registers ptxas gives a 384-thread CTA). No diagnostic may fire.

use tirx_kernels::attention::hopper::attention_sm90;
use tirx_kernels::simulate;
use tirx_sim::Policy;

/// Runs `config` on `s` queries and keys, `h` heads ([`simulate::attention`], which also
/// checks the LSE); returns max |o − ref|.
fn run(config: &str, s: usize, h: usize, seed: u64) -> f64 {
    let art = attention_sm90::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == config)
        .expect("a config of the kernel");
    let policy = Policy {
        strict_wgmma_fence: true,
        launch_regs: Some(168),
        ..Policy::default()
    };
    simulate::attention(art, (s, h), seed, &policy)
        .unwrap_or_else(|e| panic!("{config} s={s} h={h} seed {seed}: {e}"))
        .1
}

#[test]
fn attention_in_the_emulator_matches_the_f64_reference() {
    for (config, s, h) in [
        ("causal_d64", 130, 1),
        ("d128", 70, 2),
        ("d128_ping", 129, 1),
        ("f16_causal_d256", 90, 1),
    ] {
        for seed in 1..=2 {
            let err = run(config, s, h, seed);
            assert!(
                err <= 2e-2,
                "{config} s={s} h={h} seed {seed}: max |o − ref| {err:.3e}"
            );
        }
    }
}
