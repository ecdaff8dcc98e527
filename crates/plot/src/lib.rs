//! # envdist-plot
//!
//! The figures' kit, shared by the study's report and the commands: multi-series line charts
//! (optionally as steps, singly or as a grid of panels) and heatmaps with row/column labels and
//! a colour bar.
//!
//! Built on `plotters` without its `ttf` feature, so no system font library is needed: the
//! DejaVu Sans font is embedded in the binary and registered once through plotters'
//! `ab_glyph` support. Inputs are plain `Vec<f32>` and strings; every function renders into
//! memory, encodes a PNG and writes it atomically (`envdist_core::io::write_atomic`: temp file
//! then rename), so a reader never sees half a figure.

//!
//! ```no_run
//! use envdist_plot::{Legend, LineChart, Series, line_chart};
//!
//! let chart = LineChart {
//!     title: "success".into(),
//!     x_label: "env steps".into(),
//!     y_label: "success rate".into(),
//!     series: vec![Series::line("aes", vec![0.0, 1.0], vec![0.1, 0.4])],
//!     y_range: None,
//!     legend: Legend::UpperLeft,
//! };
//! line_chart(std::path::Path::new("success.png"), &chart, (640, 400))?;
//! # Ok::<(), envdist_plot::PlotError>(())
//! ```
#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Why a figure was not written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The figure could not be drawn or encoded (`figure` names it).
    #[error("figure {figure}: {what}")]
    Draw {
        /// The figure's file.
        figure: PathBuf,
        /// What went wrong.
        what: String,
    },
    /// The embedded font could not be registered.
    #[error("figure: {0}")]
    Font(String),
    /// The figure's file could not be written.
    #[error(transparent)]
    File(#[from] envdist_core::FileError),
}

/// A figure's result.
pub type Result<T> = std::result::Result<T, PlotError>;

fn draw_error(figure: &Path, what: impl std::fmt::Display) -> PlotError {
    PlotError::Draw {
        figure: figure.to_path_buf(),
        what: what.to_string(),
    }
}

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

/// Register the embedded font once; every chart calls this before drawing text.
fn ensure_font() -> Result<()> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the embedded DejaVuSans.ttf is not a valid font".to_string())
        })
        .clone()
        .map_err(PlotError::Font)
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// X values (same length as `y`).
    pub x: Vec<f32>,
    /// Y values; non-finite points are skipped.
    pub y: Vec<f32>,
    /// Draw as a staircase (value holds until the next x) instead of straight segments.
    pub step: bool,
}

impl Series {
    /// A straight-segment series.
    pub fn line(label: impl Into<String>, x: Vec<f32>, y: Vec<f32>) -> Self {
        Self {
            label: label.into(),
            x,
            y,
            step: false,
        }
    }

    /// A staircase series.
    pub fn steps(label: impl Into<String>, x: Vec<f32>, y: Vec<f32>) -> Self {
        Self {
            step: true,
            ..Self::line(label, x, y)
        }
    }

    fn points(&self) -> Vec<(f32, f32)> {
        let finite = self
            .x
            .iter()
            .zip(&self.y)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| (*x, *y));
        if !self.step {
            return finite.collect();
        }
        let mut out: Vec<(f32, f32)> = Vec::new();
        for (x, y) in finite {
            if let Some(&(_, prev_y)) = out.last() {
                out.push((x, prev_y));
            }
            out.push((x, y));
        }
        out
    }
}

/// Where a chart's legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legend {
    /// Top left corner.
    UpperLeft,
    /// Top right corner (default).
    #[default]
    UpperRight,
    /// Bottom left corner.
    LowerLeft,
    /// Bottom right corner.
    LowerRight,
    /// No legend.
    Hidden,
}

/// A multi-series line chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines, coloured in order.
    pub series: Vec<Series>,
    /// Fixed y range; `None` fits the data with 5% padding.
    pub y_range: Option<(f32, f32)>,
    /// Legend placement.
    pub legend: Legend,
}

/// Short tick labels: `12k`, `1.5M`, `0.25`, `3`.
pub fn compact(v: f32) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        trim(format!("{v:.2}"))
    }
}

fn padded(lo: f32, hi: f32) -> (f32, f32) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 {
        return (lo - 0.5, hi + 0.5);
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad, hi + pad)
}

