//! Constructors for cluster launch control (PTX ISA 9.0 §9.7.13.17
//! `clusterlaunchcontrol.try_cancel`, §9.7.13.18 `clusterlaunchcontrol.query_cancel`; sm_100
//! and later, `.multicast::cluster::all` on sm_100a) and the 16-byte shared load that brings
//! a response into a `.b128` register.
//!
//! Invariants: the response address is a 16-byte-aligned `.shared::cta` address and the
//! mbarrier an 8-byte-aligned `.shared::cta` one (§9.7.13.17: with `.shared::cta` both operands
//! must lie in the CTA's window); the response is opaque, read only through `query_cancel`.

use super::{inst, mem, reg};
use crate::arena::Handle;
use crate::ir::{Inst, Operand, Var};

impl Inst {
    /// `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
    /// [.multicast::cluster::all].b128 [resp], [mbar]` (§9.7.13.17): asynchronously asks to
    /// cancel a cluster not yet launched; on completion the 16-byte response is in `resp` and
    /// `mbar` (of every CTA of the cluster, with multicast) gets complete-tx of 16 bytes.
    pub fn clc_try_cancel(resp: Handle<Var>, mbar: Handle<Var>, multicast: bool) -> Inst {
        let mc = if multicast {
            ".multicast::cluster::all"
        } else {
            ""
        };
        inst(
            format!(
                "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{mc}.b128"
            ),
            vec![],
            vec![mem(resp, 0), mem(mbar, 0)],
        )
    }

    /// `ld.shared.b128 q, [addr]` (§9.7.9.8 ld; `.b128` since PTX ISA 8.3, sm_70+): the
    /// response as one 16-byte register (§9.7.13.17 loads it so before `query_cancel`).
    pub fn ld_shared_b128(q: Handle<Var>, addr: Handle<Var>) -> Inst {
        inst("ld.shared.b128", vec![reg(q)], vec![mem(addr, 0)])
    }

    /// `clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, q` (§9.7.13.18): `p` true
    /// when the request behind response `q` cancelled a cluster.
    pub fn clc_is_canceled(p: Handle<Var>, q: Handle<Var>) -> Inst {
        inst(
            "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",
            vec![reg(p)],
            vec![reg(q)],
        )
    }

    /// `clusterlaunchcontrol.query_cancel.get_first_ctaid::{x,y,z}.b32.b128 d, q`
    /// (§9.7.13.18): coordinate `dim` (0 = x) of the first CTA of the cancelled cluster;
    /// undefined when the request failed.
    pub fn clc_first_ctaid(dim: usize, d: Handle<Var>, q: Handle<Var>) -> Inst {
        let x = ["x", "y", "z"][dim];
        inst(
            format!("clusterlaunchcontrol.query_cancel.get_first_ctaid::{x}.b32.b128"),
            vec![reg(d)],
            vec![Operand::Reg(q)],
        )
    }
}
