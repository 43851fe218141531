//! Elle's elle/ folder as a person meets it: the prose files, the pictures
//! (every SVG well-formed XML, every DOT accepted by Graphviz when it is
//! installed), the plot options honoured or refused, and index.html as
//! headless Chromium renders it (when Chromium is installed).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use elle_si::report::folder::{PlotOptions, write_folder};
use elle_si::report::{CheckResult, Valid};

use crate::support;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-viz-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temporary directory");
    d
}

const LONG_FORK: &str = "test-logs/la-long-fork.edn";

fn long_fork() -> (elle_si::history::Loaded, CheckResult) {
    let l = support::load(&support::root().join(LONG_FORK));
    let r = support::check_models(&l, "serializable");
    assert_eq!(r.valid, Valid::False);
    (l, r)
}

/// The long fork's folder at serializable, written into `d`.
fn long_fork_folder(
    d: &Path,
    l: &elle_si::history::Loaded,
    r: &CheckResult,
    opts: &PlotOptions,
) -> elle_si::report::folder::Written {
    write_folder(
        d,
        LONG_FORK,
        &l.history,
        r,
        &[elle_si::spec::Model::Serializable],
        opts,
    )
    .expect("written")
}

/// Every file under `dir` whose extension is `ext` (every file for ""),
/// sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p, ext));
        } else if ext.is_empty() || p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every SVG parses as XML (roxmltree: a small, dependency-free parser)
/// with an `<svg>` root holding one box per transaction.
fn assert_svgs_parse(dir: &Path) -> usize {
    let svgs = files(dir, "svg");
    for p in &svgs {
        let text = std::fs::read_to_string(p).expect("readable");
        let doc = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{}: not XML: {e}", p.display()));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let boxes = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("txn"))
            .count();
        assert!(boxes >= 1, "{}: no transaction box", p.display());
    }
    svgs.len()
}

