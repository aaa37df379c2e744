//! The bench's plot, an SVG drawn with plotters: per shape, our best config's TFLOP/s (blue)
//! beside cuBLASLt's (orange), the ratio above the pair, a red `X` for a side that has no
//! timing; a title, a subtitle and a legend.
//!
//! Text is written as SVG `<text>` elements in a generic `sans-serif` family and laid out by
//! plotters' estimate of its width (no font is loaded: see the workspace's `plotters` entry),
//! so the viewer draws the glyphs and nothing here needs system fonts.

use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A drawing error; the SVG backend writes into a `String`, so its only source is plotters.
pub type PlotError = DrawingAreaErrorKind<std::io::Error>;

/// One shape's bar pair.
#[derive(Clone, Debug, PartialEq)]
pub struct BarPair {
    /// Under the bars, e.g. "4096x4096x4096".
    pub label: String,
    /// Our TFLOP/s; `None` draws a failure mark.
    pub ours: Option<f64>,
    /// cuBLASLt's TFLOP/s; `None` draws a failure mark.
    pub cublas: Option<f64>,
    /// Above the bars, e.g. the ratio ("0.93x") or "failed".
    pub note: String,
}

/// Our bars: matplotlib's first colour (tab:blue), as the PNG plot had.
pub const OURS: RGBColor = RGBColor(31, 119, 180);
/// cuBLASLt's bars (tab:orange).
pub const CUBLAS: RGBColor = RGBColor(255, 127, 14);
/// Failure marks and notes (tab:red).
pub const FAIL: RGBColor = RGBColor(214, 39, 40);
/// Secondary text.
const MUTED: RGBColor = RGBColor(110, 110, 110);

/// Pixels per shape on the x axis: room for a `16384x16384x16384` label.
const GROUP: u32 = 130;
/// Pixels left of and right of the groups (the y axis labels, a margin).
const SIDES: u32 = 110;
/// Total height.
const HEIGHT: u32 = 560;
/// Pixels between a group's edge and its outer bar's edge.
const INSET: u32 = 12;
/// Pixels between a group's two bars, on each side of its centre.
const GAP: u32 = 2;

const FONT: &str = "sans-serif";

/// The bar chart as an SVG document, the second bar of each pair labelled cuBLASLt.
pub fn svg(title: &str, subtitle: &str, pairs: &[BarPair]) -> Result<String, PlotError> {
    svg_with(title, subtitle, ["tirx (best config)", "cuBLASLt"], pairs)
}

/// [`svg`] with the two series named by `legend` (ours, then the peer's: `BarPair::cublas`
/// holds whichever peer the plot compares with).
pub fn svg_with(
    title: &str,
    subtitle: &str,
    legend: [&str; 2],
    pairs: &[BarPair],
) -> Result<String, PlotError> {
    // Wide enough for the groups and for the subtitle (plotters' estimate: 0.45 em a char).
    let width = (SIDES + GROUP * pairs.len() as u32)
        .max(40 + (subtitle.chars().count() as u32 * 6))
        .max(640);
    let mut out = String::new();
    draw(&mut out, (width, HEIGHT), title, subtitle, legend, pairs)?;
    Ok(out)
}

fn draw(
    out: &mut String,
    size: (u32, u32),
    title: &str,
    subtitle: &str,
    legend: [&str; 2],
    pairs: &[BarPair],
) -> Result<(), PlotError> {
    let root = SVGBackend::with_string(out, size).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, (FONT, 20))?;
    root.draw_text(subtitle, &(FONT, 12).into_font().color(&MUTED), (20, 0))?;
    let top = pairs
        .iter()
        .flat_map(|p| [p.ours, p.cublas])
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    // Headroom above the tallest bar for its note and the legend; 1 when nothing ran, for a
    // usable axis.
    let ymax = if top > 0.0 { top * 1.25 } else { 1.0 };
    // One segment per shape: labels sit at its centre, our bar fills its left half and
    // cuBLASLt's its right half, each inset by a few pixels.
    let mut chart = ChartBuilder::on(&root)
        .margin_top(24)
        .margin_right(20)
        .x_label_area_size(36)
        .y_label_area_size(60)
        // A usize range includes its end: `0..n - 1` is n segments (at least one).
        .build_cartesian_2d(
            (0..pairs.len().saturating_sub(1)).into_segmented(),
            0.0..ymax,
        )?;
    // Enough decimals to tell plotters' ~10 ticks apart: none once they are 1 or more apart.
    let digits = (-(ymax / 10.0).log10().floor()).max(0.0) as usize;
    let label_of = |x: &SegmentValue<usize>| match x {
        SegmentValue::CenterOf(i) => pairs.get(*i).map_or(String::new(), |p| p.label.clone()),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(pairs.len().max(1))
        .x_label_formatter(&label_of)
        .y_label_formatter(&|v| format!("{v:.digits$}"))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .y_desc("TFLOP/s")
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    draw_bars(&mut chart, legend, pairs)?;
    draw_marks_and_notes(&mut chart, pairs)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(MUTED)
        .draw()?;
    root.present()
}

