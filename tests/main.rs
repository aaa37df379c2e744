//! The integration tests, in one binary: snapshots of every shipped kernel's IR and PTX,
//! ptxas assembly and SASS checks of every kernel × target, the IR text round trip through
//! the pipeline, compile-fail cases of the macro, dispatch tables, and (feature `gpu`) runs
//! on a GPU against CPU references.

mod assemble;
mod contracts;
mod dispatch;
mod elem_types;
#[cfg(feature = "gpu")]
mod gpu;
mod roundtrip;
mod snapshots;
mod ui;
