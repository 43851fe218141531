//! A picture as Graphviz DOT (`<type>/<n>.dot` in the elle/ folder), for
//! those who render with Graphviz themselves: one record-like box per
//! transaction, coloured by status as Elle colours them (the micro-ops an
//! edge rests on marked `>`), one edge per dependency coloured by kind,
//! derived edges dashed; the picture's notes as the graph's label.

use std::fmt::Write;

use super::picture::{Picture, Row, status_color};

/// DOT's double-quoted string: backslashes and quotes escaped; `\l` ends
/// each left-justified line.
fn quote_lines(lines: &[String]) -> String {
    let mut s = String::from("\"");
    for l in lines {
        for c in l.chars() {
            match c {
                '"' | '\\' => {
                    s.push('\\');
                    s.push(c);
                }
                '\n' | '\r' => s.push(' '),
                c => s.push(c),
            }
        }
        s.push_str("\\l");
    }
    s.push('"');
    s
}

/// The picture in Graphviz's DOT language.
pub fn dot(p: &Picture) -> String {
    let mut out = String::from(
        "digraph anomaly {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"sans-serif\", fontsize=10];\n",
    );
    for (i, n) in p.nodes.iter().enumerate() {
        let mut lines = vec![format!("{}  {}", n.label, n.title)];
        // A micro-op an edge rests on is marked `>`.
        lines.extend(n.rows.iter().map(|r| match r {
            Row::Mop { text, cited: true } => format!("> {text}"),
            Row::Mop { text, cited: false } => format!("  {text}"),
            Row::Elided(k) => format!("  ... {k} micro-ops"),
        }));
        let c = status_color(n.status);
        let _ = writeln!(
            out,
            "  n{i} [label={}, color=\"{c}\", fontcolor=\"{c}\"];",
            quote_lines(&lines)
        );
    }
    for e in &p.edges {
        let label = e.marked(if e.label.is_empty() {
            e.kind.name().to_string()
        } else {
            format!("{} {}", e.kind.name(), e.label)
        });
        let q = quote_lines(&[label]);
        // A single line: drop the trailing left-justify mark.
        let q = format!("{}\"", &q[..q.len() - 3]);
        let c = e.kind.color();
        let _ = writeln!(
            out,
            "  n{} -> n{} [label={q}, color=\"{c}\", fontcolor=\"{c}\"{}];",
            e.from,
            e.to,
            if e.dashed() { ", style=dashed" } else { "" }
        );
    }
    if !p.notes.is_empty() {
        let _ = writeln!(out, "  labelloc=b;\n  label={};", quote_lines(&p.notes));
    }
    out.push_str("}\n");
    out
}