fn bounds(values: impl Iterator<Item = f32>) -> (f32, f32) {
    values.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

fn colour(k: usize) -> RGBColor {
    // Tableau-10: distinguishable and print-safe.
    const C: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = C[k % C.len()];
    RGBColor(r, g, b)
}

fn draw_line_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &LineChart,
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let points: Vec<Vec<(f32, f32)>> = chart.series.iter().map(Series::points).collect();
    let (x0, x1) = padded_x(&points);
    let (y0, y1) = chart.y_range.unwrap_or_else(|| {
        let (lo, hi) = bounds(points.iter().flatten().map(|p| p.1));
        padded(lo, hi)
    });
    let err =
        |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing chart {:?}: {e}", chart.title);
    let mut ctx = ChartBuilder::on(area)
        .caption(&chart.title, (FAMILY, 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    ctx.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style((FAMILY, 12))
        .axis_desc_style((FAMILY, 14))
        .light_line_style(WHITE.mix(0.0))
        .x_label_formatter(&|v| compact(*v))
        .y_label_formatter(&|v| compact(*v))
        .draw()
        .map_err(err)?;
    for (k, (s, pts)) in chart.series.iter().zip(points).enumerate() {
        let c = colour(k);
        let drawn = ctx
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))
            .map_err(err)?;
        if chart.legend != Legend::Hidden {
            drawn.label(s.label.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
            });
        }
    }
    let position = match chart.legend {
        Legend::Hidden => return Ok(()),
        Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
        Legend::UpperRight => SeriesLabelPosition::UpperRight,
        Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
        Legend::LowerRight => SeriesLabelPosition::LowerRight,
    };
    ctx.configure_series_labels()
        .position(position)
        .label_font((FAMILY, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .draw()
        .map_err(err)?;
    Ok(())
}

fn padded_x(points: &[Vec<(f32, f32)>]) -> (f32, f32) {
    let (lo, hi) = bounds(points.iter().flatten().map(|p| p.0));
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

/// Render into an RGB buffer with `draw`, encode as PNG and write `path` atomically.
fn render_png(
    path: &Path,
    (w, h): (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> std::result::Result<(), String>,
) -> Result<()> {
    ensure_font()?;
    if !(w >= 100 && h >= 100) {
        return Err(draw_error(
            path,
            format!("size expected at least 100x100, found {w}x{h}"),
        ));
    }
    let mut buf = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(path, e))?;
        draw(&root).map_err(|e| draw_error(path, e))?;
        root.present().map_err(|e| draw_error(path, e))?;
    }
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        &buf,
        w,
        h,
        image::ExtendedColorType::Rgb8,
    )
    .map_err(|e| draw_error(path, format!("encoding as PNG: {e}")))?;
    envdist_core::io::write_atomic(path, &png)?;
    Ok(())
}

/// Write one line chart of `size` pixels to `path` (PNG).
pub fn line_chart(path: &Path, chart: &LineChart, size: (u32, u32)) -> Result<()> {
    render_png(path, size, |root| draw_line_chart(root, chart))
}

/// Write several line charts as a grid of panels, row by row, `cols` per row, each panel
/// `panel` pixels (PNG).
pub fn line_chart_grid(
    path: &Path,
    charts: &[LineChart],
    cols: usize,
    panel: (u32, u32),
) -> Result<()> {
    if charts.is_empty() || cols == 0 {
        return Err(draw_error(
            path,
            "expected at least one chart and one column",
        ));
    }
    let rows = charts.len().div_ceil(cols);
    let size = (panel.0 * cols as u32, panel.1 * rows as u32);
    render_png(path, size, |root| {
        let areas = root.split_evenly((rows, cols));
        for (area, chart) in areas.iter().zip(charts) {
            draw_line_chart(area, chart)?;
        }
        Ok(())
    })
}

/// A matrix drawn as coloured cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Heatmap {
    /// Title above the matrix.
    pub title: String,
    /// Row-major values, `rows.len() * cols.len()` of them; non-finite cells are grey.
    pub values: Vec<f32>,
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Column labels, left to right.
    pub cols: Vec<String>,
    /// What the colour encodes (shown by the colour bar).
    pub value_label: String,
    /// Colour scale limits; `None` uses the finite data's min and max.
    pub range: Option<(f32, f32)>,
    /// Write each cell's value in it (when cells are large enough to hold it).
    pub annotate: bool,
}

