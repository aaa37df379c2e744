//! `tirx sim --timeline FILE`: the emulator's [`Timeline`] of one run drawn as an SVG (one
//! lane per warp of CTA 0 and one per asynchronous engine, over emulated time) and written as
//! JSON beside it, so a user sees whether the TMA unit and the tensor core overlap.
//!
//! Time is the recorder's unit, *steps*: warp-instructions executed by the recorded cluster
//! since it started (`tirx_sim::exec` `timeline.rs`). It orders events as the seeded scheduler
//! interleaved them; it is not GPU time, and lengths are not latencies.
//!
//! The SVG is written as text rather than with plotters (which `bench/plot.rs` uses for its bar
//! chart): a lane chart is rectangles at computed coordinates, patterns for blocked spans and
//! tooltips, which plotters' chart abstractions do not model. Text uses the generic
//! `sans-serif` family, as the bench's plot does, so no font is needed. Big runs stay small:
//! spans of one style closer than half a pixel merge into one rectangle.

use std::fmt::Write;

use tirx_sim::exec::{OpSpan, Timeline, Unit, WaitKind, WarpState};

/// Width of the drawing, of the label column, of a lane and the gap between lanes, in pixels.
const WIDTH: f64 = 1200.0;
const LABELS: f64 = 150.0;
const RIGHT: f64 = 20.0;
const LANE: f64 = 18.0;
const GAP: f64 = 5.0;
/// Top of the first lane (room for the title and subtitle).
const TOP: f64 = 56.0;
/// At most this many rows an engine lane splits into for operations in flight together.
const MAX_ROWS: usize = 4;

const BUSY: &str = "#4c72b0";
const WAITS: [(WaitKind, &str); 7] = [
    (WaitKind::Mbarrier, "#e3a33b"),
    (WaitKind::BarSync, "#8c8c8c"),
    (WaitKind::WgmmaWaitGroup, "#55a868"),
    (WaitKind::BulkWaitGroup, "#c44e52"),
    (WaitKind::ClusterBarrier, "#8172b3"),
    (WaitKind::Setmaxnreg, "#937860"),
    (WaitKind::Converge, "#da8bc3"),
];
const UNITS: [(Unit, &str); 8] = [
    (Unit::TmaLoad, "#dd8452"),
    (Unit::TmaStore, "#c44e52"),
    (Unit::Wgmma, "#55a868"),
    (Unit::Tcgen05Mma, "#2e7d4f"),
    (Unit::TmemLoad, "#8172b3"),
    (Unit::TmemStore, "#64b5cd"),
    (Unit::Clc, "#da8bc3"),
    (Unit::StAsync, "#4c72b0"),
];
/// The engine lanes, in drawing order.
const ENGINES: [&str; 5] = [
    "TMA",
    "tensor core",
    "TMEM ld/st",
    "cluster launch control",
    "distributed shared memory",
];

fn unit_colour(u: Unit) -> &'static str {
    UNITS.iter().find(|w| w.0 == u).map_or("#000000", |w| w.1)
}

/// The label of warp `w`'s lane: its warpgroup and index.
pub fn warp_label(w: u32) -> String {
    format!("wg{} warp {w}", w / 4)
}

/// The timeline as JSON: `title`, `time_unit` and the recorder's events (`tirx_sim`'s
/// [`Timeline`]: warp spans with their state, operations with unit, issue and completion).
pub fn json(tl: &Timeline, title: &str) -> String {
    let doc = serde_json::json!({
        "title": title,
        "time_unit": "steps: warp-instructions executed by the recorded cluster since its start \
                      (the emulator's scheduling order, not GPU time)",
        "timeline": tl,
    });
    serde_json::to_string_pretty(&doc).expect("a timeline serialises")
}

/// Writes `tl` as an SVG ([`svg`]) to `file` and as JSON ([`json`]) to `file` with the
/// extension `.json`; returns a line naming both files and the counts. What `tirx sim
/// --timeline FILE` writes, for any run that recorded a timeline (`Policy::timeline`), e.g.
/// a kernel run on given inputs (`simulate::run`, `simulate::attention_values`).
pub fn write(file: &std::path::Path, tl: &Timeline, title: &str) -> Result<String, String> {
    let json_file = file.with_extension("json");
    let put = |p: &std::path::Path, text: String| {
        std::fs::write(p, text).map_err(|e| format!("writing {}: {e}", p.display()))
    };
    put(file, svg(tl, title))?;
    put(&json_file, json(tl, title))?;
    Ok(format!(
        "timeline of {title}: {} and {} ({} warp spans, {} async operations over {} steps)",
        file.display(),
        json_file.display(),
        tl.warps.len(),
        tl.ops.len(),
        tl.end
    ))
}

