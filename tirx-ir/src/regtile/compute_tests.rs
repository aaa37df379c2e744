//! Unit tests of `compute.rs`'s build-time knowledge: the index quotients a layout makes the
//! same for every thread (`col_index(t) / 8` of the wgmma accumulator fragment), and the
//! comparisons they decide.

use super::*;
use crate::arena::Handle;

fn div(a: P, d: u32) -> P {
    P::Bin(
        TBin::Div,
        Box::new(a),
        Box::new(P::Int(Handle::from_index(0), Some(d))),
    )
}

/// Every register's `col_index / 8` in the m64n192 fragment is its 8-column group, and that
/// is what every thread computes at run time (origin + the register's column, over 8).
#[test]
fn the_fragments_column_group_is_known_at_every_register() {
    let l = RegLayout::wgmma_acc(64, 192).expect("a fragment");
    let q = div(P::Index(1), 8);
    for i in 0..l.value_count() {
        let known = known_u32(&l, &q, i).expect("the column group is known");
        for t in 0..l.thread_count() {
            let col = l.thread_coord(t)[1] + l.value_coord(i)[1];
            assert_eq!(known, col / 8, "register {i}, thread {t}");
        }
    }
}

/// A divisor the threads' origins cross (columns 0..6 over 4), and the rows (16-row warps
/// over 8), are not known: the threads differ.
#[test]
fn a_quotient_the_threads_differ_in_is_not_known() {
    let l = RegLayout::wgmma_acc(64, 192).expect("a fragment");
    assert_eq!(known_u32(&l, &div(P::Index(1), 4), 0), None);
    assert_eq!(known_u32(&l, &div(P::Index(0), 8), 0), None);
    assert_eq!(known_u32(&l, &div(P::Index(1), 0), 0), None);
    // 64 rows over 64: every thread's row is in group 0.
    assert_eq!(known_u32(&l, &div(P::Index(0), 64), 0), Some(0));
}

/// A comparison of two known quotients is decided at build time (only the chosen side of a
/// `select` is computed); one against a runtime value is not.
#[test]
fn comparisons_of_known_quotients_are_decided() {
    let l = RegLayout::wgmma_acc(64, 192).expect("a fragment");
    let below = |bound: u32| {
        P::Cmp(
            CmpOp::Lt,
            Box::new(div(P::Index(1), 8)),
            Box::new(P::Int(Handle::from_index(0), Some(bound))),
        )
    };
    for i in 0..l.value_count() {
        let group = l.value_coord(i)[1] / 8;
        assert_eq!(known_pred(&l, &below(8), i), Some(group < 8));
    }
    let runtime = P::Cmp(
        CmpOp::Lt,
        Box::new(div(P::Index(1), 8)),
        Box::new(P::Int(Handle::from_index(0), None)),
    );
    assert_eq!(known_pred(&l, &runtime, 0), None);
}