/// The chart: one x segment per shape, TFLOP/s up.
type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<SegmentedCoord<RangedCoordusize>, RangedCoordf64>>;

/// Per shape, our bar in the left half of its segment and cuBLASLt's in the right; each
/// series labelled for the legend.
fn draw_bars(chart: &mut Chart, legend: [&str; 2], pairs: &[BarPair]) -> Result<(), PlotError> {
    for (side, (name, color)) in [(legend[0], OURS), (legend[1], CUBLAS)]
        .into_iter()
        .enumerate()
    {
        let bars = pairs.iter().enumerate().filter_map(|(i, p)| {
            let v = if side == 0 { p.ours } else { p.cublas }?;
            let (x0, x1, left, right) = if side == 0 {
                (
                    SegmentValue::Exact(i),
                    SegmentValue::CenterOf(i),
                    INSET,
                    GAP,
                )
            } else {
                (
                    SegmentValue::CenterOf(i),
                    SegmentValue::Exact(i + 1),
                    GAP,
                    INSET,
                )
            };
            let mut bar = Rectangle::new([(x0, 0.0), (x1, v)], color.filled());
            bar.set_margin(0, 0, left, right);
            Some(bar)
        });
        chart
            .draw_series(bars)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    Ok(())
}

/// The red X marks for missing timings, and each shape's note above its bars.
fn draw_marks_and_notes(chart: &mut Chart, pairs: &[BarPair]) -> Result<(), PlotError> {
    // A red X over each side that has no timing, a quarter segment left or right of centre.
    let segment = chart.plotting_area().dim_in_pixel().0 as usize / pairs.len().max(1);
    let quarter = (segment / 4) as i32;
    let centred = Pos::new(HPos::Center, VPos::Bottom);
    let marks = pairs.iter().enumerate().flat_map(|(i, p)| {
        [(p.ours, -quarter), (p.cublas, quarter)]
            .into_iter()
            .filter(|(v, _)| v.is_none())
            .map(move |(_, dx)| {
                let style = (FONT, 14).into_font().color(&FAIL).pos(centred);
                EmptyElement::at((SegmentValue::CenterOf(i), 0.0)) + Text::new("X", (dx, -2), style)
            })
    });
    chart.draw_series(marks)?;
    let notes = pairs.iter().enumerate().map(|(i, p)| {
        let y = p
            .ours
            .into_iter()
            .chain(p.cublas)
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let color = if p.ours.is_some() { &BLACK } else { &FAIL };
        // Failed shapes' notes go above the X marks.
        let dy = if y > 0.0 { -4 } else { -22 };
        EmptyElement::at((SegmentValue::CenterOf(i), y))
            + Text::new(
                p.note.clone(),
                (0, dy),
                (FONT, 13).into_font().color(color).pos(centred),
            )
    });
    chart.draw_series(notes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(label: &str, ours: Option<f64>, cublas: Option<f64>, note: &str) -> BarPair {
        BarPair {
            label: label.into(),
            ours,
            cublas,
            note: note.into(),
        }
    }

    fn fill(c: RGBColor) -> String {
        format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
    }

    #[test]
    fn plot_draws_both_bars_labels_and_failure_marks() {
        let pairs = [
            pair("1024x1024x1024", Some(300.0), Some(600.0), "0.50x"),
            pair("2048x2048x2048", Some(600.0), Some(600.0), "1.00x"),
            pair("4095x4097x4096", None, None, "failed"),
        ];
        let svg = svg("tirx vs cuBLASLt", "TFLOP/s & more <detail>", &pairs).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        // Two bars of each colour, and each colour's legend swatch.
        assert_eq!(svg.matches(&fill(OURS)).count(), 3, "{svg}");
        assert_eq!(svg.matches(&fill(CUBLAS)).count(), 3, "{svg}");
        for text in [
            "1024x1024x1024",
            "4095x4097x4096",
            "0.50x",
            "failed",
            "TFLOP/s",
            "tirx (best config)",
            "cuBLASLt",
        ] {
            assert!(svg.contains(text), "{text} missing from {svg}");
        }
        // Text is escaped, not pasted into the markup.
        assert!(svg.contains("&amp; more &lt;detail&gt;"), "{svg}");
        assert!(!svg.contains("<detail>"), "{svg}");
        assert_eq!(svg.matches("\nX\n</text>").count(), 2, "{svg}");
    }

    #[test]
    fn an_empty_or_failed_run_still_plots() {
        for pairs in [vec![], vec![pair("64x64x64", None, None, "failed")]] {
            let svg = svg("t", "s", &pairs).unwrap();
            assert!(svg.contains("</svg>"), "{svg}");
        }
    }
}
