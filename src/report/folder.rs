//! Elle's `elle/` folder for a checked history: per anomaly type,
//! `<type>.txt` explaining every anomaly of that type in prose (the text
//! explainer's words), and for the first [`PlotOptions::max_pictures`] of
//! them `<type>/<n>.dot` and `<type>/<n>.svg` (or `.png`); with
//! [`PlotOptions::scc`], `sccs/<n>.svg` (and `.dot`), the whole strongly
//! connected component of each cycle drawn, once per component; and
//! `index.html`, the page that shows it all (see [`super::html`]). Within a
//! type the most direct anomalies come first ([`picture::rank`]: fewest
//! transactions, then fewest steps not observed), numbered in that order.
//!
//! Elle's plot options are honoured: `:plot-format` (`:svg`, or `:png`
//! rasterized by resvg; any other format is refused by name), `:max-plot-bytes` (a
//! picture whose DOT is longer is not drawn, as Elle skips it, and the
//! .txt says so) and `:plot-timeout` (a picture that took longer to lay
//! out and draw is dropped, and the .txt says so).
//!
//! A folder written again (the CLI's `--directory` on a second run) holds
//! this run's files alone: what an earlier run wrote and this one does not
//! is removed, by the list each run leaves in it (`.elle-si-files`).

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::anomaly::{Anomaly, Field};
use crate::error::Error;
use crate::explain::text::{explain, place};
use crate::history::model::History;
use crate::report::html::{self, ModelVerdict, Page, Section, Shown};
use crate::report::{CheckResult, Valid, picture, render, scc};
use crate::spec::Model;

/// Micro-ops (and list elements) of each op index.html lists in full
/// before the rest is summarised: the pictures elide, the op table does
/// not, short of a read of thousands.
const OP_SHOWN: usize = 256;

/// What the pictures are drawn as.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum PlotFormat {
    /// SVG, drawn by elle-si itself.
    #[default]
    Svg,
    /// PNG, the SVG rasterized (resvg).
    Png,
}

impl PlotFormat {
    /// Elle's `:plot-format`, with or without its colon; a format elle-si
    /// cannot draw is refused by name.
    pub fn parse(s: &str) -> Result<PlotFormat, String> {
        match s.trim_start_matches(':') {
            "svg" => Ok(PlotFormat::Svg),
            "png" => Ok(PlotFormat::Png),
            other => Err(format!(
                "plot format :{other} cannot be drawn: elle-si draws :svg and :png (and writes Graphviz .dot beside each picture)"
            )),
        }
    }

    /// The pictures' file extension.
    pub fn extension(self) -> &'static str {
        match self {
            PlotFormat::Svg => "svg",
            PlotFormat::Png => "png",
        }
    }
}

/// Elle's plot options, and how many pictures per type.
#[derive(Clone, Debug)]
pub struct PlotOptions {
    /// What the folder's pictures are drawn as.
    pub format: PlotFormat,
    /// Elle's `:max-plot-bytes`: pictures whose DOT is longer are skipped.
    pub max_plot_bytes: usize,
    /// Elle's `:plot-timeout`: pictures that take longer are dropped.
    pub plot_timeout: Duration,
    /// Pictures per anomaly type (and anomalies shown in index.html).
    pub max_pictures: usize,
    /// The run's deadline: past it no anomaly is explained or drawn (the
    /// folder and index.html say how many were left out).
    pub deadline: Option<Instant>,
    /// Also draw, for each cycle drawn, the whole strongly connected
    /// component it lies in (`sccs/<n>.svg`, see [`scc`]; the CLI's
    /// `--plot-scc`, Clojure's `:plot-scc?`).
    pub scc: bool,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            format: PlotFormat::Svg,
            max_plot_bytes: 65_536,
            plot_timeout: Duration::from_millis(5_000),
            max_pictures: 12,
            deadline: None,
            scc: false,
        }
    }
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Pictures drawn.
    pub pictures: usize,
    /// Pictures not drawn for size or time.
    pub skipped: usize,
}

/// A name safe as a file name.
fn file_name(t: &str) -> String {
    t.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write_file(path: &Path, text: impl AsRef<[u8]>) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::io(path.display(), e))
}

/// The list, in the folder, of the files elle-si wrote there (one path
/// relative to the folder per line), so that the next run into the same
/// folder removes those it does not write again: a type the history no
/// longer shows leaves no `<type>.txt` or pictures behind. Files elle-si
/// did not write are never touched.
const MANIFEST: &str = ".elle-si-files";