/// The viridis colour map (perceptually uniform, readable in grey), `t` in [0, 1], by linear
/// interpolation between nine of its anchor colours. plotters' own colormaps sit behind a
/// feature the workspace does not enable.
fn viridis(t: f32) -> RGBColor {
    const A: [(f32, f32, f32); 9] = [
        (68.0, 1.0, 84.0),
        (71.0, 44.0, 122.0),
        (59.0, 81.0, 139.0),
        (44.0, 113.0, 142.0),
        (33.0, 144.0, 141.0),
        (39.0, 173.0, 129.0),
        (92.0, 200.0, 99.0),
        (170.0, 220.0, 50.0),
        (253.0, 231.0, 37.0),
    ];
    let x = t.clamp(0.0, 1.0) * (A.len() - 1) as f32;
    let i = (x.floor() as usize).min(A.len() - 2);
    let f = x - i as f32;
    let mix = |a: f32, b: f32| (a + (b - a) * f).round() as u8;
    let (a, b) = (A[i], A[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn text_width(s: &str, size: f64) -> i32 {
    // DejaVu Sans averages about 0.6 em per character: good enough to size label margins.
    (s.chars().count() as f64 * size * 0.6).ceil() as i32
}

fn draw_heatmap<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    map: &Heatmap,
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (nr, nc) = (map.rows.len(), map.cols.len());
    if !(nr > 0 && nc > 0 && map.values.len() == nr * nc) {
        return Err(format!(
            "heatmap {:?}: expected rows x cols = {} values, found {} ({} rows, {} cols)",
            map.title,
            nr * nc,
            map.values.len(),
            nr,
            nc
        ));
    }
    let err =
        |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing heatmap {:?}: {e}", map.title);
    let (lo, hi) = map.range.unwrap_or_else(|| {
        let (lo, hi) = bounds(map.values.iter().copied().filter(|v| v.is_finite()));
        if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
    });
    let hi = if hi - lo < 1e-12 { lo + 1.0 } else { hi };
    let norm = |v: f32| ((v - lo) / (hi - lo)).clamp(0.0, 1.0);

    let (w, h) = root.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let label_size = 12.0;
    let left = 10
        + map
            .rows
            .iter()
            .map(|r| text_width(r, label_size))
            .max()
            .unwrap_or(0)
            .min(w / 3);
    let bottom = 10
        + map
            .cols
            .iter()
            .map(|c| text_width(c, label_size))
            .max()
            .unwrap_or(0)
            .min(h / 3);
    let (top, bar_w) = (40, 90);
    let grid_w = (w - left - bar_w - 10).max(nc as i32);
    let grid_h = (h - top - bottom).max(nr as i32);
    let (cw, ch) = (grid_w as f64 / nc as f64, grid_h as f64 / nr as f64);

    let title = TextStyle::from((FAMILY, 20).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(map.title.clone(), (w / 2, 8), title))
        .map_err(err)?;

    let small = TextStyle::from((FAMILY, label_size).into_font());
    for r in 0..nr {
        for c in 0..nc {
            let v = map.values[r * nc + c];
            let x0 = left + (c as f64 * cw) as i32;
            let y0 = top + (r as f64 * ch) as i32;
            let x1 = left + ((c + 1) as f64 * cw) as i32;
            let y1 = top + ((r + 1) as f64 * ch) as i32;
            let fill = if v.is_finite() {
                viridis(norm(v))
            } else {
                RGBColor(200, 200, 200)
            };
            root.draw(&Rectangle::new([(x0, y0), (x1, y1)], fill.filled()))
                .map_err(err)?;
            let text = format!("{v:.2}");
            if map.annotate && text_width(&text, 10.0) + 4 < (x1 - x0) && (y1 - y0) > 14 {
                let ink = if v.is_finite() && norm(v) > 0.6 {
                    BLACK
                } else {
                    WHITE
                };
                let style = TextStyle::from((FAMILY, 10).into_font())
                    .color(&ink)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                root.draw(&Text::new(text, ((x0 + x1) / 2, (y0 + y1) / 2), style))
                    .map_err(err)?;
            }
        }
    }
    // Labels only where they do not overlap: every k-th when cells are small.
    let row_every = ((label_size + 2.0) / ch).ceil().max(1.0) as usize;
    for (r, label) in map.rows.iter().enumerate().step_by(row_every) {
        let y = top + ((r as f64 + 0.5) * ch) as i32;
        let style = small.pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(label.clone(), (left - 4, y), style))
            .map_err(err)?;
    }
    let col_every = ((label_size + 2.0) / cw).ceil().max(1.0) as usize;
    for (c, label) in map.cols.iter().enumerate().step_by(col_every) {
        let x = left + ((c as f64 + 0.5) * cw) as i32;
        let style = small
            .transform(FontTransform::Rotate90)
            .pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(label.clone(), (x, top + grid_h + 4), style))
            .map_err(err)?;
    }
    // Colour bar: a vertical gradient from `hi` (top) to `lo` (bottom) with five ticks.
    let bx = left + grid_w + 20;
    let steps = grid_h.max(1);
    for k in 0..steps {
        let t = 1.0 - k as f32 / (steps - 1).max(1) as f32;
        root.draw(&Rectangle::new(
            [(bx, top + k), (bx + 16, top + k + 1)],
            viridis(t).filled(),
        ))
        .map_err(err)?;
    }
    root.draw(&Rectangle::new(
        [(bx, top), (bx + 16, top + grid_h)],
        BLACK.mix(0.6),
    ))
    .map_err(err)?;
    for k in 0..5 {
        let t = k as f32 / 4.0;
        let y = top + ((1.0 - t) * (grid_h - 1) as f32) as i32;
        let style =
            TextStyle::from((FAMILY, 10).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(
            format!("{:.3}", lo + t * (hi - lo)),
            (bx + 20, y),
            style,
        ))
        .map_err(err)?;
    }
    let vstyle =
        TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    root.draw(&Text::new(
        map.value_label.clone(),
        (bx + 8, top - 4),
        vstyle,
    ))
    .map_err(err)?;
    Ok(())
}

