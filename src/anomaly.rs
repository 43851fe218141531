//! An anomaly as the checkers find it: Elle's type name, the C4 pattern when
//! one applies, the transactions involved, its dependency cycle (typed
//! steps), and named details that the report renders as Elle renders them
//! (transactions become op maps). Nothing here is text: `report/` and
//! `explain/` render it.

use crate::history::model::{KeyId, MopId, TxnId, Val};
use crate::spec::{AnomalyType, Kind, Marker, Pattern};

pub use crate::spec::naming::Rel;

/// What a step's relation rests on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum On {
    /// Nothing the history shows (`:ao`).
    Nothing,
    /// An arbitration step `a < b` (`:ao`) forced by this read: its
    /// transaction read the key from `b`, though `a`, which also wrote
    /// the key, was visible to it (C4's Ext axiom).
    Forced(MopId),
    /// Session order, in this process.
    Process(i64),
    /// Real time: the first completed before the second was invoked.
    Realtime(TxnId, TxnId),
    /// A read of this key's value.
    Read(KeyId, Val),
    /// Two versions of a key: the earlier (None: the initial state) and
    /// the later.
    Versions(KeyId, Option<Val>, Val),
}

/// How elle-si knows a step's order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Grounds {
    /// The history shows it.
    Observed,
    /// A write order the checked model forces, given other transactions'
    /// reads.
    Inferred,
    /// A write order no read fixes, taken to tell one cycle: every order
    /// of those writes closes one (the others under `:otherwise`, or the
    /// pairs under `:unordered`).
    Assumed,
    /// A write order the checked model forces through this order (session
    /// order or real time) and no path of reads and writes: the writer of
    /// the version read comes before the overwriter by it. `Through(Wr)`:
    /// by a path of reads and writes, no read showing the order itself
    /// (the other order closes a G0 or G1c cycle).
    Through(Rel),
}

impl Grounds {
    /// The word a step not observed is marked with.
    pub fn mark(self) -> Option<&'static str> {
        match self {
            Grounds::Observed => None,
            Grounds::Inferred => Some("inferred"),
            Grounds::Assumed => Some("assumed"),
            Grounds::Through(Rel::Realtime) => Some("inferred through real time"),
            Grounds::Through(Rel::Wr | Rel::Ww) => Some("inferred through reads"),
            Grounds::Through(_) => Some("inferred through process order"),
        }
    }
}

/// One step of a dependency cycle or path: why one transaction precedes
/// the next.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// The relation.
    pub rel: Rel,
    /// What it rests on.
    pub on: On,
    /// Whether elle-si observed the order, inferred it or assumed it.
    pub grounds: Grounds,
}

impl Step {
    /// An observed step.
    pub fn new(rel: Rel, on: On) -> Step {
        Step {
            rel,
            on,
            grounds: Grounds::Observed,
        }
    }
}

/// Transactions in order, each step saying why one precedes the next (a
/// cycle repeats its first transaction at its end).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Path {
    /// The transactions, one more than the steps.
    pub txns: Vec<TxnId>,
    /// The steps between consecutive transactions.
    pub steps: Vec<Step>,
}

impl Path {
    /// The relations of the steps that show a dependency or an order (all
    /// but `:ao`), in order: what a cycle is named by.
    pub fn rels(&self) -> Vec<Rel> {
        self.steps
            .iter()
            .map(|s| s.rel)
            .filter(|&r| r != Rel::Ao)
            .collect()
    }

    /// The positions of the steps elle-si inferred.
    pub fn inferred(&self) -> Vec<usize> {
        (0..self.steps.len())
            .filter(|&i| self.steps[i].grounds == Grounds::Inferred)
            .collect()
    }
}