/// The files a run wrote (relative paths), and those an earlier run
/// listed.
struct Manifest {
    earlier: Vec<String>,
    now: Vec<String>,
}

impl Manifest {
    fn read(dir: &Path) -> Manifest {
        let earlier = std::fs::read_to_string(dir.join(MANIFEST))
            .map(|t| {
                t.lines()
                    .filter(|l| Manifest::ours(l))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Manifest {
            earlier,
            now: Vec::new(),
        }
    }

    /// A path elle-si writes: `<name>` or `<name>/<name>`, names of the
    /// safe characters [`file_name`] keeps, never `.` or `..` (a listed
    /// line that is not is ignored, never removed).
    fn ours(line: &str) -> bool {
        let parts: Vec<&str> = line.split('/').collect();
        parts.len() <= 2
            && parts.iter().all(|p| {
                !p.is_empty()
                    && !p.starts_with('.')
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            })
    }

    /// Writes `text` to `rel` in `dir`, and lists it.
    fn write(&mut self, dir: &Path, rel: String, text: impl AsRef<[u8]>) -> Result<(), Error> {
        write_file(&dir.join(&rel), text)?;
        self.now.push(rel);
        Ok(())
    }

    /// Removes what the earlier run wrote and this one did not (and the
    /// folders that leaves empty), then lists this run's files.
    fn finish(self, dir: &Path) -> Result<(), Error> {
        let now: std::collections::BTreeSet<&str> = self.now.iter().map(String::as_str).collect();
        let mut emptied = std::collections::BTreeSet::new();
        for rel in self.earlier.iter().filter(|r| !now.contains(r.as_str())) {
            let path = dir.join(rel);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(path.display(), e)),
            }
            if let Some((sub, _)) = rel.split_once('/') {
                emptied.insert(sub);
            }
        }
        for sub in emptied {
            // Only if empty: a folder holding anything else stays.
            let _ = std::fs::remove_dir(dir.join(sub));
        }
        let mut list = self.now.join("\n");
        list.push('\n');
        write_file(&dir.join(MANIFEST), &list)
    }
}

/// Draws picture `p` as `<stem>.dot` and `<stem>.svg` (or `.png`) in
/// `dir`: its SVG, or why it was not drawn (its DOT over
/// `:max-plot-bytes`, or drawing it over `:plot-timeout`).
fn draw(
    manifest: &mut Manifest,
    dir: &Path,
    stem: &str,
    p: &picture::Picture,
    title: &str,
    opts: &PlotOptions,
) -> Result<Result<String, String>, Error> {
    let t0 = Instant::now();
    let dot = super::dot::dot(p);
    if dot.len() > opts.max_plot_bytes {
        return Ok(Err(format!(
            "picture not drawn: its DOT is {} bytes, over :max-plot-bytes {}",
            dot.len(),
            opts.max_plot_bytes
        )));
    }
    let s = super::svg::svg(p, &format!("a-{}", file_name(stem)), title);
    if t0.elapsed() > opts.plot_timeout {
        return Ok(Err(format!(
            "picture dropped: drawing it took {:.2} ms, over :plot-timeout {} ms",
            t0.elapsed().as_secs_f64() * 1e3,
            opts.plot_timeout.as_millis()
        )));
    }
    manifest.write(dir, format!("{stem}.dot"), &dot)?;
    match opts.format {
        PlotFormat::Svg => manifest.write(dir, format!("{stem}.svg"), &s)?,
        PlotFormat::Png => {
            let rel = format!("{stem}.png");
            let png = super::svg::png(&s)
                .map_err(|e| Error::io(dir.join(&rel).display(), std::io::Error::other(e)))?;
            manifest.write(dir, rel, &png)?
        }
    }
    Ok(Ok(s))
}

/// Each requested model's verdict ([`crate::report::model_verdicts`]).
fn model_verdicts(r: &CheckResult, models: &[Model]) -> Vec<ModelVerdict> {
    crate::report::model_verdicts(r, models)
        .into_iter()
        .map(|(m, v)| ModelVerdict {
            name: m.friendly().to_string(),
            verdict: match v {
                Valid::True => "valid",
                Valid::False => "invalid",
                Valid::Unknown => "unknown",
            },
        })
        .collect()
}

