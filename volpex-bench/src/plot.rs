//! Figures: SVG drawings (plotters, SVG backend only) of what `volpex-bench` and
//! `volpexrun --report` write. `volpex-bench plot KIND` re-draws one from a saved file,
//! and the commands that write the rows draw it directly with `--svg`.
//!
//! Owns parsing those files for drawing (by their headers and field names, so a column
//! added elsewhere, or a third side of `compare npb`, is taken as it comes) and the
//! drawing itself. Must never run a job, measure or judge anything: every function here
//! is pure, rows in, SVG text out, except [`write`], which only writes the text to a file.
//! A file that does not parse is an error naming the line and column, never a panic.
//!
//! Kinds:
//! - `pingpong` (`compare pingpong --csv`): two panels side by side, one-way latency and
//!   bandwidth against message size, one line per side (`{side}_lat_us`, `{side}_mbps`
//!   columns), both axes logarithmic.
//! - `npb` (`compare npb --csv`): one panel per rank count, every benchmark's time
//!   divided by the first side's (Open MPI) as grouped bars, one bar per other side,
//!   a dashed line at 1.0; `*` over a bar whose runs did not all verify.
//! - `npb-runs` (`volpex-bench npb --csv`): every configuration's time failure-free and
//!   with a replica killed, the with-fault / failure-free ratio over the pair.
//! - `timeline` (`volpexrun --report`): one row per replica (rank.replica), one bar per
//!   incarnation from its start to its end (lighter while a new one catches up), markers
//!   for kills, other deaths, failovers, lagging and catching up.

use std::collections::BTreeSet;
use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What can be drawn.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Latency and bandwidth against message size, from `compare pingpong --csv`.
    Pingpong,
    /// Times normalized to the first side, from `compare npb --csv`.
    Npb,
    /// Failure-free and with-fault times, from `volpex-bench npb --csv`.
    #[value(name = "npb-runs")]
    NpbRuns,
    /// Replicas alive over time, from a `volpexrun --report` JSON file.
    Timeline,
}

/// Options of `volpex-bench plot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to draw: pingpong, npb (from `compare npb`), npb-runs (from `volpex-bench
    /// npb`), timeline (from `volpexrun --report`).
    #[arg(value_enum)]
    pub kind: Kind,
    /// The CSV to draw (pingpong, npb, npb-runs).
    #[arg(long, conflicts_with = "report")]
    pub csv: Option<std::path::PathBuf>,
    /// The `volpexrun --report` JSON to draw (timeline).
    #[arg(long)]
    pub report: Option<std::path::PathBuf>,
    /// Where to write the SVG.
    #[arg(long)]
    pub svg: std::path::PathBuf,
    /// Title over the figure (default: one said from the data).
    #[arg(long)]
    pub title: Option<String>,
}

/// `volpex-bench plot`.
pub fn run(a: &Args) -> Result<(), String> {
    let (input, flag) = match a.kind {
        Kind::Timeline => (&a.report, "--report FILE (a volpexrun --report JSON)"),
        Kind::Pingpong | Kind::Npb | Kind::NpbRuns => (&a.csv, "--csv FILE"),
    };
    let Some(input) = input else {
        return Err(format!("plot {} needs {flag}", kind_name(a.kind)));
    };
    let text = std::fs::read_to_string(input)
        .map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let title = a.title.as_deref();
    let svg = match a.kind {
        Kind::Pingpong => pingpong_svg(&text, title),
        Kind::Npb => npb_svg(&text, title),
        Kind::NpbRuns => npb_runs_svg(&text, title),
        Kind::Timeline => timeline_svg(&text, title),
    }
    .map_err(|e| format!("{}: {e}", input.display()))?;
    write(&a.svg, &svg)
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Pingpong => "pingpong",
        Kind::Npb => "npb",
        Kind::NpbRuns => "npb-runs",
        Kind::Timeline => "timeline",
    }
}

/// Writes an SVG text to `path`.
pub fn write(path: &Path, svg: &str) -> Result<(), String> {
    std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------
// Parsing.

/// A CSV file: its header and its rows (blank lines skipped), every row as wide as the
/// header. Fields hold no commas (none of ours do).
#[derive(Debug)]
pub(crate) struct Table {
    header: Vec<String>,
    /// (1-based line number, fields).
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    pub(crate) fn parse(csv: &str) -> Result<Table, String> {
        let mut lines = csv
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, head) = lines.next().ok_or("empty CSV: no header line")?;
        let header: Vec<String> = head.split(',').map(|f| f.trim().to_string()).collect();
        let mut rows = Vec::new();
        for (i, l) in lines {
            let fields: Vec<String> = l.split(',').map(|f| f.trim().to_string()).collect();
            if fields.len() != header.len() {
                return Err(format!(
                    "line {}: {} fields where the header has {}",
                    i + 1,
                    fields.len(),
                    header.len()
                ));
            }
            rows.push((i + 1, fields));
        }
        Ok(Table { header, rows })
    }

    /// The index of column `name`.
    fn col(&self, name: &str) -> Result<usize, String> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "no column {name:?} in the header ({})",
                self.header.join(",")
            )
        })
    }

    /// The number in row `r`, column `c`; `None` when the field is empty.
    fn num(&self, r: usize, c: usize) -> Result<Option<f64>, String> {
        let (line, fields) = &self.rows[r];
        let f = fields[c].as_str();
        if f.is_empty() {
            return Ok(None);
        }
        match f.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(format!(
                "line {line}, column {}: {f:?} is not a number",
                self.header[c]
            )),
        }
    }

    /// Like [`Table::num`], but the field must be there.
    fn need(&self, r: usize, c: usize) -> Result<f64, String> {
        self.num(r, c)?
            .ok_or_else(|| format!("line {}, column {}: empty", self.rows[r].0, self.header[c]))
    }

    fn text(&self, r: usize, c: usize) -> &str {
        &self.rows[r].1[c]
    }

    /// The sides named by columns `{side}{suffix}`, in header order.
    fn sides(&self, suffix: &str) -> Vec<String> {
        self.header
            .iter()
            .filter_map(|h| h.strip_suffix(suffix))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// A side's name for people.
fn display(side: &str) -> String {
    match side {
        "openmpi" => "Open MPI".into(),
        "volpex" => "Volpex".into(),
        "volpex-tcp" => "Volpex (TCP)".into(),
        "openmpi-sm" => "Open MPI (shared memory)".into(),
        "openmpi-tcp" => "Open MPI (TCP)".into(),
        other => other.to_string(),
    }
}

/// `compare pingpong --csv`: per side, (size, latency µs, bandwidth MB/s).
#[derive(Debug, PartialEq)]
pub(crate) struct Pingpong {
    pub sides: Vec<String>,
    /// Per side, a point per row (an empty or non-positive value is `None`).
    pub points: Vec<Vec<Point>>,
}

/// One message size of one side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    pub bytes: f64,
    /// One-way latency, µs.
    pub lat: Option<f64>,
    /// Bandwidth, MB/s.
    pub bw: Option<f64>,
}

