//! The sweep's progress bar, `[######....] 7/11 4096x14336x4096 (cuBLASLt)`: an indicatif bar
//! on stderr, which indicatif hides when stderr is not a terminal (a log file gets only the
//! table). One step per shape; the message says what runs now.

use indicatif::{ProgressBar, ProgressStyle};

/// Cells in the bar, then the count and the current activity.
pub const TEMPLATE: &str = "[{bar:10}] {pos}/{len} {msg}";

/// The bar's look: `#` for done cells, `.` for the rest ([`TEMPLATE`]).
pub fn style() -> ProgressStyle {
    ProgressStyle::with_template(TEMPLATE)
        // The template is a constant, and a test parses it.
        .expect("the progress template parses")
        .progress_chars("#.")
}

/// A bar of `total` steps on stderr.
pub fn bar(total: usize) -> ProgressBar {
    ProgressBar::new(total as u64).with_style(style())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_parses_and_the_bar_counts() {
        assert!(ProgressStyle::with_template(TEMPLATE).is_ok());
        let bar = ProgressBar::hidden().with_style(style());
        bar.set_length(11);
        bar.set_message("4096x14336x4096 (cuBLASLt)");
        for _ in 0..7 {
            bar.inc(1);
        }
        assert_eq!((bar.position(), bar.length()), (7, Some(11)));
        assert_eq!(bar.message(), "4096x14336x4096 (cuBLASLt)");
        bar.finish_with_message("done");
        assert!(bar.is_finished());
    }
}