/// The pattern or shape an anomaly is also known as.
fn also(a: &Anomaly) -> Option<String> {
    if let Some(p) = a.pattern {
        return Some(p.to_string());
    }
    match a.get(Field::Shape) {
        Some(crate::anomaly::Datum::Kw(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Writes the folder into `dir` (created if missing).
pub fn write_folder(
    dir: &Path,
    source: &str,
    h: &History,
    r: &CheckResult,
    models: &[Model],
    opts: &PlotOptions,
) -> Result<Written, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let mut manifest = Manifest::read(dir);
    let mut written = Written::default();
    let mut sections = Vec::new();
    // Anomalies the deadline left unexplained.
    let mut cut = 0usize;
    // The components cycles lie in, when asked for, and those drawn:
    // each one's size and why it has no picture, when it has none.
    let mut components = opts
        .scc
        .then(|| scc::Components::new(h, r.anomalies.values().flatten()));
    type Drawn = (scc::Id, (usize, Option<String>));
    let mut sccs: Vec<Drawn> = Vec::new();
    for (t, list) in &r.anomalies {
        let fname = file_name(t);
        let mut txt = String::new();
        let drawn = list.len().min(opts.max_pictures);
        if list.len() > drawn {
            let _ = writeln!(
                txt,
                ";; {} {t} anomalies, every one explained below; index.html shows (and pictures, {fname}/<n>.svg and .dot, are drawn for) the first {drawn} only, to keep the folder small.\n",
                list.len()
            );
        }
        let mut shown = Vec::new();
        let mut pictures = 0;
        // The most direct first (stable: the check's order among equals).
        let mut order: Vec<&Anomaly> = list.iter().collect();
        order.sort_by_key(|a| picture::rank(a));
        let ext = opts.format.extension();
        for (i, a) in order.into_iter().enumerate() {
            if crate::check::budget::passed(opts.deadline) {
                let _ = writeln!(
                    txt,
                    ";; the deadline came: {} more {t} anomalies not explained (-o edn lists what the check found)",
                    list.len() - i
                );
                cut += list.len() - i;
                break;
            }
            let prose = explain(h, a, "  ");
            let places: Vec<String> = a.txns.iter().map(|&x| place(h, x)).collect();
            let _ = writeln!(
                txt,
                "{t} #{i}{}{}",
                also(a).map(|s| format!(" ({s})")).unwrap_or_default(),
                if places.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", places.join(", "))
                }
            );
            txt.push_str(&prose);
            if i >= drawn {
                txt.push('\n');
                continue;
            }
            let mut svg = None;
            let mut note = None;
            if let Some(p) = picture::picture(h, a) {
                let stem = format!("{fname}/{i}");
                if pictures == 0 {
                    let sub = dir.join(&fname);
                    std::fs::create_dir_all(&sub).map_err(|e| Error::io(sub.display(), e))?;
                }
                let title = format!("{t} #{i}");
                match draw(&mut manifest, dir, &stem, &p, &title, opts)? {
                    Ok(s) => {
                        let _ = writeln!(txt, "  picture: {stem}.{ext} ({stem}.dot)");
                        svg = Some(s);
                        pictures += 1;
                    }
                    Err(n) => note = Some(n),
                }
            }
            // Its whole component, drawn once however many cycles lie in it.
            let mut component = None;
            if let Some(c) = components.as_mut()
                && let Some(id) = c.of(a)
            {
                let n = match sccs.iter().position(|(x, _)| *x == id) {
                    Some(n) => n,
                    None => {
                        let (p, size) = c.picture(id, a);
                        let n = sccs.len();
                        if n == 0 {
                            let sub = dir.join("sccs");
                            std::fs::create_dir_all(&sub)
                                .map_err(|e| Error::io(sub.display(), e))?;
                        }
                        let title = format!("component {n}: {size} transactions");
                        let drawn =
                            draw(&mut manifest, dir, &format!("sccs/{n}"), &p, &title, opts)?;
                        sccs.push((id, (size, drawn.err())));
                        n
                    }
                };
                let (size, why) = &sccs[n].1;
                let line = match why {
                    None => format!("sccs/{n}.{ext} (its {size} transactions)"),
                    Some(why) => format!("sccs/{n}, {size} transactions ({why})"),
                };
                let _ = writeln!(txt, "  component: {line}");
                component = Some((why.is_none().then(|| format!("sccs/{n}.{ext}")), line));
            }
            if let Some(n) = &note {
                let _ = writeln!(txt, "  ({n})");
                written.skipped += 1;
            }
            txt.push('\n');
            let ops = a
                .txns
                .iter()
                .map(|&x| {
                    (
                        place(h, x),
                        render::op_value_upto(h, x, OP_SHOWN).to_string(),
                    )
                })
                .collect();
            shown.push(Shown {
                number: i,
                also: also(a),
                svg,
                note,
                component,
                prose,
                ops,
            });
        }
        written.pictures += pictures;
        manifest.write(dir, format!("{fname}.txt"), &txt)?;
        sections.push(Section {
            name: t.clone(),
            count: crate::anomaly::found(list) as usize,
            listed: list.len(),
            shown,
            pictures,
        });
    }
    let page = Page {
        source: source.to_string(),
        verdict: headline(r.valid),
        models: model_verdicts(r, models),
        not: r.not.iter().cloned().collect(),
        also_not: r.also_not.iter().cloned().collect(),
        sections,
        unknown: r.unknown_reasons().iter().map(ToString::to_string).collect(),
        unconfirmed: r
            .unconfirmed
            .iter()
            .map(|(t, l)| (t.clone(), crate::anomaly::found(l)))
            .collect(),
        cut: (cut > 0).then(|| {
            format!("the deadline came while this folder was written: {cut} anomalies are not explained here")
        }),
    };
    manifest.write(dir, "index.html".to_string(), html::page(&page))?;
    manifest.finish(dir)?;
    Ok(written)
}

/// The folder of each file of a check of several, under the folder
/// asked for: its path below the directory all of them share, without
/// the file name when they all have the same one (a Jepsen store's
/// `<test>/<time>/history.edn` gives `<test>/<time>`), each part made
/// safe as a file name.
pub fn run_folders(files: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    use std::path::{Component, PathBuf};
    let full: Vec<PathBuf> = files
        .iter()
        .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()))
        .collect();
    let parts = |p: &PathBuf| -> Vec<String> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let all: Vec<Vec<String>> = full.iter().map(parts).collect();
    // The directories every file is under.
    let mut shared = all.first().map_or(0, |p| p.len().saturating_sub(1));
    for p in &all {
        let dirs = p.len().saturating_sub(1);
        shared = shared.min(dirs);
        while shared > 0 && p[..shared] != all[0][..shared] {
            shared -= 1;
        }
    }
    let same_name = all.len() > 1 && all.iter().all(|p| p.last() == all[0].last());
    all.iter()
        .map(|p| {
            let end = if same_name && p.len() > shared + 1 {
                p.len() - 1
            } else {
                p.len()
            };
            p[shared..end]
                .iter()
                .map(|c| {
                    if c == ".." {
                        "_up".to_string()
                    } else {
                        file_name(c)
                    }
                })
                .collect()
        })
        .collect()
}