/// A rectangle to draw: `start..end` in steps, its fill, and a tooltip.
struct Rect {
    start: u64,
    end: u64,
    fill: String,
    tip: String,
}

/// Merges rectangles of one fill closer than `slack` steps (the input sorted by start).
fn merge(rects: Vec<Rect>, slack: f64) -> Vec<Rect> {
    let mut out: Vec<Rect> = Vec::new();
    for r in rects {
        if let Some(prev) = out.iter_mut().rev().find(|p| p.fill == r.fill)
            && (r.start as f64) - (prev.end as f64) < slack
        {
            if r.end > prev.end {
                prev.end = r.end;
                prev.tip = format!("{} (merged)", prev.tip.trim_end_matches(" (merged)"));
            }
            continue;
        }
        out.push(r);
    }
    out
}

/// The picture of `tl` with `title` (kernel, config, shape, seed) over its lanes: each warp of
/// CTA 0 that ran, then each engine CTA 0 used.
pub fn svg(tl: &Timeline, title: &str) -> String {
    let end = tl.end.max(1) as f64;
    let plot_w = WIDTH - LABELS - RIGHT;
    let x = |t: u64| LABELS + t as f64 / end * plot_w;
    let slack = end / plot_w * 0.5;
    let mut lanes: Vec<(String, Vec<Vec<Rect>>)> = Vec::new();
    for w in 0..tl.warps_per_cta {
        let rects: Vec<Rect> = tl
            .warps
            .iter()
            .filter(|s| s.cta == 0 && s.warp == w)
            .map(|s| {
                let (fill, what) = match s.state {
                    WarpState::Busy => (BUSY.to_owned(), "busy".to_owned()),
                    WarpState::Blocked(k) => (
                        format!("url(#wait-{k:?})"),
                        format!("blocked: {}", k.name()),
                    ),
                };
                Rect {
                    start: s.start,
                    end: s.end,
                    fill,
                    tip: format!("warp {w} {what}: {}..{}", s.start, s.end),
                }
            })
            .collect();
        if !rects.is_empty() {
            lanes.push((warp_label(w), vec![merge(rects, slack)]));
        }
    }
    for engine in ENGINES {
        let ops: Vec<&OpSpan> = tl
            .ops
            .iter()
            .filter(|o| o.cta == 0 && o.unit.engine() == engine)
            .collect();
        if !ops.is_empty() {
            lanes.push((engine.to_owned(), pack(&ops, tl.end, slack)));
        }
    }
    let lanes_h = lanes.len() as f64 * (LANE + GAP);
    let axis_y = TOP + lanes_h + 4.0;
    let legend_y = axis_y + 44.0;
    let height = legend_y + 2.0 * 20.0 + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    defs(&mut s);
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text x=\"{LABELS}\" y=\"20\" font-size=\"15\">{}</text>",
        esc(title)
    );
    let _ = writeln!(
        s,
        "<text x=\"{LABELS}\" y=\"38\" fill=\"#6e6e6e\">CTA 0 of cluster {:?}; time in emulator \
         steps (warp-instructions of the cluster, the seeded scheduler's order; not GPU \
         cycles){}</text>",
        tl.cluster,
        if tl.dropped > 0 {
            format!("; {} events beyond the cap not drawn", tl.dropped)
        } else {
            String::new()
        }
    );
    for (i, (label, rows)) in lanes.iter().enumerate() {
        let y = TOP + i as f64 * (LANE + GAP);
        let _ = writeln!(
            s,
            "<g class=\"lane\" data-lane=\"{}\"><text x=\"{:.1}\" y=\"{:.1}\" \
             text-anchor=\"end\">{}</text>",
            esc(label),
            LABELS - 8.0,
            y + LANE * 0.7,
            esc(label)
        );
        let _ = writeln!(
            s,
            "<rect x=\"{LABELS}\" y=\"{y:.1}\" width=\"{plot_w:.1}\" height=\"{LANE}\" \
             fill=\"#f4f4f4\"/>"
        );
        let row_h = LANE / rows.len() as f64;
        for (j, row) in rows.iter().enumerate() {
            for r in row {
                let (x0, x1) = (x(r.start), x(r.end));
                let _ = writeln!(
                    s,
                    "<rect x=\"{x0:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" \
                     fill=\"{}\"><title>{}</title></rect>",
                    y + j as f64 * row_h,
                    (x1 - x0).max(0.5),
                    row_h,
                    r.fill,
                    esc(&r.tip)
                );
            }
        }
        s.push_str("</g>\n");
    }
    axis(&mut s, tl.end, axis_y, &x);
    legend(&mut s, legend_y, tl);
    s.push_str("</svg>\n");
    s
}

