//! `index.html` of the elle/ folder: one self-contained page (inline CSS and
//! SVG, nothing fetched, no script) that says what failed and why: the
//! verdict per model checked, Elle's `:not` / `:also-not`, a table of
//! anomaly types with counts, then each drawn anomaly with its picture, its
//! prose and its ops with their file lines. The folder writer
//! ([`super::folder`]) gathers what is shown; this only lays it out.

use std::fmt::Write;

use super::picture::EdgeKind;
use super::svg::escape;

/// One model's verdict.
pub struct ModelVerdict {
    /// The model's name.
    pub name: String,
    /// `valid`, `invalid` or `unknown`.
    pub verdict: &'static str,
}

/// One anomaly as shown.
pub struct Shown {
    /// Its number within its type.
    pub number: usize,
    /// The C4 pattern or everyday shape, when one applies.
    pub also: Option<String>,
    /// Its picture, as inline SVG.
    pub svg: Option<String>,
    /// Why there is no picture, when there is none for a reason.
    pub note: Option<String>,
    /// The picture of the whole component its cycle lies in, when asked
    /// for: its path in the folder (None: not drawn) and what to say.
    pub component: Option<(Option<String>, String)>,
    /// Its explanation in words.
    pub prose: String,
    /// Each transaction's place in the file and its op, in EDN.
    pub ops: Vec<(String, String)>,
}

/// One anomaly type.
pub struct Section {
    /// The anomaly type's name.
    pub name: String,
    /// How many anomalies of the type (those counted in an `:also` too).
    pub count: usize,
    /// How many are listed (and explained in the type's text file).
    pub listed: usize,
    /// Those shown.
    pub shown: Vec<Shown>,
    /// Pictures drawn for the type.
    pub pictures: usize,
}

/// The folder's index page.
pub struct Page {
    /// The history's file name.
    pub source: String,
    /// `VALID`, `INVALID` or `UNKNOWN`.
    pub verdict: &'static str,
    /// Each model's verdict.
    pub models: Vec<ModelVerdict>,
    /// Elle's `:not`.
    pub not: Vec<String>,
    /// Elle's `:also-not`.
    pub also_not: Vec<String>,
    /// One section per anomaly type.
    pub sections: Vec<Section>,
    /// Why the verdict, or a model's, is unknown (each a sentence).
    pub unknown: Vec<String>,
    /// Violations resting on a guess not settled: (type, how many).
    pub unconfirmed: Vec<(String, u64)>,
    /// What the folder left out, when the deadline came while it was
    /// written.
    pub cut: Option<String>,
}