pub(crate) fn parse_pingpong(csv: &str) -> Result<Pingpong, String> {
    let t = Table::parse(csv)?;
    let size = t.col("size_bytes")?;
    let sides = t.sides("_lat_us");
    if sides.is_empty() {
        return Err(format!(
            "no {{side}}_lat_us column in the header ({})",
            t.header.join(",")
        ));
    }
    let mut points = vec![Vec::new(); sides.len()];
    for r in 0..t.rows.len() {
        let bytes = t.need(r, size)?;
        if bytes <= 0.0 {
            return Err(format!(
                "line {}: size_bytes must be positive (the axis is logarithmic)",
                t.rows[r].0
            ));
        }
        for (k, s) in sides.iter().enumerate() {
            let lat = t.num(r, t.col(&format!("{s}_lat_us"))?)?;
            let bw = match t.col(&format!("{s}_mbps")) {
                Ok(c) => t.num(r, c)?,
                Err(_) => None,
            };
            let positive = |v: Option<f64>| v.filter(|v| *v > 0.0);
            points[k].push(Point {
                bytes,
                lat: positive(lat),
                bw: positive(bw),
            });
        }
    }
    if t.rows.is_empty() {
        return Err("no rows".into());
    }
    Ok(Pingpong { sides, points })
}

/// One row of `compare npb --csv`.
#[derive(Debug, PartialEq)]
pub(crate) struct NpbRow {
    pub bench: String,
    pub class: String,
    pub np: u32,
    /// Per side: median seconds (`None`: failed).
    pub seconds: Vec<Option<f64>>,
    /// Per side: every run verified.
    pub verified: Vec<bool>,
    /// Per side after the first: its `{side}_ratio` column, when the CSV has one (it
    /// comes from the rates, more precise than the seconds' two decimals).
    pub ratios: Vec<Option<f64>>,
}

/// `compare npb --csv`: the sides (in column order; ratios are to the first) and rows.
#[derive(Debug, PartialEq)]
pub(crate) struct NpbCompare {
    pub sides: Vec<String>,
    pub rows: Vec<NpbRow>,
}

pub(crate) fn parse_npb(csv: &str) -> Result<NpbCompare, String> {
    let t = Table::parse(csv)?;
    let (bench, class, np) = (t.col("bench")?, t.col("class")?, t.col("np")?);
    // A side has both `{side}_s` and `{side}_verified`.
    let sides: Vec<String> = t
        .sides("_s")
        .into_iter()
        .filter(|s| t.col(&format!("{s}_verified")).is_ok())
        .collect();
    if sides.len() < 2 {
        return Err(format!(
            "fewer than two sides ({{side}}_s with {{side}}_verified) in the header ({})",
            t.header.join(",")
        ));
    }
    let mut rows = Vec::new();
    for r in 0..t.rows.len() {
        let n = t.need(r, np)?;
        if n < 1.0 || n.fract() != 0.0 {
            return Err(format!(
                "line {}, column np: {n} is not a rank count",
                t.rows[r].0
            ));
        }
        let mut seconds = Vec::new();
        let mut verified = Vec::new();
        let mut ratios = Vec::new();
        for (k, s) in sides.iter().enumerate() {
            seconds.push(t.num(r, t.col(&format!("{s}_s"))?)?);
            verified.push(t.text(r, t.col(&format!("{s}_verified"))?) == "yes");
            if k > 0 {
                ratios.push(match t.col(&format!("{s}_ratio")) {
                    Ok(c) => t.num(r, c)?,
                    Err(_) => None,
                });
            }
        }
        rows.push(NpbRow {
            bench: t.text(r, bench).to_string(),
            class: t.text(r, class).to_string(),
            np: n as u32,
            seconds,
            verified,
            ratios,
        });
    }
    if rows.is_empty() {
        return Err("no rows".into());
    }
    Ok(NpbCompare { sides, rows })
}

/// One row of `volpex-bench npb --csv`.
#[derive(Debug, PartialEq)]
pub(crate) struct NpbRun {
    /// `bench class np x r`.
    pub config: String,
    /// The fault spec, `none` for a failure-free run.
    pub fault: String,
    pub seconds: Option<f64>,
    pub verified: bool,
}