/// Every DOT file is accepted by Graphviz's `dot`, when it is installed.
fn assert_dots_render(dir: &Path) {
    let dots = files(dir, "dot");
    if Command::new("dot").arg("-V").output().is_err() {
        eprintln!("SKIPPED: Graphviz `dot` is not installed: the DOT files are not checked");
        return;
    }
    for p in &dots {
        let out = Command::new("dot")
            .arg("-Tsvg")
            .arg(p)
            .output()
            .expect("dot runs");
        assert!(
            out.status.success(),
            "{}: dot refused it: {}",
            p.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_folder_holds_prose_and_a_picture_per_cycle() {
    let (l, r) = long_fork();
    let d = temp_dir("long-fork");
    let w = long_fork_folder(&d, &l, &r, &PlotOptions::default());
    let total: usize = r.anomalies.values().map(Vec::len).sum();
    assert_eq!(w.pictures, total, "every cycle is drawn");
    for (t, list) in &r.anomalies {
        let txt = std::fs::read_to_string(d.join(format!("{t}.txt"))).expect("the type's .txt");
        assert_eq!(
            txt.matches("a cycle: no order").count(),
            list.len(),
            "{txt}"
        );
        for i in 0..list.len() {
            assert!(d.join(t).join(format!("{i}.svg")).is_file());
            assert!(d.join(t).join(format!("{i}.dot")).is_file());
        }
    }
    assert_eq!(assert_svgs_parse(&d), total);
    assert_dots_render(&d);
    let html = std::fs::read_to_string(d.join("index.html")).expect("index.html");
    assert!(!html.contains("<script"), "no script");
    // Nothing fetched: no linked stylesheet, image, font or import.
    for fetch in ["<link", "src=", "@import", "url(http"] {
        assert!(!html.contains(fetch), "index.html fetches: {fetch}");
    }
    assert_eq!(html.matches("<svg").count(), total);
}

#[test]
fn pictures_are_capped_per_type_and_the_file_says_so() {
    let (l, r) = long_fork();
    let d = temp_dir("cap");
    let opts = PlotOptions {
        max_pictures: 1,
        ..PlotOptions::default()
    };
    long_fork_folder(&d, &l, &r, &opts);
    for (t, list) in &r.anomalies {
        assert!(d.join(t).join("0.svg").is_file());
        assert!(!d.join(t).join("1.svg").exists());
        let txt = std::fs::read_to_string(d.join(format!("{t}.txt"))).expect("the .txt");
        if list.len() > 1 {
            assert!(txt.contains("the first 1 only"), "{txt}");
        }
        // Every anomaly is still explained.
        assert_eq!(txt.matches("a cycle: no order").count(), list.len());
    }
}

#[test]
fn max_plot_bytes_and_plot_timeout_are_honoured() {
    let (l, r) = long_fork();
    let d = temp_dir("bytes");
    let opts = PlotOptions {
        max_plot_bytes: 10,
        ..PlotOptions::default()
    };
    let w = long_fork_folder(&d, &l, &r, &opts);
    assert_eq!(w.pictures, 0);
    assert!(files(&d, "svg").is_empty());
    let txt: String = files(&d, "txt")
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("readable"))
        .collect();
    assert!(txt.contains("over :max-plot-bytes 10"), "{txt}");

    let d = temp_dir("timeout");
    let opts = PlotOptions {
        plot_timeout: Duration::ZERO,
        ..PlotOptions::default()
    };
    let w = long_fork_folder(&d, &l, &r, &opts);
    assert_eq!(w.pictures, 0);
    assert!(w.skipped > 0);
}

fn elle_si(args: &[&str]) -> (i32, String, String) {
    let out = crate::support::cli()
        .args(args)
        .output()
        .expect("elle-si runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_writes_the_folder_and_refuses_a_format_it_cannot_draw() {
    let d = temp_dir("cli");
    let dir = d.join("elle");
    let ds = dir.to_string_lossy().to_string();
    // elle-cli's spelling: -m names the workload, -s is in milliseconds.
    let (code, out, err) = elle_si(&[
        "check",
        "-m",
        "list-append",
        "-c",
        "serializable",
        "-s",
        "60000",
        "-d",
        &ds,
        "-p",
        "svg",
        LONG_FORK,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(dir.join("index.html").is_file());
    assert!(dir.join("G-nonadjacent-item.txt").is_file());
    let (code, _, err) = elle_si(&["check", "-d", &ds, "-p", "pdf", LONG_FORK]);
    assert_eq!(code, 3);
    assert!(err.contains(":pdf"), "{err}");
}

/// The `width` and `height` of an SVG's root.
fn svg_size(path: &Path) -> (f32, f32) {
    let text = std::fs::read_to_string(path).expect("readable");
    let doc = roxmltree::Document::parse(&text).expect("XML");
    let num = |a: &str| {
        doc.root_element()
            .attribute(a)
            .and_then(|v| v.parse::<f32>().ok())
            .unwrap_or_else(|| panic!("{}: no {a}", path.display()))
    };
    (num("width"), num("height"))
}

#[test]
fn png_pictures_are_the_svg_rasterized_at_twice_its_size() {
    let d = temp_dir("png");
    let (svg_dir, png_dir) = (d.join("svg"), d.join("png"));
    for (dir, format) in [(&svg_dir, "svg"), (&png_dir, "png")] {
        let ds = dir.to_string_lossy().to_string();
        let (code, out, err) = elle_si(&[
            "check",
            "-c",
            "serializable",
            "-d",
            &ds,
            "-p",
            format,
            LONG_FORK,
        ]);
        assert_eq!(code, 1, "{out}{err}");
    }
    let svgs = files(&svg_dir, "svg");
    let pngs = files(&png_dir, "png");
    assert!(!svgs.is_empty());
    assert_eq!(svgs.len(), pngs.len(), "one PNG per picture");
    assert!(
        files(&png_dir, "svg").is_empty(),
        "no SVG files beside the PNGs"
    );
    for (svg, png) in svgs.iter().zip(&pngs) {
        let bytes = std::fs::read(png).expect("a PNG");
        let pixmap = resvg::tiny_skia::Pixmap::decode_png(&bytes)
            .unwrap_or_else(|e| panic!("{}: not a PNG: {e}", png.display()));
        let (w, h) = svg_size(svg);
        let scale = elle_si::report::svg::PNG_SCALE;
        assert_eq!(
            (pixmap.width(), pixmap.height()),
            ((w * scale).round() as u32, (h * scale).round() as u32),
            "{}",
            png.display()
        );
        // Drawn, not blank: ink on the white ground (boxes, arrows, text).
        let inked = pixmap
            .pixels()
            .iter()
            .filter(|p| p.red() < 128 || p.green() < 128 || p.blue() < 128)
            .count();
        assert!(inked > 500, "{}: {inked} dark pixels", png.display());
    }
}

/// A list of transactions as a Jepsen log, each `(process, micro-ops)`
/// padded by ten writes of keys nobody else touches, seven before and three
/// after, so that every box has more micro-ops than it shows.
fn padded(txns: &[(u32, &str)]) -> String {
    let mut out = String::new();
    for (i, (p, mops)) in txns.iter().enumerate() {
        let fill: Vec<String> = (0..10)
            .map(|j| format!("[:w {} 1]", 1000 + 20 * i + j))
            .collect();
        out.push_str(&format!(
            "{{:type :ok, :process {p}, :index {}, :value [{} {mops} {}]}}\n",
            2 * i + 1,
            fill[..7].join(" "),
            fill[7..].join(" ")
        ));
    }
    out
}

/// Each picture kind: its name, its history, the model it violates, and
/// the anomaly type drawn.
fn picture_kinds() -> Vec<(&'static str, String, &'static str, &'static str)> {
    let lost = padded(&[
        (0, "[:w 1 4]"),
        (1, "[:r 1 4] [:w 1 5]"),
        (2, "[:r 1 4] [:w 1 10]"),
    ]);
    vec![
        ("cycle", lost.clone(), "serializable", "G2-item"),
        (
            "causal pattern",
            // Process 1 read 2, then the older 1: process 0 wrote both.
            padded(&[
                (0, "[:w 1 1]"),
                (0, "[:w 1 2]"),
                (1, "[:r 1 2]"),
                (1, "[:r 1 1]"),
            ]),
            "causal-cerone",
            "conflict-process",
        ),
        ("lost update", lost, "serializable", "lost-update"),
        (
            "internal",
            padded(&[(0, "[:w 1 1] [:r 1 2]"), (1, "[:w 1 2]")]),
            "serializable",
            "internal",
        ),
    ]
}

/// The micro-ops an anomaly's edges rest on, found from the anomaly alone
/// (its `:steps`' Elle mop indices, its `:mop`, the writes of its key), as
/// Elle writes them.
fn cited_mops(h: &elle_si::history::model::History, a: &elle_si::anomaly::Anomaly) -> Vec<String> {
    use elle_si::anomaly::{Datum, Field};
    use elle_si::edn::Value;
    use elle_si::report::render::mop_value_upto;
    let text = |m: usize| mop_value_upto(h, m as u32, 6).to_string();
    let of_txn = |t: u32| h.txns[t as usize].mops();
    let get = |m: &[(Value, Value)], k: &str| {
        m.iter()
            .find(|(x, _)| *x == Value::Keyword(k.into()))
            .map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    if let Some(c) = &a.cycle {
        let Value::Map(m) = elle_si::report::render::anomaly_value(h, a) else {
            panic!("a map")
        };
        let Some(Value::Vector(steps)) = get(&m, "steps") else {
            panic!("steps")
        };
        for (i, s) in steps.iter().enumerate() {
            let Value::Map(s) = s else {
                panic!("a step map")
            };
            for (k, t) in [("a-mop-index", c.txns[i]), ("b-mop-index", c.txns[i + 1])] {
                if let Some(Value::Int(j)) = get(s, k) {
                    out.push(text(of_txn(t).start + j as usize));
                }
            }
        }
    }
    let key_mops = |t: u32, k: u32| -> Vec<String> {
        of_txn(t)
            .filter(|&m| h.mops[m].key == k)
            .map(text)
            .collect()
    };
    match (a.name(), a.get(Field::Mop), a.get(Field::Key)) {
        ("lost-update", _, Some(Datum::Key(k))) => {
            for &t in &a.txns {
                out.extend(key_mops(t, *k));
            }
        }
        ("internal", Some(Datum::Mop(m)), _) => {
            // The read, and the write before it that it contradicts.
            out.extend(key_mops(h.mops[*m as usize].txn, h.mops[*m as usize].key));
        }
        (_, Some(Datum::Mop(m)), _) => {
            out.push(text(*m as usize));
            if let Some(Datum::Txn(w)) = a.get(Field::Writer) {
                let read = h.mops[*m as usize];
                out.extend(
                    of_txn(*w)
                        .filter(|&x| h.mops[x].key == read.key && h.mops[x].val == read.val)
                        .map(text),
                );
            }
        }
        _ => {}
    }
    assert!(!out.is_empty(), "{}: no micro-op cited", a.name());
    out
}

/// The texts of an SVG's highlighted micro-op rows.
fn cited_in_svg(text: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(text).expect("XML");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some("mop cited"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect()
}

#[test]
fn every_picture_kind_shows_each_micro_op_its_edges_rest_on() {
    let chromium = chromium();
    if chromium.is_none() {
        eprintln!(
            "SKIPPED (in part): Chromium is not installed (apt-get install -y chromium): the pages are not rendered"
        );
    }
    for (n, (kind, log, model, name)) in picture_kinds().into_iter().enumerate() {
        let l = support::load_str("kinds.edn", &log);
        let r = support::check_models(&l, model);
        let Some(list) = r.anomalies.get(name) else {
            panic!("{kind}: no {name} at {model}: {:?}", r.anomalies.keys())
        };
        let d = temp_dir(&format!("kind-{n}"));
        let models = [elle_si::spec::Model::parse(model).expect("a model")];
        write_folder(
            &d,
            "kinds.edn",
            &l.history,
            &r,
            &models,
            &PlotOptions::default(),
        )
        .expect("written");
        // The folder's order: the most direct first.
        let mut order: Vec<_> = list.iter().collect();
        order.sort_by_key(|a| elle_si::report::picture::rank(a));
        let mut wanted = Vec::new();
        for (i, a) in order.into_iter().enumerate() {
            let svg = std::fs::read_to_string(d.join(name).join(format!("{i}.svg")))
                .unwrap_or_else(|e| panic!("{kind}: {name}/{i}.svg: {e}"));
            let shown = cited_in_svg(&svg);
            for m in cited_mops(&l.history, a) {
                assert!(
                    shown.contains(&m),
                    "{kind}: {m} not highlighted in {shown:?}\n{svg}"
                );
                wanted.push(m);
            }
            assert!(!svg.contains("more micro-ops"), "{kind}: {svg}");
            // Each dependency's label says its key and values.
            let p = elle_si::report::picture::picture(&l.history, a).expect("a picture");
            use elle_si::report::picture::EdgeKind;
            for e in p.edges.iter().filter(|e| {
                matches!(
                    e.kind,
                    EdgeKind::Ww | EdgeKind::Wr | EdgeKind::Rw | EdgeKind::Internal
                )
            }) {
                assert!(
                    e.from_row.is_some() || p.nodes[e.from].status == "init",
                    "{kind}: {e:?}"
                );
                assert!(e.to_row.is_some(), "{kind}: {e:?}");
                assert!(e.label.starts_with("key 1: "), "{kind}: {e:?}");
                assert!(e.label.chars().any(|c| c.is_ascii_digit()), "{kind}: {e:?}");
            }
        }
        // As the browser reads the page: every cited micro-op is there,
        // highlighted.
        if let Some(bin) = &chromium {
            let out = run_chromium(
                bin,
                &d.join("profile"),
                &["--dump-dom".into()],
                &d.join("index.html"),
            );
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let dom = String::from_utf8_lossy(&out.stdout);
            let in_dom = cited_in_svg_dom(&dom);
            for m in &wanted {
                assert!(in_dom.contains(m), "{kind}: {m} not in the rendered page");
            }
        }
    }
}

/// The texts of the highlighted micro-op rows in a page's DOM as Chromium
/// dumps it (HTML, not XML: found by their class).
fn cited_in_svg_dom(dom: &str) -> Vec<String> {
    dom.split("class=\"mop cited\"")
        .skip(1)
        .filter_map(|rest| {
            let start = rest.find('>')? + 1;
            let end = rest[start..].find('<')? + start;
            Some(rest[start..end].to_string())
        })
        .collect()
}

#[test]
fn causal_patterns_are_drawn_as_their_transactions_and_edges() {
    let p = support::shared("tap-cases/list-append/tap-m.edn");
    if !p.exists() {
        eprintln!("SKIPPED: {} is absent", p.display());
        return;
    }
    let l = support::load(&p);
    let r = support::check_models(&l, "causal-cerone");
    let a = r
        .anomalies
        .values()
        .flatten()
        .find(|a| a.pattern.is_some())
        .expect("a C4 pattern");
    let pic = elle_si::report::picture::picture(&l.history, a).expect("a picture");
    // Writer, overwriter and reader at least; the read and the
    // anti-dependency it implies among the edges, the latter derived.
    assert!(pic.nodes.len() >= 3, "{pic:?}");
    use elle_si::report::picture::EdgeKind;
    assert!(pic.edges.iter().any(|e| e.kind == EdgeKind::Wr));
    assert!(
        pic.edges
            .iter()
            .any(|e| e.kind == EdgeKind::Rw && e.grounds == elle_si::anomaly::Grounds::Inferred)
    );
    let d = temp_dir("causal");
    write_folder(
        &d,
        "tap-m",
        &l.history,
        &r,
        &[elle_si::spec::Model::CausalCerone],
        &PlotOptions::default(),
    )
    .expect("written");
    assert!(assert_svgs_parse(&d) >= 1);
    assert_dots_render(&d);
}

fn chromium() -> Option<String> {
    if let Ok(c) = std::env::var("CHROMIUM") {
        return Some(c);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

fn run_chromium(bin: &str, profile: &Path, extra: &[String], page: &Path) -> std::process::Output {
    Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

#[test]
fn index_html_renders_in_a_real_browser() {
    let Some(bin) = chromium() else {
        eprintln!(
            "SKIPPED: Chromium is not installed (apt-get install -y chromium): index.html is not rendered"
        );
        return;
    };
    let (l, r) = long_fork();
    let d = temp_dir("browser");
    let w = long_fork_folder(&d, &l, &r, &PlotOptions::default());
    let page = d.join("index.html");
    let out = run_chromium(&bin, &d.join("profile-dom"), &["--dump-dom".into()], &page);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One drawn picture per anomaly, as the browser parsed the page.
    assert_eq!(dom.matches("<svg").count(), w.pictures, "{dom}");
    for (t, list) in &r.anomalies {
        let row = format!("{t}</a></td><td class=\"n count\">{}</td>", list.len());
        assert!(dom.contains(&row), "no count row {row}");
    }
    assert!(dom.contains("INVALID"));

    let png = d.join("page.png");
    let out = run_chromium(
        &bin,
        &d.join("profile-shot"),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,2000".into(),
        ],
        &page,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let height = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    assert_eq!((width, height), (1280, 2000));
    // A blank page compresses to a few kB; boxes, arrows and text do not.
    assert!(bytes.len() > 40_000, "{} bytes", bytes.len());
}

#[test]
fn instances_counted_past_the_bound_are_counted_in_text_and_folder() {
    // One writer session, 1,200 readers that saw its second write and
    // missed its first: 1,200 instances of one name, 1,000 built.
    let d = temp_dir("counted");
    let hist = d.join("readers.hist");
    let mut text = String::from("[x:=1]\n[y:=1]\n");
    for _ in 0..1200 {
        text.push_str("---\n[y==1 x==?]\n");
    }
    std::fs::write(&hist, text).unwrap();
    let dir = d.join("elle");
    let (code, out, err) = elle_si(&[
        "check",
        "-c",
        "tcc",
        "-d",
        &dir.to_string_lossy(),
        &hist.to_string_lossy(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("conflict-process: 1200"), "{out}");
    assert!(
        out.contains("-o edn lists 1000; the other 200 are counted in :also"),
        "{out}"
    );
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(index.contains("200 more were found and only counted"));
}

#[test]
fn a_write_order_no_read_fixes_is_marked_assumed_wherever_it_is_shown() {
    // A lost update on a register: both read 4 and write key 0; no read
    // orders their writes, and either order closes a cycle.
    let text = "w(0,4,0,0)\nr(0,4,0,1)\nw(0,5,0,1)\nr(0,4,1,2)\nw(0,10,1,2)\n";
    let d = temp_dir("assumed");
    let f = d.join("lost.txt");
    std::fs::write(&f, text).expect("write history");
    let l = support::load(&f);
    let r = support::check_models(&l, "snapshot-isolation");
    assert_eq!(r.valid, Valid::False, "{:?}", r.anomaly_types);
    use elle_si::anomaly::Grounds;
    let a = r
        .anomalies
        .values()
        .flatten()
        .find(|a| a.cycle.is_some())
        .expect("a cycle");
    let steps = &a.cycle.as_ref().expect("a cycle").steps;
    // The write-write step is the assumption; the read's step is seen.
    let grounds: Vec<Grounds> = steps.iter().map(|s| s.grounds).collect();
    assert!(grounds.contains(&Grounds::Assumed), "{steps:?}");
    assert!(grounds.contains(&Grounds::Observed), "{steps:?}");
    // In the EDN, the text and the picture alike.
    let edn = elle_si::report::render::result_value(&l.history, &r).to_string();
    assert!(edn.contains(":assumed? true"), "{edn}");
    let told = elle_si::explain::text::explain(&l.history, a, "");
    assert!(told.contains("[assumed]"), "{told}");
    let pic = elle_si::report::picture::picture(&l.history, a).expect("a picture");
    assert!(
        pic.edges.iter().any(|e| e.grounds == Grounds::Assumed),
        "{pic:?}"
    );
    let dot = elle_si::report::dot::dot(&pic);
    assert!(
        dot.contains("(assumed)") && dot.contains("style=dashed"),
        "{dot}"
    );
}

#[test]
fn the_edn_and_json_written_one_anomaly_at_a_time_are_the_result_map() {
    // `check -o edn` and `-o json` write the map as they render each
    // anomaly; each must read as the whole value's text, for a violation,
    // an undecided and a valid history alike.
    use elle_si::report::render::{Bounds, Syntax, json, result_value, write_result};
    let (l, r) = long_fork();
    let d = temp_dir("streamed");
    let f = d.join("lost.txt");
    std::fs::write(
        &f,
        "w(0,4,0,0)\nr(0,4,0,1)\nw(0,5,0,1)\nr(0,4,1,2)\nw(0,10,1,2)\n",
    )
    .expect("write history");
    let lost = support::load(&f);
    let lost_r = support::check_models(&lost, "snapshot-isolation");
    let valid_r = support::check_models(&lost, "read-committed");
    assert_eq!(valid_r.valid, Valid::True, "{:?}", valid_r.anomaly_types);
    let written = |h: &elle_si::history::Loaded, r, syntax| {
        let mut out = Vec::new();
        write_result(&mut out, &h.history, r, syntax, &Bounds::NONE).expect("written");
        String::from_utf8(out).expect("utf-8")
    };
    for (h, r) in [(&l, &r), (&lost, &lost_r), (&lost, &valid_r)] {
        let whole = result_value(&h.history, r);
        assert_eq!(written(h, r, Syntax::Edn), whole.to_string());
        assert_eq!(
            written(h, r, Syntax::Json { file: None }),
            json(&whole).to_string()
        );
        let mut named = json(&whole);
        if let serde_json::Value::Object(m) = &mut named {
            m.insert("file".into(), "a/history.edn".into());
        }
        let file = Some("a/history.edn");
        assert_eq!(written(h, r, Syntax::Json { file }), named.to_string());
    }
    assert!(!r.anomalies.is_empty() && !lost_r.anomalies.is_empty());
}

#[test]
fn a_folder_written_again_holds_this_run_s_files_and_the_user_s() {
    let d = temp_dir("again");
    let dir = d.join("elle");
    let ds = dir.to_string_lossy().to_string();
    std::fs::create_dir_all(dir.join("G2-item")).expect("a folder");
    // The user's own files, one named as elle-si names its pictures
    // (beyond the 12 it draws): kept.
    std::fs::write(dir.join("notes.md"), "mine").expect("a file");
    std::fs::write(dir.join("G2-item").join("99.svg"), "mine").expect("a file");
    let (code, out, err) = elle_si(&["check", "-c", "serializable", "-d", &ds, LONG_FORK]);
    assert_eq!(code, 1, "{out}{err}");
    for f in ["G-nonadjacent-item.txt", "G2-item.txt", "G2-item/0.svg"] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    // At read committed the long fork is valid: nothing of the first run's
    // anomalies is left but what the user put there.
    let (code, out, err) = elle_si(&["check", "-c", "read-committed", "-d", &ds, LONG_FORK]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(dir.join("index.html").is_file());
    let left: Vec<String> = files(&dir, "")
        .into_iter()
        .map(|p| {
            p.strip_prefix(&dir)
                .expect("inside")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        left,
        [".elle-si-files", "G2-item/99.svg", "index.html", "notes.md"],
        "{left:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_store_gets_a_folder_per_run_and_a_page_listing_them() {
    let d = temp_dir("store");
    let store = d.join("store");
    let runs = [
        ("long-fork/20261201T100000.000Z", LONG_FORK),
        (
            "long-fork/20261201T110000.000Z",
            "test-logs/la-ser-valid.edn",
        ),
        (
            "registers/20261201T120000.000Z",
            "test-logs/rw-fractured-read.edn",
        ),
    ];
    for (run, log) in runs {
        std::fs::create_dir_all(store.join(run)).unwrap();
        std::fs::copy(
            support::root().join(log),
            store.join(run).join("history.edn"),
        )
        .unwrap();
    }
    // A run whose history cannot be read is listed too, as unread.
    std::fs::create_dir_all(store.join("broken/20261201T130000.000Z")).unwrap();
    std::fs::write(
        store.join("broken/20261201T130000.000Z/history.edn"),
        "{:type :ok, :value [[:r 1",
    )
    .unwrap();
    let out = d.join("elle");
    let (code, stdout, err) = elle_si(&[
        "check",
        "-c",
        "serializable,causal-cerone",
        "-d",
        &out.to_string_lossy(),
        &store.to_string_lossy(),
    ]);
    assert_eq!(code, 3, "{stdout}{err}");
    let top = std::fs::read_to_string(out.join("index.html")).expect("the top page");
    for (run, _) in runs {
        assert!(out.join(run).join("index.html").is_file(), "{run}");
        assert!(top.contains(&format!("href=\"{run}/index.html\"")), "{top}");
    }
    // Each run's row, in the order checked: verdict, then each model's.
    let rows: Vec<&str> = top.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 4, "{top}");
    assert!(
        rows[0].contains("UNREAD") && rows[0].contains("broken"),
        "{}",
        rows[0]
    );
    assert!(rows[1].contains(">INVALID<") && rows[1].contains(":serializable — invalid"));
    assert!(rows[2].contains(">VALID<") && rows[2].contains(":causal-cerone — valid"));
    assert!(rows[3].contains(">INVALID<"), "{}", rows[3]);
}

/// A write skew (T1, T2 on lines 1 and 2) in a component of `extra + 2`
/// transactions: each of the others read T2's x and missed T1's w (wr
/// into it from T2, rw out of it to T1); a last reader, outside the
/// component, shows T1's append of w.
fn skew_in_a_component(extra: usize) -> String {
    let mut log = String::from(
        "{:type :ok, :process 0, :index 1, :value [[:r :x []] [:append :y 1] [:append :w 1]]}\n\
         {:type :ok, :process 1, :index 3, :value [[:r :y []] [:append :x 1]]}\n",
    );
    for i in 0..extra {
        log.push_str(&format!(
            "{{:type :ok, :process {}, :index {}, :value [[:r :x [1]] [:r :w []]]}}\n",
            2 + i,
            5 + 2 * i
        ));
    }
    log.push_str(&format!(
        "{{:type :ok, :process {}, :index {}, :value [[:r :w [1]] [:r :y [1]]]}}\n",
        2 + extra,
        5 + 2 * extra
    ));
    log
}

/// The SVGs of the components drawn in folder `d`.
fn component_svgs(d: &Path) -> Vec<String> {
    files(&d.join("sccs"), "svg")
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("an SVG"))
        .collect()
}

/// The texts of an SVG's transaction headers (`line 3 · :index 4 ...`).
fn box_titles(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("XML");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some("txn"))
        .filter_map(|g| {
            g.descendants()
                .filter(|n| n.tag_name().name() == "tspan")
                .nth(1)
                .and_then(|n| n.text())
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn plot_scc_draws_each_cycle_s_whole_component_once() {
    use elle_si::report::scc::MAX_TXNS;
    let extra = 3;
    let l = support::load_str("scc.edn", &skew_in_a_component(extra));
    let r = support::check_models(&l, "serializable");
    let cycles: usize = r
        .anomalies
        .values()
        .flatten()
        .filter(|a| a.cycle.is_some())
        .count();
    assert!(cycles >= 2, "{:?}", r.anomalies.keys());
    // Without the option, no component is drawn.
    let d = temp_dir("scc-off");
    let models = [elle_si::spec::Model::Serializable];
    write_folder(
        &d,
        "scc.edn",
        &l.history,
        &r,
        &models,
        &PlotOptions::default(),
    )
    .expect("written");
    assert!(!d.join("sccs").exists());
    let d = temp_dir("scc");
    let opts = PlotOptions {
        scc: true,
        ..PlotOptions::default()
    };
    write_folder(&d, "scc.edn", &l.history, &r, &models, &opts).expect("written");
    // Every cycle lies in the one component: drawn once.
    let svgs = component_svgs(&d);
    assert_eq!(svgs.len(), 1);
    let titles = box_titles(&svgs[0]);
    // Lines 1 to extra + 2, and not the last reader (outside it).
    let mut lines: Vec<usize> = titles
        .iter()
        .map(|t| {
            t.strip_prefix("line ")
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{t}"))
        })
        .collect();
    lines.sort_unstable();
    assert_eq!(lines, (1..=extra + 2).collect::<Vec<_>>(), "{titles:?}");
    assert!(!svgs[0].contains("more transactions"));
    // Each dependency among them drawn and anchored to its micro-ops:
    // the skew's two rw, and wr in and rw out of each other one.
    let cited = cited_in_svg(&svgs[0]);
    for m in [
        "[:r :x []]",
        "[:append :x 1]",
        "[:r :y []]",
        "[:append :y 1]",
        "[:r :x [1]]",
        "[:r :w []]",
        "[:append :w 1]",
    ] {
        assert!(cited.iter().any(|c| c == m), "{m} not cited in {cited:?}");
    }
    let dot = std::fs::read_to_string(d.join("sccs/0.dot")).expect("a DOT");
    assert_eq!(dot.matches(" -> ").count(), 2 + 2 * extra, "{dot}");
    // Each cycle's prose and card name it.
    let txt: String = files(&d, "txt")
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("text"))
        .collect();
    assert_eq!(
        txt.matches(&format!(
            "component: sccs/0.svg (its {} transactions)",
            extra + 2
        ))
        .count(),
        cycles,
        "{txt}"
    );
    let page = std::fs::read_to_string(d.join("index.html")).expect("a page");
    assert!(page.contains("<a href=\"sccs/0.svg\">"), "no link");
    assert_dots_render(&d);

    // Past the bound: MAX_TXNS drawn, the rest said by count.
    let extra = MAX_TXNS + 6;
    let l = support::load_str("big.edn", &skew_in_a_component(extra));
    let r = support::check_models(&l, "serializable");
    let d = temp_dir("scc-big");
    write_folder(&d, "big.edn", &l.history, &r, &models, &opts).expect("written");
    let svgs = component_svgs(&d);
    assert_eq!(svgs.len(), 1);
    assert_eq!(box_titles(&svgs[0]).len(), MAX_TXNS);
    let note = format!(
        "{} more transactions in this component, not drawn",
        extra + 2 - MAX_TXNS
    );
    let doc = roxmltree::Document::parse(&svgs[0]).expect("XML");
    assert!(
        doc.descendants()
            .any(|n| n.attribute("class") == Some("note")
                && n.text().is_some_and(|t| t.starts_with(&note))),
        "no note {note:?}"
    );
    // Bounded: far below what all of them would take.
    assert!(svgs[0].len() < 64 * 1024, "{} bytes", svgs[0].len());

    // And as the browser shows it.
    if let Some(bin) = chromium() {
        let out = run_chromium(
            &bin,
            &d.join("profile"),
            &["--dump-dom".into()],
            &d.join("sccs/0.svg"),
        );
        let dom = String::from_utf8_lossy(&out.stdout);
        assert!(dom.contains(&note), "{dom}");
        for m in cited_in_svg(&svgs[0]) {
            assert!(cited_in_svg_dom(&dom).contains(&m), "{m}");
        }
    } else {
        eprintln!("SKIPPED (in part): Chromium is not installed: the picture is not rendered");
    }
}

#[test]
fn a_causal_pattern_draws_the_chain_that_makes_the_overwrite_visible() {
    // T2 read T1's c and overwrote its x: T1 precedes T2. T2's a reached
    // the reader through T3 (wr a, then wr b), yet the reader read T1's x.
    let log = "{:type :ok, :process 0, :index 1, :value [[:w :x 1] [:w :c 1]]}\n\
               {:type :ok, :process 1, :index 3, :value [[:r :c 1] [:w :x 2] [:w :a 1]]}\n\
               {:type :ok, :process 2, :index 5, :value [[:r :a 1] [:w :b 1]]}\n\
               {:type :ok, :process 3, :index 7, :value [[:r :b 1] [:r :x 1]]}\n";
    let l = support::load_str("chain.edn", log);
    let r = support::check_models(&l, "causal-cerone");
    let a = r
        .anomalies
        .values()
        .flatten()
        .find(|a| a.pattern.is_some())
        .unwrap_or_else(|| panic!("a C4 pattern: {:?}", r.anomalies.keys()));
    use elle_si::anomaly::{Datum, Field};
    let Some(Datum::Path(chain)) = a.get(Field::Visible) else {
        panic!("a chain: {:?}", a.get(Field::Visible))
    };
    // The overwriter, the one between, the reader.
    assert_eq!(chain.txns, [1, 2, 3], "{chain:?}");
    let d = temp_dir("chain");
    write_folder(
        &d,
        "chain.edn",
        &l.history,
        &r,
        &[elle_si::spec::Model::CausalCerone],
        &PlotOptions::default(),
    )
    .expect("written");
    let svg = files(&d, "svg")
        .into_iter()
        .map(|p| std::fs::read_to_string(p).expect("an SVG"))
        .find(|s| s.contains("[:w :b 1]"))
        .expect("a picture with the chain");
    // All four transactions, each link's micro-ops highlighted.
    assert_eq!(box_titles(&svg).len(), 4, "{svg}");
    let cited = cited_in_svg(&svg);
    for m in [
        "[:w :a 1]",
        "[:r :a 1]",
        "[:w :b 1]",
        "[:r :b 1]",
        "[:r :x 1]",
        "[:w :x 1]",
    ] {
        assert!(cited.iter().any(|c| c == m), "{m} not cited in {cited:?}");
    }
    let p = elle_si::report::picture::picture(&l.history, a).expect("a picture");
    use elle_si::report::picture::EdgeKind;
    let wr: Vec<&str> = p
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Wr)
        .map(|e| e.label.as_str())
        .collect();
    for want in ["key :a: T", "key :b: T"] {
        assert!(wr.iter().any(|l| l.starts_with(want)), "{want} in {wr:?}");
    }
    // The prose names each link too.
    let txt = std::fs::read_to_string(files(&d, "txt")[0].clone()).expect("text");
    assert!(txt.contains("visible: line 2 < line 3 < line 4"), "{txt}");
}
