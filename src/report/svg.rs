//! Draws a picture as SVG with a layout of our own (no Graphviz): the
//! transactions of a cycle are few, so a column reads best.
//!
//! Layout: boxes stacked top to bottom in the picture's order (a cycle's
//! order), all as wide as the widest, one row per micro-op shown (those an
//! edge rests on highlighted, the elided ones a grey row). An edge that
//! rests on micro-ops is an arc on the right of the column from its
//! micro-op's row to the other's (as Elle's cells anchor them), shorter
//! spans on inner lanes, its label at the arc's crest on a white ground,
//! moved down where it would cover another label. An edge of order alone
//! (process, real time) between neighbours is a straight arrow in the gap
//! between them, its label to its right; between others, an arc. Edge
//! colours and dashes follow [`EdgeKind`]; a legend of the kinds used sits
//! at the bottom, and beneath it the picture's notes (what it leaves
//! out). Text widths are estimated from the character count (the
//! fonts are the reader's monospace and sans-serif), with room to spare.

use std::fmt::Write;

use super::picture::{Edge, EdgeKind, Picture, Row, status_color};

const MARGIN: f64 = 16.0;
const PAD: f64 = 10.0;
const LINE: f64 = 16.0;
const HEAD: f64 = 20.0;
/// Estimated advance of one character at 12px.
const CHAR: f64 = 7.4;
const GAP: f64 = 70.0;
const LANE: f64 = 46.0;
const LEGEND: f64 = 30.0;
/// Height of a note's line beneath the legend.
const NOTE: f64 = 18.0;

/// Text escaped for XML (element content and attribute values).
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// The baseline of row `r` of the box whose top is `top`.
fn row_base(top: f64, r: usize) -> f64 {
    top + PAD + HEAD + 11.0 + r as f64 * LINE
}

/// A row's text: the micro-op, or how many are left out.
fn row_text(r: &Row) -> String {
    match r {
        Row::Mop { text, .. } => text.clone(),
        Row::Elided(1) => "... 1 micro-op".to_string(),
        Row::Elided(n) => format!("... {n} micro-ops"),
    }
}

/// Whether an edge rests on a micro-op at either end.
fn anchored(e: &Edge) -> bool {
    e.from_row.is_some() || e.to_row.is_some()
}

fn width(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR
}

fn edge_text(e: &Edge) -> (String, String) {
    (e.kind.name().to_string(), e.marked(e.label.clone()))
}

/// One edge as drawn: its path, style and label.
struct Drawn {
    path: String,
    color: &'static str,
    dashed: bool,
    marker: String,
    label_x: f64,
    label_y: f64,
    kind: String,
    rest: String,
    /// The label sits on a white ground (arcs cross other lines).
    ground: bool,
}

impl Drawn {
    /// Edge `e` of the picture whose arrowheads are prefixed `id`, along
    /// `path`, its label's baseline starting at `label`.
    fn new(e: &Edge, id: &str, path: String, label: (f64, f64), ground: bool) -> Drawn {
        let (kind, rest) = edge_text(e);
        Drawn {
            path,
            color: e.kind.color(),
            dashed: e.dashed(),
            marker: format!("{id}-{}", e.kind.name()),
            label_x: label.0,
            label_y: label.1,
            kind,
            rest,
            ground,
        }
    }

    /// The estimated width of the label.
    fn label_width(&self) -> f64 {
        width(&self.kind) + 6.0 + width(&self.rest)
    }
}