pub(crate) fn parse_npb_runs(csv: &str) -> Result<Vec<NpbRun>, String> {
    let t = Table::parse(csv)?;
    let cols = [
        "bench", "class", "np", "replicas", "fault", "seconds", "verified",
    ];
    let c: Vec<usize> = cols.iter().map(|n| t.col(n)).collect::<Result<_, _>>()?;
    let mut runs = Vec::new();
    for r in 0..t.rows.len() {
        runs.push(NpbRun {
            config: format!(
                "{} {} {}x{}",
                t.text(r, c[0]).to_uppercase(),
                t.text(r, c[1]),
                t.text(r, c[2]),
                t.text(r, c[3])
            ),
            fault: t.text(r, c[4]).to_string(),
            seconds: t.num(r, c[5])?,
            verified: t.text(r, c[6]) == "yes",
        });
    }
    if runs.is_empty() {
        return Err("no rows".into());
    }
    Ok(runs)
}

/// One incarnation in a report.
#[derive(Debug, PartialEq)]
pub(crate) struct Incarnation {
    pub rank: u32,
    pub replica: u32,
    pub incarnation: u32,
    pub start: f64,
    /// When it caught up (seconds since the job started), for a new incarnation.
    pub caught_up: Option<f64>,
    /// When it ended; `None`: alive at the end (or a report without `ended_s`).
    pub end: Option<f64>,
}

/// One event in a report.
#[derive(Debug, PartialEq)]
pub(crate) struct Event {
    pub t: f64,
    pub kind: String,
    pub rank: u32,
    pub replica: u32,
}

/// What a timeline needs of a `volpexrun --report`.
#[derive(Debug, PartialEq)]
pub(crate) struct Timeline {
    pub ranks: u32,
    pub replicas: u32,
    pub success: bool,
    pub elapsed: f64,
    pub incarnations: Vec<Incarnation>,
    pub events: Vec<Event>,
}

pub(crate) fn parse_timeline(json: &str) -> Result<Timeline, String> {
    use serde_json::Value;
    let v: Value =
        serde_json::from_str(json).map_err(|e| format!("not a volpexrun --report JSON: {e}"))?;
    let uint = |v: &Value, key: &str, what: &str| -> Result<u32, String> {
        v[key]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{what}: no whole number {key:?}"))
    };
    let float = |v: &Value, key: &str, what: &str| -> Result<Option<f64>, String> {
        match &v[key] {
            Value::Null => Ok(None),
            x => x
                .as_f64()
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map(Some)
                .ok_or_else(|| format!("{what}: {key:?} is not a time in seconds")),
        }
    };
    let ranks = uint(&v, "ranks", "the report")?;
    let replicas = uint(&v, "replicas", "the report")?;
    let elapsed = float(&v, "elapsed_s", "the report")?.ok_or("the report: no \"elapsed_s\"")?;
    let procs = v["processes"]
        .as_array()
        .ok_or("not a volpexrun --report JSON: no \"processes\" list")?;
    let mut incarnations = Vec::new();
    for (i, p) in procs.iter().enumerate() {
        let what = format!("processes[{i}]");
        let start = float(p, "started_s", &what)?.ok_or(format!("{what}: no \"started_s\""))?;
        let inc = Incarnation {
            rank: uint(p, "rank", &what)?,
            replica: uint(p, "replica", &what)?,
            incarnation: uint(p, "incarnation", &what)?,
            start,
            caught_up: float(p, "caught_up_after_s", &what)?.map(|d| start + d),
            end: float(p, "ended_s", &what)?,
        };
        if inc.rank >= ranks || inc.replica >= replicas {
            return Err(format!(
                "{what}: replica {}.{} outside {ranks} ranks x {replicas} replicas",
                inc.rank, inc.replica
            ));
        }
        incarnations.push(inc);
    }
    let mut events = Vec::new();
    // Reports of older volpexrun versions have no events.
    if let Some(list) = v["events"].as_array() {
        for (i, e) in list.iter().enumerate() {
            let what = format!("events[{i}]");
            events.push(Event {
                t: float(e, "t_s", &what)?.ok_or(format!("{what}: no \"t_s\""))?,
                kind: e["kind"]
                    .as_str()
                    .ok_or(format!("{what}: no \"kind\""))?
                    .to_string(),
                rank: uint(e, "rank", &what)?,
                replica: uint(e, "replica", &what)?,
            });
        }
    }
    Ok(Timeline {
        ranks,
        replicas,
        success: v["success"].as_bool().unwrap_or(false),
        elapsed,
        incarnations,
        events,
    })
}

// ---------------------------------------------------------------------------------------
// Drawing.

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn draw_err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw the figure: {e}")
}

const FONT: &str = "sans-serif";
/// Open MPI's colour in every figure.
const OPENMPI_COLOR: RGBColor = RGBColor(0xFF, 0x7F, 0x0E);
/// Volpex's colour in every figure.
const VOLPEX_COLOR: RGBColor = RGBColor(0x1F, 0x77, 0xB4);
/// Colours of other sides, in column order.
const SIDE_COLORS: [RGBColor; 4] = [
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0x94, 0x67, 0xBD),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xE3, 0x77, 0xC2),
];
/// Bars of the job's first processes.
pub const FIRST_COLOR: RGBColor = RGBColor(0x1F, 0x77, 0xB4);
/// Bars of new incarnations.
pub const NEW_COLOR: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
/// Kills (by a signal).
pub const KILL_COLOR: RGBColor = RGBColor(0xD6, 0x27, 0x28);
/// Other deaths (exits, silence, fences, retirements, drains).
pub const DEATH_COLOR: RGBColor = RGBColor(0x7F, 0x00, 0x00);
/// Failovers.
pub const FAILOVER_COLOR: RGBColor = RGBColor(0xFF, 0x7F, 0x0E);
/// Lagging replicas.
pub const LAG_COLOR: RGBColor = RGBColor(0x7F, 0x7F, 0x7F);