/// A detail of an anomaly, in terms of the history model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Datum {
    /// `nil`.
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// A keyword, without the colon.
    Kw(String),
    /// A symbol, such as Elle's `...` for an unknown prefix.
    Sym(String),
    /// A transaction, rendered as its completion op.
    Txn(TxnId),
    /// A micro-op, rendered as `[:r k v]` / `[:append k v]`.
    Mop(MopId),
    /// A key, as the history writes it.
    Key(KeyId),
    /// A value, as the history writes it.
    Val(Val),
    /// Values, as a vector.
    Vals(Vec<Val>),
    /// Values, as a set (Elle's `:scc` of `cyclic-versions`).
    Set(Vec<Val>),
    /// A vector of details.
    List(Vec<Datum>),
    /// A map of details, rendered sorted by key (Elle's sorted maps, as
    /// duplicate-elements' element -> count).
    Map(Vec<(Datum, Datum)>),
    /// A step, rendered as Elle's step map (`{:type :ww, :key k, ...}`).
    Step(Step),
    /// A path, rendered as `{:ops [...], :steps [...]}`.
    Path(Path),
    /// The other cycle a choice closes: the type it tells and the cycle,
    /// rendered as `{:type :G0, :cycle [...], :steps [...]}`.
    Alternative(Kind, Option<Path>),
}

impl Datum {
    /// A keyword (without the colon).
    pub fn kw(s: &str) -> Datum {
        Datum::Kw(s.to_string())
    }
}

/// The key of an anomaly's detail; its Elle keyword name is in [`FIELDS`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The transaction that read (Elle's `:op`).
    Op,
    /// The micro-op in question.
    Mop,
    /// The key in question.
    Key,
    /// The transaction (or initial state) a read observed.
    Writer,
    /// The transaction that overwrote what was read.
    Overwriter,
    /// A path that orders two transactions.
    Order,
    /// How a transaction is visible to a reader.
    Visible,
    /// A list element in question.
    Element,
    /// Transactions left unordered.
    Unordered,
    /// The alternative cycle, had another choice been made.
    Otherwise,
    /// The shape of a fork.
    Shape,
    /// Why the finding was made.
    Reason,
    /// Transactions in question.
    Txns,
    /// Values in question.
    Values,
    /// A value in question.
    Value,
    /// What was expected instead.
    Expected,
    /// Duplicated elements.
    Duplicates,
    /// What a read does not contain.
    DoesNotContain,
    /// What could not be placed in an order.
    Unplaceable,
    /// How many further violations were found but not told (the telling's
    /// work ran out).
    Also,
    /// Elle's `:anomaly-spec-type` on a `:cycle-search-timeout`: what the
    /// search that gave no verdict was looking for (here, the check: its
    /// `*-cycle-exists`, or the causal level).
    AnomalySpecType,
    /// The values on a cycle of a key's inferred version order
    /// (`cyclic-versions`).
    Scc,
    /// What inferred a version order (Elle's `:sources`: `:initial-state`,
    /// `:wfr-keys`, ...).
    Sources,
}

/// Each detail key and its Elle keyword name (without the colon).
pub const FIELDS: [(Field, &str); 23] = [
    (Field::Op, "op"),
    (Field::Mop, "mop"),
    (Field::Key, "key"),
    (Field::Writer, "writer"),
    (Field::Overwriter, "overwriter"),
    (Field::Order, "order"),
    (Field::Visible, "visible"),
    (Field::Element, "element"),
    (Field::Unordered, "unordered"),
    (Field::Otherwise, "otherwise"),
    (Field::Shape, "shape"),
    (Field::Reason, "reason"),
    (Field::Txns, "txns"),
    (Field::Values, "values"),
    (Field::Value, "value"),
    (Field::Expected, "expected"),
    (Field::Duplicates, "duplicates"),
    (Field::DoesNotContain, "does-not-contain"),
    (Field::Unplaceable, "unplaceable"),
    (Field::Also, "also"),
    (Field::AnomalySpecType, "anomaly-spec-type"),
    (Field::Scc, "scc"),
    (Field::Sources, "sources"),
];

impl Field {
    /// The Elle keyword name (without the colon).
    pub fn name(self) -> &'static str {
        FIELDS
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }
}

