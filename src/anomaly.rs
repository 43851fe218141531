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

    /// The non-negative integers of a list (step positions).
    pub fn indices(&self) -> Vec<usize> {
        match self {
            Datum::List(xs) => xs
                .iter()
                .filter_map(|d| match d {
                    Datum::Int(i) => usize::try_from(*i).ok(),
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

    pub fn get(&self, k: &str) -> Option<&Datum> {
        self.fields.iter().find(|(n, _)| n == k).map(|(_, d)| d)
    }
}