/// The colour of side `name`, the `k`-th in column order: Open MPI and Volpex keep
/// theirs in every figure, the others take the palette's in turn.
fn side_color(name: &str, k: usize) -> RGBColor {
    match name {
        "openmpi" | "openmpi-sm" => OPENMPI_COLOR,
        "volpex" => VOLPEX_COLOR,
        _ => SIDE_COLORS[k % SIDE_COLORS.len()],
    }
}

/// A legend entry's glyph.
#[derive(Clone, Copy)]
enum Glyph {
    Line(RGBColor),
    Dashed(RGBColor),
    Bar(RGBColor, f64),
    Cross(RGBColor),
    Triangle(RGBColor),
    Tick(RGBColor),
}

/// Draws `items` in a row, centred in `area`.
fn legend(area: &Area, items: &[(Glyph, String)]) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let width = |s: &str| 36 + 7 * s.chars().count() as i32;
    let total: i32 = items.iter().map(|(_, s)| width(s)).sum();
    let mut x = ((w as i32 - total) / 2).max(4);
    let y = h as i32 / 2;
    let style = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (g, label) in items {
        let (a, b) = ((x, y), (x + 22, y));
        match *g {
            Glyph::Line(c) => area.draw(&PathElement::new(vec![a, b], c.stroke_width(2))),
            Glyph::Dashed(c) => {
                area.draw(&DashedPathElement::new(vec![a, b], 4, 3, c.stroke_width(1)))
            }
            Glyph::Bar(c, o) => area.draw(&Rectangle::new(
                [(x, y - 6), (x + 22, y + 6)],
                c.mix(o).filled(),
            )),
            Glyph::Cross(c) => area.draw(&Cross::new((x + 11, y), 5, c.stroke_width(2))),
            Glyph::Triangle(c) => area.draw(&TriangleMarker::new((x + 11, y), 5, c.filled())),
            Glyph::Tick(c) => area.draw(&PathElement::new(
                vec![(x + 11, y - 7), (x + 11, y + 7)],
                c.stroke_width(3),
            )),
        }
        .map_err(draw_err)?;
        area.draw(&Text::new(label.clone(), (x + 28, y), style.clone()))
            .map_err(draw_err)?;
        x += width(label);
    }
    Ok(())
}

/// `compare pingpong --csv` as two panels side by side: latency (left) and bandwidth
/// (right) against message size, log-log.
pub fn pingpong_svg(csv: &str, title: Option<&str>) -> Result<String, String> {
    let p = parse_pingpong(csv)?;
    let mut buf = String::new();
    {
        let full = SVGBackend::with_string(&mut buf, (1100, 480)).into_drawing_area();
        full.fill(&WHITE).map_err(draw_err)?;
        let names: Vec<String> = p.sides.iter().map(|s| display(s)).collect();
        let title = title
            .map(str::to_string)
            .unwrap_or_else(|| format!("Ping-pong, 2 ranks: {}", names.join(" and ")));
        let root = full
            .titled(&title, (FONT, 20).into_font())
            .map_err(draw_err)?;
        let (panels, foot) = root.split_vertically(root.dim_in_pixel().1 - 36);
        let halves = panels.split_evenly((1, 2));
        let sizes: Vec<f64> = p.points[0].iter().map(|q| q.bytes).collect();
        let (smin, smax) = bounds(sizes.iter().copied()).ok_or("no sizes")?;
        for (panel, lat) in halves.iter().zip([true, false]) {
            let pick = |q: &Point| if lat { q.lat } else { q.bw };
            let values = p.points.iter().flatten().filter_map(pick);
            let Some((vmin, vmax)) = bounds(values) else {
                continue;
            };
            let mut chart = ChartBuilder::on(panel)
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(64)
                .caption(
                    if lat { "one-way latency" } else { "bandwidth" },
                    (FONT, 16),
                )
                .build_cartesian_2d(
                    (smin / 1.5..smax * 1.5).log_scale(),
                    (vmin / 1.5..vmax * 1.5).log_scale(),
                )
                .map_err(draw_err)?;
            chart
                .configure_mesh()
                .x_desc("message size (bytes)")
                .y_desc(if lat { "microseconds" } else { "MB/s" })
                .x_label_formatter(&|v| si_bytes(*v))
                .y_label_formatter(&|v| short_number(*v))
                .label_style((FONT, 12))
                .axis_desc_style((FONT, 13))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(draw_err)?;
            for (k, pts) in p.points.iter().enumerate() {
                let c = side_color(&p.sides[k], k);
                let line: Vec<(f64, f64)> = pts
                    .iter()
                    .filter_map(|q| pick(q).map(|v| (q.bytes, v)))
                    .collect();
                chart
                    .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))
                    .map_err(draw_err)?;
                chart
                    .draw_series(line.iter().map(|&q| Circle::new(q, 3, c.filled())))
                    .map_err(draw_err)?;
            }
        }
        let items: Vec<(Glyph, String)> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (Glyph::Line(side_color(&p.sides[k], k)), n.clone()))
            .collect();
        legend(&foot, &items)?;
        full.present().map_err(draw_err)?;
    }
    Ok(buf)
}