/// A verdict as a page's headline says it.
fn headline(v: Valid) -> &'static str {
    match v {
        Valid::True => "VALID",
        Valid::False => "INVALID",
        Valid::Unknown => "UNKNOWN",
    }
}

/// A run's row on the page of a check of several files.
pub fn run_row(folder: &Path, source: &str, r: &CheckResult, models: &[Model]) -> html::Run {
    html::Run {
        folder: folder.to_string_lossy().replace('\\', "/"),
        source: source.to_string(),
        verdict: headline(r.valid),
        models: model_verdicts(r, models),
        anomalies: r.anomalies.values().map(|l| crate::anomaly::found(l)).sum(),
        note: None,
    }
}

/// The row of a file that could not be read, and why.
pub fn unread_row(source: &str, why: String) -> html::Run {
    html::Run {
        folder: String::new(),
        source: source.to_string(),
        verdict: "UNREAD",
        models: Vec::new(),
        anomalies: 0,
        note: Some(why),
    }
}

/// Writes the page of a check of several files, `index.html` in `dir`.
pub fn write_runs_page(dir: &Path, runs: &[html::Run]) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    write_file(&dir.join("index.html"), html::runs_page(runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_s_runs_are_named_by_test_and_time() {
        let d = std::env::temp_dir().join(format!("elle-si-runs-{}", std::process::id()));
        let f = |p: &str| d.join(p);
        let store = [
            f("store/a/1/history.edn"),
            f("store/a/2/history.edn"),
            f("store/b/3/history.edn"),
        ];
        let names: Vec<String> = run_folders(&store)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(names, ["a/1", "a/2", "b/3"]);
        let logs = [f("logs/x.edn"), f("logs/y y.edn")];
        let names: Vec<String> = run_folders(&logs)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(names, ["x.edn", "y_y.edn"]);
    }

    #[test]
    fn formats_elle_si_cannot_draw_are_refused_by_name() {
        assert_eq!(PlotFormat::parse(":svg"), Ok(PlotFormat::Svg));
        assert_eq!(PlotFormat::parse("png"), Ok(PlotFormat::Png));
        let e = PlotFormat::parse(":pdf").expect_err("pdf is not drawn");
        assert!(e.contains(":pdf"), "{e}");
    }
}
