use tirx::prelude::*;

// A tile library holds only tile functions; `#[tile_module]` takes `library` or `uses(…)`.
#[tile_module(library)]
mod pieces {
    const X: u32 = 1;
}

#[tile_module(shared)]
mod other {}

fn main() {}