/// The SVG of `p`; `id` prefixes the arrowheads' ids (several pictures
/// share one HTML page), `title` is the picture's accessible name.
pub fn svg(p: &Picture, id: &str, title: &str) -> String {
    let n = p.nodes.len();
    // Box geometry.
    let box_w = p
        .nodes
        .iter()
        .map(|nd| {
            let head = width(&nd.label) + 12.0 + width(&nd.title);
            let body = nd
                .rows
                .iter()
                .map(|r| width(&row_text(r)))
                .fold(0.0, f64::max);
            head.max(body)
        })
        .fold(200.0, f64::max)
        + 2.0 * PAD;
    // Neighbour edges' lanes (each gap's arrows side by side, from the
    // left): the boxes are made wide enough that every arrow leaves and
    // enters a box, not its border.
    let mut lane_x: Vec<Option<f64>> = vec![None; p.edges.len()];
    let mut gap_x: Vec<f64> = vec![MARGIN + 36.0; n];
    for (i, e) in p.edges.iter().enumerate() {
        if e.from.abs_diff(e.to) == 1 && !anchored(e) {
            let g = e.from.min(e.to);
            lane_x[i] = Some(gap_x[g]);
            let (kind, rest) = edge_text(e);
            gap_x[g] += width(&kind) + 6.0 + width(&rest) + 40.0;
        }
    }
    let box_w = lane_x
        .iter()
        .flatten()
        .map(|x| x - MARGIN + 30.0)
        .fold(box_w, f64::max);
    let heights: Vec<f64> = p
        .nodes
        .iter()
        .map(|nd| PAD + HEAD + nd.rows.len() as f64 * LINE + PAD - 2.0)
        .collect();
    let mut tops = Vec::with_capacity(n);
    let mut y = MARGIN;
    for h in &heights {
        tops.push(y);
        y += h + GAP;
    }
    let bottom = y - GAP;
    let x0 = MARGIN;
    let right = x0 + box_w;

    let mut max_x = right;
    let mut max_y = bottom;
    let mut drawn: Vec<Drawn> = Vec::new();
    let mut arcs: Vec<usize> = Vec::new();
    for (i, e) in p.edges.iter().enumerate() {
        if let Some(x) = lane_x[i] {
            let (y1, y2) = if e.from < e.to {
                (tops[e.from] + heights[e.from], tops[e.to] - 2.0)
            } else {
                (tops[e.from], tops[e.to] + heights[e.to] + 2.0)
            };
            let d = Drawn::new(
                e,
                id,
                format!("M{x:.1},{y1:.1} L{x:.1},{y2:.1}"),
                (x + 8.0, (y1 + y2) / 2.0 + 4.0),
                false,
            );
            max_x = max_x.max(d.label_x + d.label_width());
            drawn.push(d);
        } else {
            arcs.push(i);
        }
    }
    // Arcs: shorter spans inside; each end at its micro-op's row, else
    // at its box's middle.
    let y_of = |k: usize, row: Option<usize>| match row {
        Some(r) => row_base(tops[k], r) - 4.0,
        None => tops[k] + heights[k] / 2.0,
    };
    let span = |e: &Edge| (y_of(e.from, e.from_row) - y_of(e.to, e.to_row)).abs();
    arcs.sort_by(|&i, &j| span(&p.edges[i]).total_cmp(&span(&p.edges[j])));
    // Labels placed so far (x, y of the baseline, width).
    let mut placed: Vec<(f64, f64, f64)> = Vec::new();
    for (lane, &i) in arcs.iter().enumerate() {
        let e = &p.edges[i];
        let lane = lane + 1;
        let bulge = right + 24.0 + lane as f64 * LANE;
        let shift = if anchored(e) {
            0.0
        } else {
            ((lane % 3) as f64 - 1.0) * 7.0
        };
        let (y1, y2) = (
            y_of(e.from, e.from_row) + shift,
            y_of(e.to, e.to_row) + shift,
        );
        let (y1, y2) = if (y1 - y2).abs() < 1.0 {
            (y1 - 8.0, y2 + 8.0)
        } else {
            (y1, y2)
        };
        let crest = right + 0.75 * (bulge - right);
        let mut d = Drawn::new(
            e,
            id,
            format!(
                "M{right:.1},{y1:.1} C{bulge:.1},{y1:.1} {bulge:.1},{y2:.1} {:.1},{y2:.1}",
                right + 2.0
            ),
            (crest + 6.0, (y1 + y2) / 2.0 + 4.0),
            true,
        );
        let lw = d.label_width();
        while placed.iter().any(|&(x, y, w)| {
            (d.label_y - y).abs() < 17.0 && d.label_x < x + w + 6.0 && x < d.label_x + lw + 6.0
        }) {
            d.label_y += 17.0;
        }
        placed.push((d.label_x, d.label_y, lw));
        max_x = max_x.max(d.label_x + lw + 8.0);
        max_y = max_y.max(d.label_y + 6.0);
        drawn.push(d);
    }
    let used: Vec<EdgeKind> = EdgeKind::ALL
        .into_iter()
        .filter(|k| p.edges.iter().any(|e| e.kind == *k))
        .collect();
    let any_inferred = p.edges.iter().any(Edge::dashed);
    let legend_w: f64 = used.iter().map(|k| 46.0 + width(k.name())).sum::<f64>()
        + if any_inferred { 200.0 } else { 0.0 };
    let notes_w = p.notes.iter().map(|t| width(t)).fold(0.0, f64::max);
    let w = (max_x + MARGIN)
        .max(x0 + legend_w + MARGIN)
        .max(x0 + notes_w + MARGIN)
        .ceil();
    let bottom = max_y;
    let h = (bottom + 14.0 + LEGEND + p.notes.len() as f64 * NOTE).ceil();

    let mut o = String::with_capacity(4096);
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-size=\"12\" font-family=\"ui-sans-serif, system-ui, sans-serif\">\n<title>{}</title>\n<defs>\n",
        escape(title)
    );
    for k in EdgeKind::ALL {
        let _ = writeln!(
            o,
            "<marker id=\"{id}-{}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"9\" markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{}\"/></marker>",
            k.name(),
            k.color()
        );
    }
    o.push_str("</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    // Boxes.
    for (i, nd) in p.nodes.iter().enumerate() {
        let (top, hh) = (tops[i], heights[i]);
        let c = status_color(nd.status);
        let _ = writeln!(
            o,
            "<g class=\"txn\"><rect x=\"{x0}\" y=\"{top:.1}\" width=\"{box_w:.1}\" height=\"{hh:.1}\" rx=\"6\" fill=\"#f8fafc\" stroke=\"{c}\" stroke-width=\"1.5\"/>"
        );
        let base = top + PAD + 11.0;
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{base:.1}\"><tspan font-weight=\"700\" fill=\"{c}\">{}</tspan><tspan dx=\"10\" fill=\"#4a5563\">{}</tspan></text>",
            x0 + PAD,
            escape(&nd.label),
            escape(&nd.title)
        );
        let _ = writeln!(
            o,
            "<line x1=\"{x0}\" x2=\"{right:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-opacity=\"0.25\"/>",
            top + PAD + HEAD - 3.0,
            top + PAD + HEAD - 3.0
        );
        for (r, row) in nd.rows.iter().enumerate() {
            let ly = row_base(top, r);
            match row {
                Row::Mop { text, cited: true } => {
                    let _ = writeln!(
                        o,
                        "<rect class=\"cited\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"3\" fill=\"#fff1b8\" stroke=\"#e0b400\" stroke-width=\"0.8\"/><text class=\"mop cited\" x=\"{:.1}\" y=\"{ly:.1}\" font-family=\"ui-monospace, monospace\" font-weight=\"700\" fill=\"#1f2933\">{}</text>",
                        x0 + 4.0,
                        ly - 12.0,
                        box_w - 8.0,
                        LINE,
                        x0 + PAD,
                        escape(text)
                    );
                }
                Row::Mop { text, cited: false } => {
                    let _ = writeln!(
                        o,
                        "<text class=\"mop\" x=\"{:.1}\" y=\"{ly:.1}\" font-family=\"ui-monospace, monospace\" fill=\"#1f2933\">{}</text>",
                        x0 + PAD,
                        escape(text)
                    );
                }
                Row::Elided(_) => {
                    let _ = writeln!(
                        o,
                        "<text x=\"{:.1}\" y=\"{ly:.1}\" font-style=\"italic\" fill=\"#6b7280\">{}</text>",
                        x0 + PAD,
                        escape(&row_text(row))
                    );
                }
            }
        }
        o.push_str("</g>\n");
    }
    // Edges, then their labels above every line.
    for d in &drawn {
        let _ = writeln!(
            o,
            "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} marker-end=\"url(#{})\"/>",
            d.path,
            d.color,
            if d.dashed {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            },
            d.marker
        );
    }
    for d in &drawn {
        if d.ground {
            let lw = d.label_width();
            let _ = writeln!(
                o,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"16\" rx=\"3\" fill=\"#ffffff\" fill-opacity=\"0.9\"/>",
                d.label_x - 3.0,
                d.label_y - 12.0,
                lw + 6.0
            );
        }
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\"><tspan font-weight=\"700\" fill=\"{}\">{}</tspan><tspan dx=\"6\" fill=\"#1f2933\">{}</tspan></text>",
            d.label_x,
            d.label_y,
            d.color,
            escape(&d.kind),
            escape(&d.rest)
        );
    }
    // Legend.
    let ly = bottom + 14.0 + 12.0;
    let mut lx = x0;
    for k in &used {
        let _ = writeln!(
            o,
            "<line x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"2\"/><text x=\"{:.1}\" y=\"{ly:.1}\" fill=\"#4a5563\">{}</text>",
            lx + 24.0,
            ly - 4.0,
            ly - 4.0,
            k.color(),
            lx + 30.0,
            k.name()
        );
        lx += 46.0 + width(k.name());
    }
    if any_inferred {
        let _ = writeln!(
            o,
            "<line x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#4a5563\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{ly:.1}\" fill=\"#4a5563\">not observed (as labelled)</text>",
            lx + 24.0,
            ly - 4.0,
            ly - 4.0,
            lx + 30.0
        );
    }
    // What the picture leaves out, beneath the legend.
    for (i, t) in p.notes.iter().enumerate() {
        let _ = writeln!(
            o,
            "<text class=\"note\" x=\"{x0:.1}\" y=\"{:.1}\" font-style=\"italic\" fill=\"#4a5563\">{}</text>",
            ly + LEGEND - 8.0 + i as f64 * NOTE,
            escape(t)
        );
    }
    o.push_str("</svg>\n");
    o
}

