//! GPU test of `exp2_poly3` (feature `gpu`): the kernel of `exp2_poly.rs` on the device over
//! the same sweep of the whole input range, against f64 `2^x` and the device's own
//! `ex2.approx`, with the same bound and end values as in the emulator; prints the errors.
//! One launch of 64 CTAs, well under a second.

use crate::exp2_poly::{SHAPE, exp2_both, inputs, measure};
use tirx::Runtime;

#[test]
fn exp2_poly3_is_within_its_fit_over_the_whole_range_on_the_gpu() {
    let rt = Runtime::new(0).expect("the gpu feature needs a GPU");
    let x = inputs();
    let tx = rt.upload(&x, &SHAPE).unwrap();
    let mut y1 = rt.zeros::<f32>(&SHAPE).unwrap();
    let mut y2 = rt.zeros::<f32>(&SHAPE).unwrap();
    rt.poison(&mut y1).unwrap();
    rt.poison(&mut y2).unwrap();
    exp2_both::launch(&rt, "default", &tx, &mut y1, &mut y2).expect("launches");
    rt.synchronize().unwrap();
    let (g1, g2) = (rt.download(&y1).unwrap(), rt.download(&y2).unwrap());
    let e = measure(&x, &g1, &g2).unwrap_or_else(|m| panic!("{m}"));
    println!(
        "exp2_poly3 on the GPU, max relative error over [-126, 128): {:.4e} against 2^x (f64), \
         {:.4e} against ex2.approx; ex2.approx against 2^x: {:.4e}",
        e.poly_vs_exact, e.poly_vs_approx, e.approx_vs_exact
    );
    assert!(e.poly_vs_exact > 8.5e-5, "{e:?}");
}
