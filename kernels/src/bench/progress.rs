//! A progress bar on stderr, `[#####.....] 7/11 4096x14336x4096 (cuBLASLt)`, redrawn in place
//! with `\r` when stderr is a terminal and printed one line per update otherwise (so a log
//! file stays readable). No dependency: the bar is a string, which is what the tests check.

use std::io::{IsTerminal, Write};

/// Cells in the bar.
pub const CELLS: usize = 10;

/// The bar's text: `done` of `total` steps, then what is running now.
pub fn render(done: usize, total: usize, what: &str) -> String {
    let filled = (done * CELLS)
        .checked_div(total)
        .unwrap_or(CELLS)
        .min(CELLS);
    format!(
        "[{}{}] {done}/{total} {what}",
        "#".repeat(filled),
        ".".repeat(CELLS - filled)
    )
}

/// A bar being drawn on stderr.
pub struct Progress {
    total: usize,
    done: usize,
    /// Length of the last line drawn, to blank what a shorter line would leave behind.
    last_len: usize,
    in_place: bool,
}

impl Progress {
    /// A bar of `total` steps; draws nothing until [`Progress::show`].
    pub fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            last_len: 0,
            in_place: std::io::stderr().is_terminal(),
        }
    }

    /// Draws the bar with `what` as the current activity.
    pub fn show(&mut self, what: &str) {
        let line = render(self.done, self.total, what);
        let mut err = std::io::stderr().lock();
        // Progress output is best effort: a closed stderr must not stop the measurement.
        let _ = if self.in_place {
            let pad = self.last_len.saturating_sub(line.chars().count());
            write!(err, "\r{line}{}", " ".repeat(pad))
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
        self.last_len = line.chars().count();
    }

    /// Counts one step as done.
    pub fn step(&mut self) {
        self.done = (self.done + 1).min(self.total);
    }

    /// Draws the full bar and ends its line.
    pub fn finish(&mut self, what: &str) {
        self.done = self.total;
        self.show(what);
        if self.in_place {
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion() {
        assert_eq!(
            render(7, 11, "4096x14336x4096"),
            "[######....] 7/11 4096x14336x4096"
        );
        assert_eq!(render(0, 11, "a"), "[..........] 0/11 a");
        assert_eq!(render(11, 11, "done"), "[##########] 11/11 done");
        assert_eq!(render(0, 0, "nothing"), "[##########] 0/0 nothing");
    }
}