/// One anomaly instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Anomaly {
    /// Elle's anomaly type, e.g. `G1a`, `internal`, `G-single-item-process`
    /// (or a marker: `empty-transaction-graph`, `cycle-search-timeout`).
    pub kind: Kind,
    /// The C4/Plume pattern name, e.g. `AbortedRead`, when one applies.
    pub pattern: Option<Pattern>,
    /// The transactions involved, the principal one first.
    pub txns: Vec<TxnId>,
    /// The lattice name to rule models out by, when the pattern's own
    /// level would claim too much (an AO-family pattern found at a stronger
    /// level than the pattern's nominal one).
    pub rules_out: Option<AnomalyType>,
    /// The type the anomaly's own steps tell (say G0), when it is filed
    /// under its narrowed claim instead (see [`Anomaly::filed`]).
    pub told: Option<Kind>,
    /// The dependency cycle, when the anomaly is one (rendered first, as
    /// Elle's `:cycle` and `:steps`).
    pub cycle: Option<Path>,
    /// Details in Elle's keys (`:op`, `:writer`, `:mop`, `:key`, ...).
    pub fields: Vec<(Field, Datum)>,
}

/// What makes two findings one: their name, transactions and claim. A
/// cycle two checkers (or two variants) tell is told once, from whichever
/// transaction each starts; the same cycle told under another claim is
/// kept, as each claim decides its own models.
pub type Identity = (Kind, Vec<TxnId>, Option<AnomalyType>);

impl Anomaly {
    /// The finding's [`Identity`].
    pub fn identity(&self) -> Identity {
        let mut txns = self.txns.clone();
        // A cycle's transactions from its least: one cycle, one identity.
        if self.cycle.is_some()
            && let Some(first) = txns
                .iter()
                .enumerate()
                .min_by_key(|&(_, t)| *t)
                .map(|p| p.0)
        {
            txns.rotate_left(first);
        }
        (self.kind, txns, self.rules_out)
    }

    /// An anomaly of this type, with nothing else yet.
    pub fn new(kind: impl Into<Kind>) -> Anomaly {
        Anomaly {
            kind: kind.into(),
            pattern: None,
            txns: Vec::new(),
            rules_out: None,
            told: None,
            cycle: None,
            fields: Vec::new(),
        }
    }

    /// Elle's `:cycle-search-timeout` for a check that gave no verdict
    /// within the time or the work it was given: `what` names the check
    /// (its `*-cycle-exists`, or the causal level).
    pub fn search_timeout(what: &str) -> Anomaly {
        Anomaly::new(Marker::CycleSearchTimeout)
            .field(Field::AnomalySpecType, Datum::kw(what))
            .field(Field::DoesNotContain, Datum::List(Vec::new()))
    }

    /// Elle's `:cycle-search-timeout` for a violation whose telling the
    /// deadline cut short: the verdict stands; its `:reason` says that what
    /// is told of `what` (a `*-cycle-exists` model name, without the
    /// suffix) may be neither all nor the strongest.
    pub fn telling_cut(what: &str) -> Anomaly {
        let why = format!(
            "the deadline came while telling the {what} violation: \
             the cycles told may not be its strongest, and more may exist"
        );
        Anomaly::new(Marker::CycleSearchTimeout)
            .field(Field::DoesNotContain, Datum::List(Vec::new()))
            .field(Field::Reason, Datum::Str(why))
    }

    /// Whether this is a [`Anomaly::telling_cut`] (a verdict given, its
    /// telling cut short) rather than a check that gave none.
    pub fn is_telling_cut(&self) -> bool {
        self.kind == Kind::Marker(Marker::CycleSearchTimeout) && self.get(Field::Reason).is_some()
    }

    /// For a check that gave no verdict ([`Anomaly::search_timeout`]),
    /// the claim it was deciding when it names one (a variant's
    /// `*-cycle-exists`; a causal level names no anomaly).
    pub fn undecided_claim(&self) -> Option<AnomalyType> {
        if self.kind != Kind::Marker(Marker::CycleSearchTimeout) {
            return None;
        }
        match self.get(Field::AnomalySpecType) {
            Some(Datum::Kw(k)) => AnomalyType::parse(k).ok(),
            _ => None,
        }
    }