/// How many pixels a PNG has per unit of the SVG (twice: sharp on a
/// high-density screen, still small).
pub const PNG_SCALE: f32 = 2.0;

/// The fonts the rasterizer draws text with: the system's, loaded once,
/// the generic families (`sans-serif`, `monospace`) set to ones installed.
fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static FONTS: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> =
        std::sync::OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_system_fonts();
            let has = |db: &resvg::usvg::fontdb::Database, f: &str| {
                db.faces().any(|x| x.families.iter().any(|(n, _)| n == f))
            };
            let pick = |db: &resvg::usvg::fontdb::Database, want: &[&str]| {
                want.iter().find(|f| has(db, f)).map(|f| f.to_string())
            };
            if let Some(f) = pick(
                &db,
                &["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
            ) {
                db.set_sans_serif_family(f);
            }
            if let Some(f) = pick(
                &db,
                &[
                    "DejaVu Sans Mono",
                    "Liberation Mono",
                    "Courier New",
                    "Menlo",
                ],
            ) {
                db.set_monospace_family(f);
            }
            std::sync::Arc::new(db)
        })
        .clone()
}

/// `svg` (as [`svg`] draws it) rasterized to PNG by resvg, at
/// [`PNG_SCALE`] pixels per unit. Text is drawn in the system's fonts; a
/// system without any draws the boxes and arrows alone.
pub fn png(svg: &str) -> Result<Vec<u8>, String> {
    let opt = resvg::usvg::Options {
        fontdb: fonts(),
        ..Default::default()
    };
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| format!("the SVG: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(PNG_SCALE)
        .ok_or("an empty picture")?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or("a picture too large to rasterize")?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG encoding: {e}"))
}