/// The smallest and largest of `values`.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// `100`, `1 kB`, `10 MB`: the log axis puts its labels at powers of ten.
fn si_bytes(v: f64) -> String {
    if v >= 1e6 {
        format!("{} MB", short_number(v / 1e6))
    } else if v >= 1e3 {
        format!("{} kB", short_number(v / 1e3))
    } else {
        short_number(v)
    }
}

/// A number without trailing zeros: `0.5`, `20`, `1e+04`.
fn short_number(v: f64) -> String {
    if v >= 1e5 {
        format!("{v:.0e}")
    } else if v >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `compare npb --csv`: per rank count a panel of grouped bars, every benchmark's time
/// over the first side's.
pub fn npb_svg(csv: &str, title: Option<&str>) -> Result<String, String> {
    let t = parse_npb(csv)?;
    let nps: BTreeSet<u32> = t.rows.iter().map(|r| r.np).collect();
    let classes: BTreeSet<&str> = t.rows.iter().map(|r| r.class.as_str()).collect();
    let mut benches: Vec<&str> = Vec::new();
    for r in &t.rows {
        if !benches.contains(&r.bench.as_str()) {
            benches.push(&r.bench);
        }
    }
    let others = t.sides.len() - 1;
    let ratio = |r: &NpbRow, k: usize| -> Option<f64> {
        if let Some(x) = r.ratios[k - 1] {
            return Some(x);
        }
        let base = r.seconds[0].filter(|b| *b > 0.0)?;
        Some(r.seconds[k]? / base)
    };
    let top = t
        .rows
        .iter()
        .flat_map(|r| (1..=others).filter_map(move |k| ratio(r, k)))
        .fold(1.0f64, f64::max)
        * 1.2;
    let names: Vec<String> = t.sides.iter().map(|s| display(s)).collect();
    let mut buf = String::new();
    {
        let height = 90 + 300 * nps.len() as u32;
        let full = SVGBackend::with_string(&mut buf, (1000, height)).into_drawing_area();
        full.fill(&WHITE).map_err(draw_err)?;
        let title = title.map(str::to_string).unwrap_or_else(|| {
            format!(
                "NPB class {}: time relative to {} (lower is faster)",
                classes.into_iter().collect::<Vec<_>>().join(", "),
                names[0]
            )
        });
        let root = full
            .titled(&title, (FONT, 20).into_font())
            .map_err(draw_err)?;
        let (panels, foot) = root.split_vertically(root.dim_in_pixel().1 - 36);
        let n = benches.len();
        for (panel, np) in panels.split_evenly((nps.len(), 1)).iter().zip(&nps) {
            let mut chart = ChartBuilder::on(panel)
                .margin(10)
                .x_label_area_size(28)
                .y_label_area_size(56)
                .caption(
                    format!("{np} rank{}", if *np == 1 { "" } else { "s" }),
                    (FONT, 15),
                )
                .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..top)
                .map_err(draw_err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .y_desc(format!("time / {} time", names[0]))
                .y_label_formatter(&|v| format!("{v:.1}"))
                .label_style((FONT, 12))
                .axis_desc_style((FONT, 13))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(draw_err)?;
            let area = chart.plotting_area();
            area.draw(&DashedPathElement::new(
                vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
                5,
                4,
                side_color(&t.sides[0], 0).stroke_width(2),
            ))
            .map_err(draw_err)?;
            let width = 0.8 / others as f64;
            let value_style =
                TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
            for (b, bench) in benches.iter().enumerate() {
                let Some(row) = t.rows.iter().find(|r| r.np == *np && r.bench == *bench) else {
                    // Not run at this rank count (BT and SP need squares).
                    area.draw(&Text::new(
                        "not run",
                        (b as f64, 0.05 * top),
                        value_style.clone().color(&LAG_COLOR),
                    ))
                    .map_err(draw_err)?;
                    continue;
                };
                for k in 1..=others {
                    let x0 = b as f64 - 0.4 + width * (k - 1) as f64;
                    let Some(v) = ratio(row, k) else {
                        area.draw(&Text::new(
                            "n/a",
                            (x0 + width / 2.0, 0.05 * top),
                            value_style.clone(),
                        ))
                        .map_err(draw_err)?;
                        continue;
                    };
                    area.draw(&Rectangle::new(
                        [(x0 + 0.02, 0.0), (x0 + width - 0.02, v)],
                        side_color(&t.sides[k], k).filled(),
                    ))
                    .map_err(draw_err)?;
                    let mark = if row.verified[0] && row.verified[k] {
                        ""
                    } else {
                        "*"
                    };
                    area.draw(&Text::new(
                        format!("{v:.2}{mark}"),
                        (x0 + width / 2.0, v),
                        value_style.clone(),
                    ))
                    .map_err(draw_err)?;
                }
            }
            // Benchmark names under the axis (a numeric axis would place its own labels
            // between the groups).
            let below =
                TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
            for (b, bench) in benches.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(b as f64, 0.0));
                full.draw(&Text::new(bench.to_uppercase(), (x, y + 6), below.clone()))
                    .map_err(draw_err)?;
            }
        }
        let mut items = vec![(
            Glyph::Dashed(side_color(&t.sides[0], 0)),
            format!("{} = 1.0", names[0]),
        )];
        for (k, name) in names.iter().enumerate().skip(1) {
            items.push((Glyph::Bar(side_color(&t.sides[k], k), 1.0), name.clone()));
        }
        if t.rows.iter().any(|r| r.verified.iter().any(|v| !v)) {
            items.push((Glyph::Bar(WHITE, 0.0), "* some run did not verify".into()));
        }
        legend(&foot, &items)?;
        full.present().map_err(draw_err)?;
    }
    Ok(buf)
}