/// An engine's operations as rows of rectangles: each goes to the first row free at its issue
/// (at most [`MAX_ROWS`]; more in flight together share the last row).
fn pack(ops: &[&OpSpan], end: u64, slack: f64) -> Vec<Vec<Rect>> {
    let mut ops: Vec<&&OpSpan> = ops.iter().collect();
    ops.sort_by_key(|o| o.issue);
    let mut rows: Vec<Vec<Rect>> = Vec::new();
    let mut free_at: Vec<u64> = Vec::new();
    for o in ops {
        let done = o.complete.unwrap_or(end);
        let row = free_at
            .iter()
            .position(|&f| f <= o.issue)
            .unwrap_or_else(|| {
                if free_at.len() < MAX_ROWS {
                    free_at.push(0);
                    rows.push(Vec::new());
                }
                free_at.len() - 1
            });
        free_at[row] = free_at[row].max(done);
        rows[row].push(Rect {
            start: o.issue,
            end: done.max(o.issue),
            fill: unit_colour(o.unit).to_owned(),
            tip: format!(
                "{} by warp {} (line {}): issued {}, {}",
                o.unit.name(),
                o.warp,
                o.line,
                o.issue,
                o.complete
                    .map_or("never completed".to_owned(), |c| format!("completed {c}"))
            ),
        });
    }
    rows.into_iter().map(|r| merge(r, slack)).collect()
}

/// One hatch pattern per wait kind: blocked spans are striped, busy ones solid.
fn defs(s: &mut String) {
    s.push_str("<defs>\n");
    for (k, c) in WAITS {
        let _ = writeln!(
            s,
            "<pattern id=\"wait-{k:?}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
             patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"{c}\" \
             fill-opacity=\"0.25\"/><rect width=\"2.5\" height=\"6\" fill=\"{c}\"/></pattern>"
        );
    }
    s.push_str("</defs>\n");
}

/// The time axis: about ten ticks at 1, 2 or 5 × 10ᵏ steps.
fn axis(s: &mut String, end: u64, y: f64, x: &dyn Fn(u64) -> f64) {
    let raw = (end.max(1) as f64 / 10.0).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&v| v >= raw)
        .unwrap_or(10.0 * mag) as u64;
    let _ = writeln!(
        s,
        "<line x1=\"{LABELS}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"black\"/>",
        x(end)
    );
    let mut t = 0;
    while t <= end {
        let _ = writeln!(
            s,
            "<line x1=\"{0:.1}\" y1=\"{y:.1}\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"black\"/>\
             <text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{t}</text>",
            x(t),
            y + 4.0,
            y + 16.0
        );
        t += step.max(1);
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#6e6e6e\">emulated time \
         (steps)</text>",
        LABELS + (WIDTH - LABELS - RIGHT) / 2.0,
        y + 30.0
    );
}

/// The legend: busy, each wait kind and each unit that occurs.
fn legend(s: &mut String, y: f64, tl: &Timeline) {
    let mut items: Vec<(String, String)> = vec![(BUSY.to_owned(), "warp busy".to_owned())];
    for (k, _) in WAITS {
        if tl.warps.iter().any(|w| w.state == WarpState::Blocked(k)) {
            items.push((
                format!("url(#wait-{k:?})"),
                format!("blocked: {}", k.name()),
            ));
        }
    }
    for (u, c) in UNITS {
        if tl.ops.iter().any(|o| o.unit == u) {
            items.push((c.to_owned(), u.name().to_owned()));
        }
    }
    let _ = writeln!(s, "<g class=\"legend\">");
    let (mut lx, mut ly) = (LABELS, y);
    for (fill, label) in items {
        let w = 22.0 + 6.5 * label.chars().count() as f64;
        if lx + w > WIDTH - RIGHT {
            lx = LABELS;
            ly += 20.0;
        }
        let _ = writeln!(
            s,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"14\" height=\"12\" fill=\"{fill}\"/>\
             <text x=\"{:.1}\" y=\"{ly:.1}\">{}</text>",
            ly - 10.0,
            lx + 18.0,
            esc(&label)
        );
        lx += w + 14.0;
    }
    s.push_str("</g>\n");
}

/// XML text escaping.
fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
