//! Value-level mutation (issue 53): the oracle's random histories (see
//! `support::oracle`) written with their keys and values in other forms
//! Clojure's `=` respects: integers with and without `N`, bigints past
//! i64, strings, keywords, doubles, decimals written two ways, and (in
//! list-append) `nil` as an element; with processes reused, `:info` ops
//! included; and with repeated list elements. Each form must get the
//! verdicts the plain integers get, at every model, without a panic; the
//! plain and reused-process histories must agree with the brute-force
//! oracle. The long run (`VALUES_COUNT` histories, from `VALUES_SEED`):
//!
//! ```text
//! cargo test --release --test it prop_values:: -- --ignored
//! ```

use crate::support::oracle::histories::{Rng, random};
use crate::support::oracle::history::{Atom, History, Op, Workload};
use crate::support::oracle::{Ask, MAPPING, Tally, elle_si};

/// A way of writing values, each value one way or another (a bijection
/// onto values Clojure's `=` tells apart).
#[derive(Clone, Copy, Debug)]
enum Form {
    Int,
    Big,
    Str,
    Keyword,
    Double,
    Decimal,
}

const FORMS: [Form; 6] = [
    Form::Int,
    Form::Big,
    Form::Str,
    Form::Keyword,
    Form::Double,
    Form::Decimal,
];

/// `v` in `form`, its spelling drawn anew at each occurrence.
fn spell(form: Form, v: u32, rng: &mut Rng) -> String {
    let either = |rng: &mut Rng, a: String, b: String| if rng.pct(50) { a } else { b };
    match form {
        Form::Int => either(rng, v.to_string(), format!("{v}N")),
        Form::Big => {
            let digits = (100_000_000_000_000_000_000u128 + v as u128).to_string();
            either(rng, digits.clone(), format!("{digits}N"))
        }
        Form::Str => format!("\"v{v}\""),
        Form::Keyword => format!(":v{v}"),
        Form::Double => either(rng, format!("{v}.5"), format!("{v}.50")),
        Form::Decimal => either(rng, format!("{v}.5M"), format!("{v}.50M")),
    }
}

/// How one history is written: a form for keys, one for values, and the
/// value (if any) written as `nil` (list-append only: a register's nil is
/// its initial state).
struct Writing {
    keys: Form,
    vals: Form,
    nil: Option<u32>,
}

impl Writing {
    fn draw(rng: &mut Rng, w: Workload) -> Writing {
        let keys = [Form::Int, Form::Str, Form::Keyword, Form::Big][rng.below(4)];
        Writing {
            keys,
            vals: FORMS[rng.below(FORMS.len())],
            nil: (w == Workload::List && rng.pct(40)).then_some(1),
        }
    }

    fn edn(&self, h: &History, rng: &mut Rng) -> String {
        h.to_edn_with(&mut |a| match a {
            Atom::Key(k) => spell(self.keys, k as u32, rng),
            Atom::Val(v) if Some(v) == self.nil => "nil".into(),
            Atom::Val(v) => spell(self.vals, v, rng),
        })
    }
}

/// `h` with processes reused: each transaction goes to the lowest process
/// whose last transaction was over before it began (its `:info` ops
/// included), so one process runs many, never two at once.
fn reuse_processes(h: &History) -> History {
    let mut g = h.clone();
    let mut order: Vec<usize> = (0..g.txns.len()).collect();
    order.sort_by_key(|&i| g.txns[i].invoke);
    let mut busy_until: Vec<usize> = Vec::new();
    for i in order {
        let t = &mut g.txns[i];
        let p = match busy_until.iter().position(|&end| end < t.invoke) {
            Some(p) => p,
            None => {
                busy_until.push(0);
                busy_until.len() - 1
            }
        };
        busy_until[p] = t.complete;
        t.process = p as u32;
    }
    g
}

/// `h` with each list read's first element repeated at its end (a retried
/// append, as `duplicate-elements` reports): beyond the oracle.
fn repeat_elements(h: &History) -> History {
    let mut g = h.clone();
    for t in &mut g.txns {
        for op in &mut t.ops {
            if let Op::Read(_, vs) = op
                && let Some(&first) = vs.first()
            {
                vs.push(first);
            }
        }
    }
    g
}

#[derive(Default)]
struct Counts {
    histories: usize,
    renderings: usize,
    checks: usize,
}

/// elle-si's verdicts on `h` written plainly and in `forms` other ways:
/// the same at every model.
fn same_verdicts(h: &History, writings: usize, rng: &mut Rng, n: &mut Counts) {
    let models: Vec<Ask> = MAPPING.iter().map(|m| Ask::Model(m.1)).collect();
    let plain = h.to_edn();
    let want =
        elle_si(&plain, h.workload, &models).unwrap_or_else(|e| panic!("refused: {e}\n{plain}"));
    for _ in 0..writings {
        let w = Writing::draw(rng, h.workload);
        let edn = w.edn(h, rng);
        let got =
            elle_si(&edn, h.workload, &models).unwrap_or_else(|e| panic!("refused: {e}\n{edn}"));
        for ((m, a), b) in models.iter().zip(&want).zip(&got) {
            assert_eq!(
                a, b,
                "{m:?}: {a:?} written plainly, {b:?} with keys {:?}, values {:?}, nil {:?}\n{plain}\n{edn}",
                w.keys, w.vals, w.nil
            );
        }
        n.renderings += 1;
        n.checks += models.len();
    }
}

fn run(seed: u64, count: usize) -> Counts {
    let mut rng = Rng::new(seed);
    let mut t = Tally::default();
    let mut n = Counts::default();
    for i in 0..count {
        let w = if i % 2 == 0 {
            Workload::Register
        } else {
            Workload::List
        };
        let h = random(&mut rng, w, 8);
        let reused = reuse_processes(&h);
        t.compare(&h);
        t.compare(&reused);
        same_verdicts(&h, 2, &mut rng, &mut n);
        same_verdicts(&reused, 1, &mut rng, &mut n);
        if w == Workload::List {
            same_verdicts(&repeat_elements(&h), 1, &mut rng, &mut n);
        }
        n.histories += 1;
    }
    eprintln!("{}", t.summary());
    for d in t.smallest() {
        eprintln!(
            "DISAGREE {} vs {}: oracle {}, elle-si {:?}\n{}",
            d.level, d.model, d.oracle, d.elle_si, d.edn
        );
    }
    assert!(
        t.disagreements.is_empty(),
        "{} disagreements with the oracle",
        t.disagreements.len()
    );
    eprintln!(
        "{} histories, {} value-mutated renderings, {} model checks of them, all the plain verdicts",
        n.histories, n.renderings, n.checks
    );
    n
}

#[test]
fn values_in_other_forms_get_the_same_verdicts() {
    let n = run(53, 300);
    assert_eq!(n.histories, 300);
    assert_eq!(n.renderings, 300 * 3 + 150);
}

#[test]
#[ignore = "long run: minutes"]
fn long_values_in_other_forms() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    run(
        env("VALUES_SEED", 5300),
        env("VALUES_COUNT", 20_000) as usize,
    );
}