/// `volpex-bench npb --csv`: every configuration's failure-free and with-fault times side
/// by side, the ratio over each pair.
pub fn npb_runs_svg(csv: &str, title: Option<&str>) -> Result<String, String> {
    let runs = parse_npb_runs(csv)?;
    let mut configs: Vec<&str> = Vec::new();
    for r in &runs {
        if !configs.contains(&r.config.as_str()) {
            configs.push(&r.config);
        }
    }
    let free = |c: &str| runs.iter().find(|r| r.config == c && r.fault == "none");
    let faulty = |c: &str| runs.iter().find(|r| r.config == c && r.fault != "none");
    let top = runs.iter().filter_map(|r| r.seconds).fold(0.0f64, f64::max) * 1.25;
    let top = if top > 0.0 { top } else { 1.0 };
    let mut buf = String::new();
    {
        let full = SVGBackend::with_string(&mut buf, (1000, 480)).into_drawing_area();
        full.fill(&WHITE).map_err(draw_err)?;
        let title = title
            .unwrap_or("NPB under volpexrun: failure-free and with a replica killed")
            .to_string();
        let root = full
            .titled(&title, (FONT, 20).into_font())
            .map_err(draw_err)?;
        let (panel, foot) = root.split_vertically(root.dim_in_pixel().1 - 36);
        let n = configs.len();
        let mut chart = ChartBuilder::on(&panel)
            .margin(10)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..top)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("seconds (the benchmark's timed loop)")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(draw_err)?;
        let area = chart.plotting_area();
        let above =
            TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
        for (i, c) in configs.iter().enumerate() {
            let x = i as f64;
            for (run, x0, color) in [
                (free(c), x - 0.38, VOLPEX_COLOR),
                (faulty(c), x + 0.02, KILL_COLOR),
            ] {
                let Some(run) = run else {
                    continue;
                };
                match run.seconds {
                    Some(s) => {
                        area.draw(&Rectangle::new([(x0, 0.0), (x0 + 0.36, s)], color.filled()))
                            .map_err(draw_err)?;
                        if !run.verified {
                            area.draw(&Text::new("*", (x0 + 0.18, s), above.clone()))
                                .map_err(draw_err)?;
                        }
                    }
                    None => area
                        .draw(&Text::new("failed", (x0 + 0.18, 0.05 * top), above.clone()))
                        .map_err(draw_err)?,
                }
            }
            let pair = free(c)
                .and_then(|f| f.seconds)
                .zip(faulty(c).and_then(|f| f.seconds));
            if let Some((f, k)) = pair.filter(|(f, _)| *f > 0.0) {
                area.draw(&Text::new(
                    format!("x{:.2}", k / f),
                    (x, f.max(k) + 0.06 * top),
                    above.clone(),
                ))
                .map_err(draw_err)?;
            }
        }
        let below = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for (i, c) in configs.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64, 0.0));
            full.draw(&Text::new(c.to_string(), (x, y + 6), below.clone()))
                .map_err(draw_err)?;
        }
        legend(
            &foot,
            &[
                (Glyph::Bar(VOLPEX_COLOR, 1.0), "failure-free".into()),
                (Glyph::Bar(KILL_COLOR, 1.0), "a replica killed".into()),
                (
                    Glyph::Bar(WHITE, 0.0),
                    "xR: with-fault / failure-free; * did not verify".into(),
                ),
            ],
        )?;
        full.present().map_err(draw_err)?;
    }
    Ok(buf)
}

/// What a timeline marker looks like, by event kind; `None`: not drawn.
fn marker(kind: &str) -> Option<(Glyph, &'static str)> {
    match kind {
        "killed" => Some((Glyph::Cross(KILL_COLOR), "killed")),
        "died" | "retired" | "drained" => Some((Glyph::Cross(DEATH_COLOR), "died / retired")),
        "failover" => Some((Glyph::Triangle(FAILOVER_COLOR), "failed over")),
        "lagging" => Some((Glyph::Triangle(LAG_COLOR), "lagging")),
        "caught_up" => Some((Glyph::Tick(NEW_COLOR), "caught up")),
        _ => None,
    }
}

/// The most rows (replicas) a timeline draws.
const MAX_ROWS: u32 = 2000;