const CSS: &str = r#"
:root { --ink:#1f2933; --muted:#5b6675; --line:#e3e8ef; --bg:#f5f7fa; --card:#ffffff;
  --bad:#b42318; --bad-bg:#fef3f2; --good:#067647; --good-bg:#ecfdf3; --unk:#b54708; --unk-bg:#fffaeb; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 15px/1.5 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 28px 32px 64px; }
h1 { font-size: 22px; margin: 0 0 4px; font-weight: 650; word-break: break-all; }
h2 { font-size: 19px; margin: 40px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 10px; }
.sub { color: var(--muted); margin: 0 0 20px; }
.verdict { display:inline-block; font-weight:700; letter-spacing:.04em; padding:4px 12px; border-radius:6px; font-size:14px; }
.v-invalid { color:var(--bad); background:var(--bad-bg); border:1px solid #fecdca; }
.v-valid { color:var(--good); background:var(--good-bg); border:1px solid #abefc6; }
.v-unknown { color:var(--unk); background:var(--unk-bg); border:1px solid #fedf89; }
.summary { display:grid; grid-template-columns: max-content 1fr; gap: 8px 18px; align-items: baseline;
  background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 20px; }
.summary dt { color: var(--muted); font-weight: 600; }
.summary dd { margin: 0; }
.chip { display:inline-block; font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  padding: 1px 8px; margin: 2px 4px 2px 0; border-radius: 999px; background:#eef2f6; }
.chip.v-invalid, .chip.v-valid, .chip.v-unknown { font-weight: 600; }
table.types { border-collapse: collapse; background:var(--card); border:1px solid var(--line); border-radius:10px; overflow:hidden; min-width: 420px; }
table.types th, table.types td { text-align:left; padding: 7px 16px; border-bottom: 1px solid var(--line); }
table.types th { background:#eef2f6; font-size: 13px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
table.types td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.types a { color: #1849a9; text-decoration: none; font-family: ui-monospace, monospace; }
.legend { display:flex; flex-wrap:wrap; gap: 6px 18px; margin: 14px 0 0; color: var(--muted); font-size: 13px; }
.legend span b { display:inline-block; width: 22px; height: 3px; vertical-align: middle; margin-right: 6px; border-radius: 2px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding: 18px 20px; margin: 0 0 18px;
  box-shadow: 0 1px 2px rgba(16,24,40,.04); }
.card .also { font-weight: 500; color: var(--muted); margin-left: 8px; }
.body { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.words { flex: 1 1 460px; min-width: 0; }
.pic { flex: 0 1 auto; max-width: 100%; overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; background: #fff; }
.pic svg { display:block; }
.note { color: var(--unk); font-size: 13px; margin: 0 0 10px; }
pre { margin: 0 0 12px; padding: 12px 14px; background: #f8fafc; border: 1px solid var(--line); border-radius: 8px;
  font: 12.5px/1.55 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word; }
table.ops { border-collapse: collapse; width: 100%; font-size: 12.5px; }
table.ops td { padding: 4px 10px 4px 0; vertical-align: top; border-top: 1px solid var(--line); }
table.ops td.at { white-space: nowrap; color: var(--muted); width: 1%; }
table.ops td code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; word-break: break-word; }
.more { color: var(--muted); font-style: italic; }
footer { margin-top: 48px; color: var(--muted); font-size: 12px; }
"#;

fn verdict_class(v: &str) -> &'static str {
    match v {
        "VALID" | "valid" => "v-valid",
        "INVALID" | "invalid" => "v-invalid",
        _ => "v-unknown",
    }
}

fn chips(o: &mut String, names: &[String]) {
    if names.is_empty() {
        o.push_str("<span class=\"more\">none</span>");
    }
    for n in names {
        let _ = write!(o, "<span class=\"chip\">:{}</span>", escape(n));
    }
}

/// Each model's verdict, a chip each.
fn model_chips(o: &mut String, models: &[ModelVerdict]) {
    for m in models {
        let _ = write!(
            o,
            "<span class=\"chip {}\">:{} — {}</span>",
            verdict_class(m.verdict),
            escape(&m.name),
            m.verdict
        );
    }
}

/// An anchor id from an anomaly type name.
fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The index page as HTML.
pub fn page(p: &Page) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{} — {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n",
        escape(&p.source),
        p.verdict
    );
    let _ = write!(
        o,
        "<h1>{}</h1>\n<p class=\"sub\">elle-si consistency check &nbsp; <span class=\"verdict {}\">{}</span></p>\n",
        escape(&p.source),
        verdict_class(p.verdict),
        p.verdict
    );
    for u in &p.unknown {
        let _ = writeln!(o, "<p class=\"note\">unknown: {}</p>", escape(u));
    }
    if let Some(c) = &p.cut {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", escape(c));
    }
    o.push_str("<dl class=\"summary\">\n<dt>models checked</dt><dd>");
    model_chips(&mut o, &p.models);
    o.push_str("</dd>\n<dt>not</dt><dd>");
    chips(&mut o, &p.not);
    o.push_str("</dd>\n<dt>also not</dt><dd>");
    chips(&mut o, &p.also_not);
    let total: usize = p.sections.iter().map(|s| s.count).sum();
    let _ = write!(o, "</dd>\n<dt>anomalies</dt><dd>{total}</dd>\n");
    if !p.unconfirmed.is_empty() {
        o.push_str("<dt>unconfirmed</dt><dd>");
        for (t, n) in &p.unconfirmed {
            let _ = write!(o, "<span class=\"chip\">:{} — {n}</span>", escape(t));
        }
        o.push_str(" (each rests on a guessed writer of a duplicated value)</dd>\n");
    }
    o.push_str("</dl>\n");
    if p.sections.is_empty() {
        o.push_str("<p>No anomaly was found.</p>\n");
    } else {
        o.push_str("<h2>Anomaly types</h2>\n<table class=\"types\">\n<tr><th>type</th><th>count</th><th>pictures</th></tr>\n");
        for s in &p.sections {
            let _ = writeln!(
                o,
                "<tr><td><a href=\"#{}\">{}</a></td><td class=\"n count\">{}</td><td class=\"n\">{}</td></tr>",
                anchor(&s.name),
                escape(&s.name),
                s.count,
                s.pictures
            );
        }
        o.push_str("</table>\n<div class=\"legend\">");
        for k in EdgeKind::ALL {
            let _ = write!(
                o,
                "<span><b style=\"background:{}\"></b><strong style=\"color:{}\">{}</strong> {}</span>",
                k.color(),
                k.color(),
                k.name(),
                k.meaning()
            );
        }
        o.push_str("<span><b style=\"background:repeating-linear-gradient(90deg,#5b6675 0 6px,transparent 6px 10px)\"></b>dashed: inferred, not in the history</span></div>\n");
    }
    for s in &p.sections {
        let _ = writeln!(
            o,
            "<h2 id=\"{}\">{} <span class=\"more\">({} found)</span></h2>",
            anchor(&s.name),
            escape(&s.name),
            s.count
        );
        for a in &s.shown {
            let _ = write!(
                o,
                "<section class=\"card anomaly\">\n<h3>{} #{}",
                escape(&s.name),
                a.number
            );
            if let Some(also) = &a.also {
                let _ = write!(o, "<span class=\"also\">{}</span>", escape(also));
            }
            o.push_str("</h3>\n");
            o.push_str("<div class=\"body\">\n");
            if let Some(svg) = &a.svg {
                let _ = writeln!(o, "<div class=\"pic\">{svg}</div>");
            }
            o.push_str("<div class=\"words\">\n");
            if let Some(note) = &a.note {
                let _ = writeln!(o, "<p class=\"note\">{}</p>", escape(note));
            }
            match &a.component {
                Some((Some(href), text)) => {
                    let _ = writeln!(
                        o,
                        "<p>Its whole component: <a href=\"{}\">{}</a></p>",
                        escape(href),
                        escape(text)
                    );
                }
                Some((None, text)) => {
                    let _ = writeln!(
                        o,
                        "<p class=\"note\">Its whole component: {}</p>",
                        escape(text)
                    );
                }
                None => {}
            }
            let _ = writeln!(o, "<pre>{}</pre>", escape(a.prose.trim_end()));
            if !a.ops.is_empty() {
                o.push_str("<table class=\"ops\">\n");
                for (at, op) in &a.ops {
                    let _ = writeln!(
                        o,
                        "<tr><td class=\"at\">{}</td><td><code>{}</code></td></tr>",
                        escape(at),
                        escape(op)
                    );
                }
                o.push_str("</table>\n");
            }
            o.push_str("</div>\n</div>\n</section>\n");
        }
        if s.count > s.shown.len() {
            let counted = if s.count > s.listed {
                format!("; {} more were found and only counted", s.count - s.listed)
            } else {
                String::new()
            };
            let _ = writeln!(
                o,
                "<p class=\"more\">... and {} more {} anomalies: every one listed is explained in <a href=\"{}.txt\">{}.txt</a>{}.</p>",
                s.count - s.shown.len(),
                escape(&s.name),
                escape(&s.name),
                escape(&s.name),
                escape(&counted)
            );
        }
    }
    o.push_str("<footer>Written by elle-si. Pictures: one box per transaction (its line in the history file, :index, process, status and micro-ops), one arrow per dependency; the same pictures as Graphviz DOT and SVG files beside this page.</footer>\n</main>\n</body>\n</html>\n");
    o
}

/// One run on the page of a check of several files.
pub struct Run {
    /// Its folder, relative to the page.
    pub folder: String,
    /// The history's file.
    pub source: String,
    /// `VALID`, `INVALID` or `UNKNOWN`, or `UNREAD` for a file that could
    /// not be read.
    pub verdict: &'static str,
    /// Each model's verdict.
    pub models: Vec<ModelVerdict>,
    /// How many anomalies were found.
    pub anomalies: u64,
    /// Why it could not be read, or what else is to be said of it.
    pub note: Option<String>,
}

/// The page of a check of several files (a Jepsen store's runs): one row
/// per run, in the order checked, with its verdict per model, linking its
/// own folder's page.
pub fn runs_page(runs: &[Run]) -> String {
    let mut o = String::with_capacity(4096 + 512 * runs.len());
    let bad = runs.iter().filter(|r| r.verdict != "VALID").count();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>elle-si: {} runs, {bad} not valid</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n<h1>{} runs checked</h1>\n<p class=\"sub\">elle-si consistency check &nbsp; {bad} not valid</p>\n",
        runs.len(),
        runs.len()
    );
    o.push_str("<table class=\"types\">\n<tr><th>run</th><th>verdict</th><th>models</th><th>anomalies</th></tr>\n");
    for r in runs {
        let name = if r.verdict == "UNREAD" {
            escape(&r.source)
        } else {
            format!(
                "<a href=\"{}/index.html\">{}</a>",
                escape(&r.folder),
                escape(&r.source)
            )
        };
        let _ = write!(
            o,
            "<tr><td>{name}</td><td><span class=\"verdict {}\">{}</span></td><td>",
            verdict_class(r.verdict),
            r.verdict
        );
        model_chips(&mut o, &r.models);
        if let Some(n) = &r.note {
            let _ = write!(o, "<span class=\"note\">{}</span>", escape(n));
        }
        let _ = writeln!(o, "</td><td class=\"n\">{}</td></tr>", r.anomalies);
    }
    o.push_str("</table>\n<footer>Written by elle-si: each run's own page explains what it found.</footer>\n</main>\n</body>\n</html>\n");
    o
}