    /// The anomaly with this C4 pattern.
    pub fn pattern(mut self, p: Pattern) -> Anomaly {
        self.pattern = Some(p);
        self
    }

    /// The anomaly with this transaction involved (once).
    pub fn txn(mut self, t: TxnId) -> Anomaly {
        if !self.txns.contains(&t) {
            self.txns.push(t);
        }
        self
    }

    /// The anomaly with this cycle.
    pub fn cycle(mut self, c: Path) -> Anomaly {
        self.cycle = Some(c);
        self
    }

    /// The anomaly with this detail, after those it has.
    pub fn field(mut self, k: Field, d: Datum) -> Anomaly {
        self.fields.push((k, d));
        self
    }

    /// The anomaly filed under what it proves: when its claim is narrowed
    /// (`rules_out`, for a cycle through write orders elle-si inferred, or
    /// a C4 pattern found at a stronger level than its own), the narrowed
    /// claim becomes its type and the type its steps tell is kept as
    /// `told`. Filing twice changes nothing.
    pub fn filed(mut self) -> Anomaly {
        if let Some(r) = self.rules_out
            && Kind::Anomaly(r) != self.kind
        {
            self.told = Some(std::mem::replace(&mut self.kind, r.into()));
        }
        self
    }

    /// The type the anomaly's steps tell: `told` when it is filed under a
    /// narrowed claim, else its type.
    pub fn told_name(&self) -> &'static str {
        self.told.unwrap_or(self.kind).name()
    }

    /// Elle's name of its type (or marker).
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The positions of the cycle's steps elle-si inferred.
    pub fn inferred_steps(&self) -> Vec<usize> {
        self.cycle.as_ref().map_or(Vec::new(), Path::inferred)
    }

    /// The detail under this key, if any.
    pub fn get(&self, k: Field) -> Option<&Datum> {
        self.fields.iter().find(|(n, _)| *n == k).map(|(_, d)| d)
    }

    /// How many more of its kind were found and not told or built
    /// (its `:also`), beside it.
    pub fn also(&self) -> u64 {
        match self.get(Field::Also) {
            Some(Datum::Int(n)) => (*n).max(0) as u64,
            _ => 0,
        }
    }
}

/// Most anomalies of one type a result lists: those past it are counted
/// in the `:also` of the last one listed (the causal levels do not even
/// build them). One transaction reading 20,000 elements nobody appended
/// is 20,000 thin-air reads, each showing that transaction.
pub const MAX_INSTANCES: usize = 1000;

/// Keeps at most [`MAX_INSTANCES`] of `list` (all of one type), counting
/// the rest, and what they counted, in the `:also` of the last one kept.
/// One past the bound that counts under a claim none kept has (another
/// pattern, narrowed claim or told type: verdicts read them) is kept too,
/// so that capping changes no verdict; there are a handful such at most.
pub fn cap(list: &mut Vec<Anomaly>) {
    if list.len() <= MAX_INSTANCES {
        return;
    }
    type Claim = (Option<Pattern>, Option<AnomalyType>, Option<Kind>);
    let claim = |a: &Anomaly| -> Claim { (a.pattern, a.rules_out, a.told) };
    let mut claims: Vec<Claim> = Vec::new();
    let mut more = 0u64;
    let mut kept = 0;
    list.retain(|a| {
        let c = claim(a);
        let new = !claims.contains(&c);
        if new {
            claims.push(c);
        }
        let keep = kept < MAX_INSTANCES || new;
        if keep {
            kept += 1;
        } else {
            more += 1 + a.also();
        }
        keep
    });
    if let Some(last) = list.last_mut() {
        let n = last.also() + more;
        last.fields.retain(|(k, _)| *k != Field::Also);
        last.fields
            .push((Field::Also, Datum::Int(n.min(i64::MAX as u64) as i64)));
    }
}

/// How many anomalies a list stands for: each, and the `:also` counts
/// of those found and not told.
pub fn found(list: &[Anomaly]) -> u64 {
    list.len() as u64 + list.iter().map(Anomaly::also).sum::<u64>()
}
