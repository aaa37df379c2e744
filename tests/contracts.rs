//! The completion-signal contract checked at build time: errors a kernel gets instead of a
//! silent race or a hang on the GPU.

use tirx_ir::parse::parse_module;
use tirx_ir::passes::run_pipeline;

fn compile(body: &str) -> Result<(), String> {
    let text = format!(
        "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  var %0: u32 \"h\"
  buffer @a_s: smem bf16 (2, 64, 64):(4096, 64, 1) swizzle B128
  barrier @bar: count 1 arrivals 1
{{
{body}
}}
"
    );
    let k = parse_module(&text)
        .expect("test input parses")
        .kernels
        .remove(0);
    run_pipeline(k, false).map(|_| ()).map_err(|e| {
        e.iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The IR text of a kernel after the `derive-signals` pass.
fn after_derive_signals(text: &str) -> String {
    let k = parse_module(text).unwrap().kernels.remove(0);
    let (_, snaps) = run_pipeline(k, true).unwrap();
    snaps
        .into_iter()
        .find(|s| s.pass == "derive-signals")
        .unwrap()
        .text
}

#[test]
fn loads_signalling_one_barrier_phase_from_every_loop_iteration_are_rejected() {
    // A run-time trip count: the phase's byte count is not known at build time.
    let err = compile(
        "  scope thread 0 {
    for %0 = 0:u32 to cdiv(dim K, 64:u32) step 1:u32 {
      op copy @a_s[%0 % 2:u32] <- global a[0:u32, %0] bar @bar[0:u32]
    }
  }",
    )
    .unwrap_err();
    assert!(
        err.contains("signals the same barrier in every iteration"),
        "{err}"
    );
}

/// A counted loop whose barrier index repeats over its iterations (`bar[i / 2]`) arms that
/// barrier once per iteration: rejected with the two iterations (the emulator saw the phase
/// get more arrivals than it expects before this check existed).
#[test]
fn a_barrier_index_that_repeats_over_a_counted_loop_is_rejected() {
    let err = compile(
        "  scope thread 0 {
    for %0 = 0:u32 to 2:u32 step 1:u32 {
      op copy @a_s[%0] <- global a[0:u32, %0] bar @bar[%0 / 2:u32]
    }
  }
  op mbar_wait @bar[0:u32] parity 0:u32",
    )
    .unwrap_err();
    assert!(
        err.contains("signals barrier 0 in iterations 0 and 1 of its loop"),
        "{err}"
    );
}

#[test]
fn a_loop_that_waits_on_its_barrier_every_iteration_is_accepted() {
    compile(
        "  for %0 = 0:u32 to 2:u32 step 1:u32 {
    scope thread 0 {
      op copy @a_s[%0] <- global a[0:u32, %0] bar @bar[0:u32]
    }
    op mbar_wait @bar[0:u32] parity %0 % 2:u32
  }",
    )
    .unwrap();
}

#[test]
fn both_boxes_of_one_phase_count_toward_the_derived_bytes() {
    let text = "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  buffer @a_s: smem bf16 (2, 64, 64):(4096, 64, 1) swizzle B128
  barrier @bar: count 1 arrivals 1
{
  scope thread 0 {
    op copy @a_s[0:u32] <- global a[0:u32, 0:u32] bar @bar[0:u32]
    op copy @a_s[1:u32] <- global a[0:u32, 1:u32] bar @bar[0:u32]
  }
}
";
    let after = &after_derive_signals(text);
    assert!(
        after.contains("op mbar_arrive_expect_tx @bar[0:u32] bytes 16384"),
        "{after}"
    );
    assert_eq!(after.matches("mbar_arrive_expect_tx").count(), 1, "{after}");
}

/// A loop with constant bounds over loads of one barrier phase (the chunk loop of an MN-major
/// B slab) is that phase spread over its iterations: one expect-tx before the loop, for every
/// iteration's boxes, and none inside.
#[test]
fn a_constant_loop_of_loads_is_one_phase_with_every_iterations_bytes() {
    let text = "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
    tensor b: bf16[K, N]
  var %0: u32 \"c\"
  buffer @a_s: smem bf16 (64, 64):(64, 1) swizzle B128
  buffer @b_s: smem bf16 (4, 64, 64):(4096, 64, 1) swizzle B128 major mn
  barrier @bar: count 1 arrivals 1
{
  scope thread 0 {
    op copy @a_s <- global a[0:u32, 0:u32] bar @bar[0:u32]
    for %0 = 0:u32 to 4:u32 step 1:u32 {
      op copy @b_s[%0] <- global b[0:u32, %0] bar @bar[0:u32]
    }
  }
}
";
    let after = &after_derive_signals(text);
    // A's 8 KB box and four 8 KB chunks of B.
    assert!(
        after.contains("op mbar_arrive_expect_tx @bar[0:u32] bytes 40960"),
        "{after}"
    );
    assert_eq!(after.matches("mbar_arrive_expect_tx").count(), 1, "{after}");
    let expect_at = after.find("mbar_arrive_expect_tx").unwrap();
    assert!(expect_at < after.find("for %0").unwrap(), "{after}");
}

#[test]
fn loads_of_one_phase_split_between_a_block_and_a_nested_if_are_rejected() {
    // The block's loads and the `if`'s each arrive with their bytes: two arrivals for one.
    let err = compile(
        "  scope thread 0 {
    op copy @a_s[0:u32] <- global a[0:u32, 0:u32] bar @bar[0:u32]
    if dim K > 64:u32 {
      op copy @a_s[1:u32] <- global a[0:u32, 1:u32] bar @bar[0:u32]
    }
  }",
    )
    .unwrap_err();
    assert!(err.contains("split over 2 blocks"), "{err}");
    // Two sibling single-thread scopes: the same.
    let err = compile(
        "  scope thread 0 {
    op copy @a_s[0:u32] <- global a[0:u32, 0:u32] bar @bar[0:u32]
  }
  scope thread 0 {
    op copy @a_s[1:u32] <- global a[0:u32, 1:u32] bar @bar[0:u32]
  }",
    )
    .unwrap_err();
    assert!(err.contains("split over 2 blocks"), "{err}");
}

#[test]
fn loads_in_the_two_branches_of_an_if_are_one_arrival() {
    compile(
        "  scope thread 0 {
    if dim K > 64:u32 {
      op copy @a_s[0:u32] <- global a[0:u32, 0:u32] bar @bar[0:u32]
    } else {
      op copy @a_s[1:u32] <- global a[0:u32, 1:u32] bar @bar[0:u32]
    }
  }",
    )
    .unwrap();
}