/// A `volpexrun --report`: one row per replica, one bar per incarnation, markers for
/// what happened.
pub fn timeline_svg(json: &str, title: Option<&str>) -> Result<String, String> {
    let t = parse_timeline(json)?;
    let rows = match t.ranks.checked_mul(t.replicas) {
        Some(0) => return Err("the report has no replicas".into()),
        Some(n) if n <= MAX_ROWS => n as usize,
        _ => {
            return Err(format!(
                "{} ranks x {} replicas: more rows than a timeline draws ({MAX_ROWS})",
                t.ranks, t.replicas
            ))
        }
    };
    let end_of_all = t
        .incarnations
        .iter()
        .flat_map(|i| [Some(i.start), i.end, i.caught_up])
        .chain(t.events.iter().map(|e| Some(e.t)))
        .flatten()
        .fold(t.elapsed, f64::max);
    let xmax = if end_of_all > 0.0 {
        end_of_all * 1.02
    } else {
        1.0
    };
    // Rank 0's replica 0 at the top.
    let y_of = |rank: u32, replica: u32| (rows - 1 - (rank * t.replicas + replica) as usize) as f64;
    let regenerations = t.incarnations.iter().filter(|i| i.incarnation > 0).count();
    let mut buf = String::new();
    {
        let height = 130 + 26 * rows as u32;
        let full = SVGBackend::with_string(&mut buf, (1000, height)).into_drawing_area();
        full.fill(&WHITE).map_err(draw_err)?;
        let title = title.map(str::to_string).unwrap_or_else(|| {
            format!(
                "{} rank{} x {} replica{}: {} in {:.1} s, {regenerations} regeneration{}",
                t.ranks,
                if t.ranks == 1 { "" } else { "s" },
                t.replicas,
                if t.replicas == 1 { "" } else { "s" },
                if t.success { "succeeded" } else { "failed" },
                t.elapsed,
                if regenerations == 1 { "" } else { "s" }
            )
        });
        let root = full
            .titled(&title, (FONT, 18).into_font())
            .map_err(draw_err)?;
        let (panel, foot) = root.split_vertically(root.dim_in_pixel().1 - 36);
        let mut chart = ChartBuilder::on(&panel)
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..xmax, -0.6..rows as f64 - 0.4)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("seconds since the job started")
            .y_desc("rank.replica")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(draw_err)?;
        let left = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for rank in 0..t.ranks {
            for replica in 0..t.replicas {
                let (x, y) = chart.backend_coord(&(0.0, y_of(rank, replica)));
                full.draw(&Text::new(
                    format!("{rank}.{replica}"),
                    (x - 8, y),
                    left.clone(),
                ))
                .map_err(draw_err)?;
            }
        }
        let area = chart.plotting_area();
        let inside = TextStyle::from((FONT, 10).into_font())
            .color(&WHITE)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for i in &t.incarnations {
            let y = y_of(i.rank, i.replica);
            let end = i.end.unwrap_or(t.elapsed).max(i.start);
            let color = if i.incarnation == 0 {
                FIRST_COLOR
            } else {
                NEW_COLOR
            };
            // A new incarnation is lighter until it caught up (or all its life if it never
            // did).
            let solid_from = match (i.incarnation, i.caught_up) {
                (0, _) => i.start,
                (_, Some(c)) => c.clamp(i.start, end),
                (_, None) => end,
            };
            if solid_from > i.start {
                area.draw(&Rectangle::new(
                    [(i.start, y - 0.3), (solid_from, y + 0.3)],
                    color.mix(0.35).filled(),
                ))
                .map_err(draw_err)?;
            }
            if end > solid_from {
                area.draw(&Rectangle::new(
                    [(solid_from, y - 0.3), (end, y + 0.3)],
                    color.filled(),
                ))
                .map_err(draw_err)?;
            }
            let (x, yp) = chart.backend_coord(&(i.start, y));
            let label_style = if i.incarnation == 0 {
                inside.clone()
            } else {
                inside.clone().color(&BLACK)
            };
            full.draw(&Text::new(
                format!("#{}", i.incarnation),
                (x + 3, yp),
                label_style,
            ))
            .map_err(draw_err)?;
        }
        let mut seen: Vec<&str> = Vec::new();
        for e in &t.events {
            let Some((g, label)) = marker(&e.kind) else {
                continue;
            };
            if e.rank >= t.ranks || e.replica >= t.replicas {
                continue;
            }
            if !seen.contains(&label) {
                seen.push(label);
            }
            let (x, y) = chart.backend_coord(&(e.t, y_of(e.rank, e.replica)));
            match g {
                Glyph::Cross(c) => full.draw(&Cross::new((x, y), 6, c.stroke_width(3))),
                // Failovers and lags above the bar, so they do not hide it.
                Glyph::Triangle(c) => full.draw(&TriangleMarker::new((x, y - 11), 4, c.filled())),
                Glyph::Tick(c) => full.draw(&PathElement::new(
                    vec![(x, y - 10), (x, y + 10)],
                    c.stroke_width(3),
                )),
                Glyph::Line(_) | Glyph::Dashed(_) | Glyph::Bar(..) => Ok(()),
            }
            .map_err(draw_err)?;
        }
        let mut items = vec![(Glyph::Bar(FIRST_COLOR, 1.0), "first processes".to_string())];
        if regenerations > 0 {
            items.push((
                Glyph::Bar(NEW_COLOR, 0.35),
                "new incarnation catching up".into(),
            ));
            items.push((Glyph::Bar(NEW_COLOR, 1.0), "caught up".into()));
        }
        for kind in ["killed", "died", "failover", "lagging", "caught_up"] {
            if let Some((g, label)) = marker(kind) {
                if seen.contains(&label) && !(kind == "caught_up" && regenerations > 0) {
                    items.push((g, label.to_string()));
                }
            }
        }
        legend(&foot, &items)?;
        full.present().map_err(draw_err)?;
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PING: &str =
        "size_bytes,volpex_lat_us,openmpi_lat_us,lat_ratio,volpex_mbps,openmpi_mbps,bw_ratio\n\
        1,5.0,4.0,1.25,0.2,0.25,0.8\n\
        1024,6.0,5.0,1.2,170.7,204.8,0.83\n";

    #[test]
    fn pingpong_sides_come_from_the_header() {
        let p = parse_pingpong(PING).unwrap();
        assert_eq!(p.sides, ["volpex", "openmpi"]);
        assert_eq!(
            p.points[1][1],
            Point {
                bytes: 1024.0,
                lat: Some(5.0),
                bw: Some(204.8)
            }
        );
        let svg = pingpong_svg(PING, None).unwrap();
        assert!(svg.contains("Open MPI") && svg.contains("bandwidth"));
    }

    #[test]
    fn malformed_csv_says_where() {
        assert!(parse_pingpong("").unwrap_err().contains("empty"));
        let e = parse_pingpong("size_bytes,volpex_lat_us\n8,fast\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("volpex_lat_us"), "{e}");
        let e = parse_pingpong("size_bytes,volpex_lat_us\n8\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("1 fields"), "{e}");
        let e = parse_pingpong("size,x\n8,1\n").unwrap_err();
        assert!(e.contains("size_bytes"), "{e}");
        let e =
            parse_npb("bench,class,np,openmpi_s,openmpi_verified\nep,A,1,1.0,yes\n").unwrap_err();
        assert!(e.contains("two sides"), "{e}");
    }

    const NPB: &str = "bench,class,np,openmpi_s,openmpi_verified,volpex_s,volpex_verified,volpex-official_s,volpex-official_verified,volpex_ratio,volpex_paired,volpex-official_ratio,volpex-official_paired\n\
        cg,A,2,0.50,yes,0.60,yes,0.55,no,1.150,1.2,1.1,1.1\n\
        cg,A,4,0.40,yes,,failed,0.44,yes,,,1.1,1.1\n";

    #[test]
    fn npb_takes_any_number_of_sides() {
        let t = parse_npb(NPB).unwrap();
        assert_eq!(t.sides, ["openmpi", "volpex", "volpex-official"]);
        assert_eq!(t.rows[1].np, 4);
        assert_eq!(t.rows[1].seconds, [Some(0.4), None, Some(0.44)]);
        assert_eq!(t.rows[0].verified, [true, true, false]);
        // The ratio column (from the rates) wins over the seconds' 0.60 / 0.50.
        assert_eq!(t.rows[0].ratios, [Some(1.15), Some(1.1)]);
        let svg = npb_svg(NPB, None).unwrap();
        for s in [
            "volpex-official",
            "2 ranks",
            "4 ranks",
            "CG",
            "1.15",
            "1.10*",
            "n/a",
        ] {
            assert!(svg.contains(s), "{s} missing");
        }
    }

    const RUNS: &str = "bench,class,np,replicas,fault,seconds,mops,verified,ratio\n\
        cg,S,2,2,none,1.00,10.0,yes,\n\
        cg,S,2,2,1.1:kill@0.4,1.50,8.0,yes,1.500\n";

    #[test]
    fn npb_runs_pair_up() {
        let runs = parse_npb_runs(RUNS).unwrap();
        assert_eq!(runs[1].config, "CG S 2x2");
        assert_eq!(runs[1].seconds, Some(1.5));
        assert!(npb_runs_svg(RUNS, None).unwrap().contains("x1.50"));
    }

    const REPORT: &str = r#"{"ranks":1,"replicas":2,"success":true,"elapsed_s":3.0,
        "processes":[
          {"rank":0,"replica":0,"incarnation":0,"started_s":0.0,"caught_up_after_s":null,"ended_s":2.9},
          {"rank":0,"replica":1,"incarnation":0,"started_s":0.0,"caught_up_after_s":null,"ended_s":1.0},
          {"rank":0,"replica":1,"incarnation":1,"started_s":1.0,"caught_up_after_s":0.5,"ended_s":null}],
        "events":[{"t_s":1.0,"kind":"killed","rank":0,"replica":1,"incarnation":0,"detail":"killed by SIGKILL"},
                  {"t_s":1.5,"kind":"caught_up","rank":0,"replica":1,"incarnation":1,"detail":null}]}"#;

    /// The contents of the SVG's text elements, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once('>')?
                        .1
                        .split_once("</text>")?
                        .0
                        .trim()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn timelines_read_incarnations_and_events() {
        let t = parse_timeline(REPORT).unwrap();
        assert_eq!(t.incarnations.len(), 3);
        assert_eq!(t.incarnations[2].caught_up, Some(1.5));
        assert_eq!(t.incarnations[2].end, None);
        assert_eq!(t.events[0].kind, "killed");
        let svg = timeline_svg(REPORT, None).unwrap();
        let texts = texts(&svg);
        assert_eq!(texts.iter().filter(|t| *t == "#0").count(), 2, "{svg}");
        assert_eq!(texts.iter().filter(|t| *t == "#1").count(), 1);
        assert!(texts.iter().any(|t| t == "killed"));
        assert!(texts.iter().any(|t| t == "0.1"), "row labels");
        // An older report without events or ended_s still draws.
        let old = r#"{"ranks":1,"replicas":1,"elapsed_s":1.0,"processes":[{"rank":0,"replica":0,"incarnation":0,"started_s":0.0}]}"#;
        assert!(timeline_svg(old, None).is_ok());
        let e = parse_timeline(r#"{"ranks":1,"replicas":1,"elapsed_s":1}"#).unwrap_err();
        assert!(e.contains("processes"), "{e}");
        let huge = r#"{"ranks":100000,"replicas":100000,"elapsed_s":1,"processes":[]}"#;
        assert!(timeline_svg(huge, None).unwrap_err().contains("more rows"));
        let e = parse_timeline("not json").unwrap_err();
        assert!(e.contains("not a volpexrun --report JSON"), "{e}");
        let bad = REPORT.replace("\"started_s\":1.0", "\"started_s\":\"soon\"");
        let e = parse_timeline(&bad).unwrap_err();
        assert!(e.contains("processes[2]") && e.contains("started_s"), "{e}");
    }
}