/// Write a heatmap of `size` pixels to `path` (PNG). Rows run top to bottom, columns left
/// to right; the colour bar on the right maps colour back to value.
pub fn heatmap(path: &Path, map: &Heatmap, size: (u32, u32)) -> Result<()> {
    render_png(path, size, |root| draw_heatmap(root, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in a directory of its own per test (tests run in parallel and each checks that
    /// no temporary file is left beside its output).
    fn tmp(name: &str) -> std::path::PathBuf {
        let stem = name.split('.').next().unwrap_or(name);
        let d = std::env::temp_dir().join(format!("envdist-plot-{}-{stem}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    fn assert_png(path: &Path, size: (u32, u32)) {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            bytes.len() > 1000,
            "{} is only {} bytes",
            path.display(),
            bytes.len()
        );
        let img = image::load_from_memory(&bytes).unwrap();
        assert_eq!((img.width(), img.height()), size);
        // Something was drawn: not every pixel is the white background.
        let rgb = img.to_rgb8();
        let non_white = rgb.pixels().filter(|p| p.0 != [255, 255, 255]).count();
        assert!(
            non_white > 1000,
            "{}: {non_white} drawn pixels",
            path.display()
        );
        // No temporary file is left beside it.
        let dir = path.parent().unwrap();
        let leftovers = std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
    }

    #[test]
    fn compact_labels() {
        let got: Vec<String> = [0.0, 3.0, 0.25, 150.0, 20000.0, 12500.0, 1.5e6, -2.5]
            .into_iter()
            .map(compact)
            .collect();
        assert_eq!(
            got,
            ["0", "3", "0.25", "150", "20k", "12.5k", "1.5M", "-2.5"]
        );
    }

    #[test]
    fn line_chart_writes_a_png() {
        let x: Vec<f32> = (0..50).map(|i| i as f32).collect();
        let chart = LineChart {
            title: "demo".into(),
            x_label: "step".into(),
            y_label: "value".into(),
            series: vec![
                Series::line(
                    "sin",
                    x.clone(),
                    x.iter().map(|v| (v / 5.0).sin()).collect(),
                ),
                Series::steps(
                    "level",
                    x.clone(),
                    x.iter().map(|v| (v / 12.0).floor()).collect(),
                ),
            ],
            ..Default::default()
        };
        let p = tmp("line.png");
        line_chart(&p, &chart, (640, 400)).unwrap();
        assert_png(&p, (640, 400));
        let g = tmp("grid.png");
        line_chart_grid(&g, &[chart.clone(), chart.clone(), chart], 2, (400, 300)).unwrap();
        assert_png(&g, (800, 600));
    }

    #[test]
    fn heatmap_writes_a_png_and_rejects_bad_shapes() {
        let map = Heatmap {
            title: "cosine".into(),
            values: (0..12).map(|i| (i as f32 / 6.0) - 1.0).collect(),
            rows: vec!["a".into(), "b".into(), "c".into()],
            cols: vec!["w".into(), "x".into(), "y".into(), "z".into()],
            value_label: "cos".into(),
            range: Some((-1.0, 1.0)),
            annotate: true,
        };
        let p = tmp("heat.png");
        heatmap(&p, &map, (500, 400)).unwrap();
        assert_png(&p, (500, 400));
        let bad = Heatmap {
            values: vec![1.0],
            ..map
        };
        let e = heatmap(&tmp("bad.png"), &bad, (500, 400)).unwrap_err();
        assert!(format!("{e:#}").contains("12 values"), "{e:#}");
        assert!(!tmp("bad.png").exists());
    }
}
