//! An anomaly as the checkers find it: Elle's type name, the C4 pattern when
//! one applies, the transactions involved, and named details that the report
//! renders as Elle renders them (transactions become op maps).

use crate::history::model::{KeyId, MopId, TxnId, Val};

/// A detail of an anomaly, in terms of the history model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Datum {
    Nil,
    Bool(bool),
    Int(i64),
    Str(String),
    /// A keyword, without the colon.
    Kw(String),
    /// A symbol, such as Elle's `...` for an unknown prefix.
    Sym(String),
    /// A transaction, rendered as its completion op.
    Txn(TxnId),
    /// A micro-op, rendered as `[:r k v]` / `[:append k v]`.
    Mop(MopId),
    Key(KeyId),
    Val(Val),
    Vals(Vec<Val>),
    List(Vec<Datum>),
    Map(Vec<(String, Datum)>),
}

impl Datum {
    pub fn kw(s: &str) -> Datum {
        Datum::Kw(s.to_string())
    }

    /// The transactions of a list (a cycle's, a path's), in order.
    pub fn txns(&self) -> Vec<TxnId> {
        match self {
            Datum::List(xs) => xs
                .iter()
                .filter_map(|d| match d {
                    Datum::Txn(t) => Some(*t),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// One anomaly instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Anomaly {
    /// Elle's anomaly type, e.g. `G1a`, `internal`, `G-single-item-process`.
    pub name: String,
    /// The C4/Plume pattern name, e.g. `AbortedRead`, when one applies.
    pub pattern: Option<&'static str>,
    /// The transactions involved, the principal one first.
    pub txns: Vec<TxnId>,
    /// The lattice name to rule models out by, when the pattern's own
    /// level would claim too much (an AO-family pattern found at a stronger
    /// level than the pattern's nominal one).
    pub rules_out: Option<&'static str>,
    /// The type the anomaly's own steps tell (say G0), when it is filed
    /// under its narrowed claim instead (see [`Anomaly::filed`]).
    pub told: Option<String>,
    /// Details in Elle's keys (`:op`, `:writer`, `:mop`, `:key`, ...).
    pub fields: Vec<(String, Datum)>,
}

impl Anomaly {
    pub fn new(name: impl Into<String>) -> Anomaly {
        Anomaly {
            name: name.into(),
            pattern: None,
            txns: Vec::new(),
            rules_out: None,
            told: None,
            fields: Vec::new(),
        }
    }

    pub fn pattern(mut self, p: &'static str) -> Anomaly {
        self.pattern = Some(p);
        self
    }

    pub fn txn(mut self, t: TxnId) -> Anomaly {
        if !self.txns.contains(&t) {
            self.txns.push(t);
        }
        self
    }

    pub fn field(mut self, k: &str, d: Datum) -> Anomaly {
        self.fields.push((k.to_string(), d));
        self
    }

    /// The anomaly filed under what it proves: when its claim is narrowed
    /// (`rules_out`, for a cycle through write orders elle-si inferred, or
    /// a C4 pattern found at a stronger level than its own), the narrowed
    /// claim becomes its type and the type its steps tell is kept as
    /// `told`. Filing twice changes nothing.
    pub fn filed(mut self) -> Anomaly {
        if let Some(r) = self.rules_out
            && r != self.name
        {
            self.told = Some(std::mem::replace(&mut self.name, r.to_string()));
        }
        self
    }

    /// The type the anomaly's steps tell: `told` when it is filed under a
    /// narrowed claim, else its type.
    pub fn told_name(&self) -> &str {
        self.told.as_deref().unwrap_or(&self.name)
    }

    /// The positions of the cycle's steps marked `:inferred? true` (write
    /// orders elle-si inferred rather than observed).
    pub fn inferred_steps(&self) -> Vec<usize> {
        let Some(Datum::List(steps)) = self.get("steps") else {
            return Vec::new();
        };
        steps
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                matches!(s, Datum::Map(f) if f.iter().any(|(k, d)| k == "inferred?" && *d == Datum::Bool(true)))
            })
            .map(|(i, _)| i)
            .collect()
    }

    pub fn get(&self, k: &str) -> Option<&Datum> {
        self.fields.iter().find(|(n, _)| n == k).map(|(_, d)| d)
    }
}
