//! Elle's consistency-model lattice and anomaly implications, extended with
//! C4's patterns, so that `:valid?`, `:not` and `:also-not` mean what they
//! mean in Elle.
//!
//! Models are related by "a implies b" (b weaker); each model directly
//! proscribes some anomalies, and anomalies imply more general ones (G0 is
//! also a G1c). A model prohibits every anomaly that implies one that it,
//! or any weaker model, proscribes directly.
//! Given the anomalies found, the impossible models are those that proscribe
//! one of their implications, and everything stronger; `:not` is the weakest
//! of those, `:also-not` the rest.
//!
//! Our extension: C4's patterns are anomalies too, under kebab-case names
//! (`not-my-own-write`, `fractured-read-co`, ...). An anomaly counts by its
//! Elle type and by its pattern, so an `:internal` that is a NotMyOwnWrite
//! rules out read committed, as C4 defines it, while Elle's reading of
//! `:internal` alone would rule out only read atomic.

use std::collections::{BTreeSet, VecDeque};

/// Friendly name -> canonical name (Elle's, plus our aliases).
const CANONICAL: &[(&str, &str)] = &[
    ("consistent-view", "PL-2+"),
    ("conflict-serializable", "PL-3"),
    ("cursor-stability", "PL-CS"),
    ("forward-consistent-view", "PL-FCV"),
    ("monotonic-snapshot-read", "PL-MSR"),
    ("monotonic-view", "PL-2L"),
    ("read-committed", "PL-2"),
    ("read-uncommitted", "PL-1"),
    ("repeatable-read", "PL-2.99"),
    ("serializable", "PL-3"),
    ("snapshot-isolation", "PL-SI"),
    ("strict-serializable", "PL-SS"),
    ("strong-serializable", "PL-SS"),
    ("update-serializable", "PL-3U"),
    ("strong-session-read-uncommitted", "strong-session-PL-1"),
    ("strong-session-read-committed", "strong-session-PL-2"),
    ("strong-read-uncommitted", "strong-PL-1"),
    ("strong-read-committed", "strong-PL-2"),
    // Ours: Cerone's transactional causal consistency is Elle's causal-cerone.
    ("transactional-causal-consistency", "causal-cerone"),
];

/// Short aliases the CLI accepts.
const ALIASES: &[(&str, &str)] = &[
    ("rc", "read-committed"),
    ("ssrc", "strong-session-read-committed"),
    ("ra", "read-atomic"),
    ("tcc", "transactional-causal-consistency"),
    ("cc", "transactional-causal-consistency"),
    ("si", "snapshot-isolation"),
    ("ssi", "strong-session-snapshot-isolation"),
    ("ser", "serializable"),
    ("sser", "strong-session-serializable"),
    ("strict", "strict-serializable"),
];

/// Canonical name -> friendly name, as Elle prints them.
const FRIENDLY: &[(&str, &str)] = &[
    ("PL-2+", "consistent-view"),
    ("PL-3", "serializable"),
    ("PL-CS", "cursor-stability"),
    ("PL-FCV", "forward-consistent-view"),
    ("PL-MSR", "monotonic-snapshot-read"),
    ("PL-2L", "monotonic-view"),
    ("PL-2", "read-committed"),
    ("PL-1", "read-uncommitted"),
    ("PL-2.99", "repeatable-read"),
    ("PL-SI", "snapshot-isolation"),
    ("PL-SS", "strong-serializable"),
    ("PL-3U", "update-serializable"),
    ("strong-session-PL-1", "strong-session-read-uncommitted"),
    ("strong-session-PL-2", "strong-session-read-committed"),
    ("strong-PL-1", "strong-read-uncommitted"),
    ("strong-PL-2", "strong-read-committed"),
];

/// Model -> directly weaker models (canonical names).
const MODELS: &[(&str, &[&str])] = &[
    ("causal-cerone", &["read-atomic"]),
    ("PL-2+", &["PL-CS", "PL-2L"]),
    ("PL-3", &["view-serializable", "PL-2.99", "PL-3U", "PL-SI"]),
    ("PL-CS", &["PL-2"]),
    ("PL-FCV", &["PL-2+"]),
    ("PL-2", &["PL-1"]),
    ("PL-3U", &["PL-FCV"]),
    ("monotonic-atomic-view", &["PL-2"]),
    ("PL-2L", &["PL-2"]),
    ("PL-MSR", &["PL-2"]),
    (
        "parallel-snapshot-isolation",
        &["causal-cerone", "update-atomic"],
    ),
    ("prefix", &["causal-cerone"]),
    ("read-atomic", &["monotonic-atomic-view"]),
    ("PL-1", &[]),
    ("PL-2.99", &["PL-CS", "monotonic-atomic-view"]),
    ("update-atomic", &["read-atomic"]),
    ("session-serializable", &["1SR"]),
    // Elle places Cerone's models (which read their own session's writes,
    // as our read atomic and causal checkers do) below Adya's SI (which
    // need not). We keep Elle's lattice as it is, so `:not` means what it
    // means in Elle; the README notes the difference.
    (
        "PL-SI",
        &[
            "PL-FCV",
            "monotonic-atomic-view",
            "PL-MSR",
            "parallel-snapshot-isolation",
            "prefix",
        ],
    ),
    (
        "PL-SS",
        &[
            "PL-3",
            "linearizable",
            "PL-SI",
            "strong-snapshot-isolation",
            "strong-session-serializable",
            "session-serializable",
        ],
    ),
    ("strong-session-PL-1", &["PL-1"]),
    ("strong-session-PL-2", &["PL-2", "strong-session-PL-1"]),
    ("strong-PL-1", &["strong-session-PL-1"]),
    ("strong-PL-2", &["strong-session-PL-2", "strong-PL-1"]),
    (
        "strong-session-serializable",
        &["PL-3", "strong-session-snapshot-isolation"],
    ),
    (
        "strong-session-snapshot-isolation",
        &["PL-SI", "strong-session-PL-2"],
    ),
    (
        "strong-snapshot-isolation",
        &["strong-session-snapshot-isolation", "strong-PL-2"],
    ),
    ("linearizable", &["sequential"]),
    ("sequential", &["causal"]),
    ("causal", &["writes-follow-reads", "PRAM"]),
    (
        "PRAM",
        &["monotonic-reads", "monotonic-writes", "read-your-writes"],
    ),
    ("view-serializable", &[]),
    ("1SR", &[]),
    ("writes-follow-reads", &[]),
    ("monotonic-reads", &[]),
    ("monotonic-writes", &[]),
    ("read-your-writes", &[]),
];

/// Model -> anomalies it directly proscribes. Elle's table, plus C4's
/// patterns at the level C4 places them, and thin-air reads everywhere.
const DIRECT: &[(&str, &[&str])] = &[
    (
        "causal-cerone",
        &[
            "internal",
            "G1a",
            "co-conflict-ao",
            "conflict-ao",
            "conflict-process",
        ],
    ),
    ("PL-CS", &["G1", "G-cursor", "lost-update"]),
    ("PL-2L", &["G1", "G-monotonic"]),
    ("PL-MSR", &["G1", "G-MSR"]),
    ("PL-2+", &["G1", "G-single"]),
    ("PL-FCV", &["G1", "G-SIb"]),
    ("parallel-snapshot-isolation", &["internal", "G1a"]),
    (
        "PL-3",
        &[
            "G1",
            "G2",
            "predicate-read-miss",
            "PL-3-cycle-exists",
            "internal",
        ],
    ),
    (
        "PL-2",
        &[
            "G1",
            "PL-2-cycle-exists",
            "not-my-own-write",
            "not-my-last-write",
            "non-mono-read-co",
            "non-mono-read-ao",
        ],
    ),
    (
        "PL-1",
        &[
            "G0",
            "duplicate-elements",
            "cyclic-versions",
            "PL-1-cycle-exists",
            "thin-air-read",
        ],
    ),
    ("prefix", &["internal", "G1a"]),
    (
        "PL-SI",
        &[
            "internal",
            "G1",
            "G-SI",
            "G-nonadjacent",
            "PL-SI-cycle-exists",
        ],
    ),
    (
        "read-atomic",
        &[
            "internal",
            "G1a",
            "future-read",
            "non-repeatable-read",
            "fractured-read-co",
            "fractured-read-ao",
            "fractured-read-process",
            // Cerone's read atomic reads its own session's writes: a cycle
            // of session order and reads is out (C4 and Plume agree), and
            // so is what read committed with sessions forbids.
            "cyclic-co",
            "non-mono-read-process",
        ],
    ),
    (
        "PL-2.99",
        &["G1", "G2-item", "PL-2.99-cycle-exists", "lost-update"],
    ),
    ("update-atomic", &["lost-update"]),
    (
        "PL-SS",
        &["G1", "G1c-realtime", "G2-realtime", "PL-SS-cycle-exists"],
    ),
    (
        "strong-session-PL-1",
        &["strong-session-PL-1-cycle-exists", "G0-process"],
    ),
    (
        "strong-session-PL-2",
        &[
            "strong-session-PL-2-cycle-exists",
            "G1c-process",
            "cyclic-co",
            "non-mono-read-process",
        ],
    ),
    ("strong-PL-1", &["strong-PL-1-cycle-exists", "G0-realtime"]),
    ("strong-PL-2", &["strong-PL-2-cycle-exists", "G1c-realtime"]),
    (
        "strong-session-snapshot-isolation",
        &[
            "internal",
            "G1-process",
            "G-nonadjacent-process",
            "strong-session-snapshot-isolation-cycle-exists",
        ],
    ),
    (
        "strong-snapshot-isolation",
        &[
            "internal",
            "G1-realtime",
            "G-nonadjacent-realtime",
            "strong-snapshot-isolation-cycle-exists",
        ],
    ),
    (
        "strong-session-serializable",
        &[
            "G1-process",
            "G2-process",
            "strong-session-serializable-cycle-exists",
        ],
    ),
    ("PL-3U", &["G1", "G-update"]),
];

/// C4 findings that need session order: a pattern instance whose
/// visibility or order runs through a session, or a cycle of session order
/// and reads (`cyclic-co`, which Elle's names already tell by `G1c` or
/// `G1c-process`). They rule out only models that respect sessions.
/// Elle's lattice puts Cerone's read atomic and causal below Adya's
/// sessionless snapshot isolation; along that edge a session finding
/// proves nothing, so it counts only for the models in [`SESSIONED`].
pub const SESSION_ANOMALIES: &[&str] = &[
    "cyclic-co",
    "non-mono-read-process",
    "fractured-read-process",
    "conflict-process",
];

/// Models that keep session order: Cerone's (reads see their session's
/// writes), and Elle's strong-session and strong (real-time) ones.
const SESSIONED: &[&str] = &[
    "read-atomic",
    "causal-cerone",
    "update-atomic",
    "parallel-snapshot-isolation",
    "prefix",
    "strong-session-PL-1",
    "strong-session-PL-2",
    "strong-PL-1",
    "strong-PL-2",
    "strong-session-snapshot-isolation",
    "strong-snapshot-isolation",
    "strong-session-serializable",
    "PL-SS",
];

/// Anomaly -> anomalies it is also an instance of.
const IMPLIED: &[(&str, &[&str])] = &[
    ("G0", &["G1c", "G0-process"]),
    ("G0-process", &["G1c-process", "G0-realtime"]),
    ("G0-realtime", &["G1c-realtime"]),
    ("G1a", &["G1"]),
    ("G1b", &["G1"]),
    ("G1c", &["G1", "G1c-process"]),
    ("G1c-process", &["G1c-realtime", "G1-process"]),
    ("G1c-realtime", &["G1-realtime"]),
    ("G1", &["G1-process"]),
    ("G1-process", &["G1-realtime"]),
    (
        "G-single-item",
        &["G-single", "G-single-item-process", "G-nonadjacent-item"],
    ),
    (
        "G-single-item-process",
        &[
            "G-single-process",
            "G-single-item-realtime",
            "G-nonadjacent-item-process",
        ],
    ),
    (
        "G-single-item-realtime",
        &["G-single-realtime", "G-nonadjacent-item-realtime"],
    ),
    ("G-single", &["G-nonadjacent", "GSIb", "G-single-process"]),
    (
        "G-single-process",
        &["G-nonadjacent-process", "G-single-realtime"],
    ),
    ("G-single-realtime", &["G-nonadjacent-realtime"]),
    (
        "G-nonadjacent-item",
        &["G-nonadjacent", "G2-item", "G-nonadjacent-item-process"],
    ),
    (
        "G-nonadjacent-item-process",
        &[
            "G-nonadjacent-process",
            "G2-item-process",
            "G-nonadjacent-item-realtime",
        ],
    ),
    (
        "G-nonadjacent-item-realtime",
        &["G2-item-realtime", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent", &["G2", "G-nonadjacent-process"]),
    (
        "G-nonadjacent-process",
        &["G2-process", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent-realtime", &["G2-realtime"]),
    ("G2", &["G2-process"]),
    ("G2-item", &["G2", "G2-item-process"]),
    ("G2-item-process", &["G2-process", "G2-item-realtime"]),
    ("G2-item-realtime", &["G2-realtime"]),
    ("G2-process", &["G2-realtime"]),
    ("GSIa", &["GSI"]),
    ("GSIb", &["GSI"]),
    ("incompatible-order", &["G1a"]),
    ("future-read", &["G1c"]),
    ("dirty-update", &["G1a"]),
    ("lost-update", &["write-skew", "G2-item"]),
    ("write-skew", &["G2"]),
    // C4's patterns that are Elle anomalies by another name.
    ("aborted-read", &["G1a"]),
    ("intermediate-read", &["G1b"]),
    ("thin-air-read", &["G1a"]),
];

fn lookup<'a>(table: &'a [(&'a str, &'a [&'a str])], k: &str) -> &'a [&'a str] {
    table.iter().find(|(n, _)| *n == k).map_or(&[], |(_, v)| v)
}

fn bfs(
    starts: impl IntoIterator<Item = String>,
    next: impl Fn(&str) -> Vec<String>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut q: VecDeque<String> = starts.into_iter().collect();
    while let Some(x) = q.pop_front() {
        if seen.insert(x.clone()) {
            q.extend(next(&x));
        }
    }
    seen
}

fn models_out(m: &str) -> Vec<String> {
    lookup(MODELS, m).iter().map(|s| s.to_string()).collect()
}

fn models_in(m: &str) -> Vec<String> {
    MODELS
        .iter()
        .filter(|(_, ws)| ws.contains(&m))
        .map(|(n, _)| n.to_string())
        .collect()
}

fn implied_out(a: &str) -> Vec<String> {
    lookup(IMPLIED, a).iter().map(|s| s.to_string()).collect()
}

fn implied_in(a: &str) -> Vec<String> {
    IMPLIED
        .iter()
        .filter(|(_, bs)| bs.contains(&a))
        .map(|(n, _)| n.to_string())
        .collect()
}

/// Resolves a model name (friendly, canonical, or alias) to its canonical
/// name, or None when no such model exists.
pub fn canonical(name: &str) -> Option<&'static str> {
    let name = name.trim().trim_start_matches(':');
    let name = ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, m)| m);
    let name = CANONICAL
        .iter()
        .find(|(f, _)| *f == name)
        .map_or(name, |(_, c)| c);
    MODELS
        .iter()
        .map(|(m, _)| *m)
        .find(|m| *m == name)
        .or_else(|| {
            MODELS
                .iter()
                .flat_map(|(_, ws)| ws.iter().copied())
                .find(|m| *m == name)
        })
}

/// The name Elle prints for a canonical model name.
pub fn friendly(canon: &str) -> String {
    FRIENDLY
        .iter()
        .find(|(c, _)| *c == canon)
        .map_or(canon, |(_, f)| f)
        .to_string()
}

/// Every known model name a user may give.
pub fn known_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = CANONICAL.iter().map(|(f, _)| *f).collect();
    v.extend(MODELS.iter().map(|(m, _)| *m));
    v.sort_unstable();
    v.dedup();
    v
}

/// The models a set of models implies (themselves and everything weaker).
pub fn implied_models(models: &[&str]) -> BTreeSet<String> {
    bfs(models.iter().map(|m| m.to_string()), models_out)
}

/// Every anomaly (type or pattern) the given canonical models prohibit.
/// Session findings only by models that keep sessions.
pub fn prohibited_by(models: &[&str]) -> BTreeSet<String> {
    let mut direct: BTreeSet<String> = BTreeSet::new();
    for &m in models {
        let sessioned = SESSIONED.contains(&m);
        direct.extend(
            implied_models(&[m])
                .iter()
                .flat_map(|w| lookup(DIRECT, w).iter())
                .filter(|a| sessioned || !SESSION_ANOMALIES.contains(a))
                .map(|a| a.to_string()),
        );
    }
    bfs(direct, implied_in)
}

/// The given anomalies and every anomaly that implies one of them (Elle's
/// `all-anomalies-implying`).
pub fn anomalies_implying(anomalies: &[String]) -> BTreeSet<String> {
    bfs(
        anomalies
            .iter()
            .map(|a| a.trim_start_matches(':').to_string()),
        implied_in,
    )
}

/// The given anomalies and every anomaly they imply (a G-single-item is
/// also a G-single-item-process): what Elle's search skips in a component
/// once it has found them.
pub fn implied_anomalies(anomalies: &[String]) -> BTreeSet<String> {
    bfs(
        anomalies
            .iter()
            .map(|a| a.trim_start_matches(':').to_string()),
        implied_out,
    )
}

/// Canonical models that the given anomalies rule out.
pub fn impossible_models(anomalies: &BTreeSet<String>) -> BTreeSet<String> {
    if anomalies.is_empty() {
        return BTreeSet::new();
    }
    let implied = bfs(anomalies.iter().cloned(), implied_out);
    let proscribes = |an: &[&str], session: bool| {
        an.iter()
            .any(|a| implied.contains(*a) && SESSION_ANOMALIES.contains(a) == session)
    };
    let mut out = bfs(
        DIRECT
            .iter()
            .filter(|(_, an)| proscribes(an, false))
            .map(|(m, _)| m.to_string()),
        models_in,
    );
    // Session findings: the models above one that proscribes them, as long
    // as they keep sessions.
    let session = bfs(
        DIRECT
            .iter()
            .filter(|(_, an)| proscribes(an, true))
            .map(|(m, _)| m.to_string()),
        models_in,
    );
    out.extend(
        session
            .into_iter()
            .filter(|m| SESSIONED.contains(&m.as_str())),
    );
    out
}

/// Elle's `friendly-boundary`: the weakest impossible models, and the rest.
pub fn boundary(anomalies: &BTreeSet<String>) -> (BTreeSet<String>, BTreeSet<String>) {
    let impossible = impossible_models(anomalies);
    let mut not = BTreeSet::new();
    let mut also = BTreeSet::new();
    for m in &impossible {
        let weaker = bfs([m.clone()], models_out);
        let weakest = !weaker.iter().any(|w| w != m && impossible.contains(w));
        if weakest {
            not.insert(friendly(m));
        } else {
            also.insert(friendly(m));
        }
    }
    (not, also)
}

/// The kebab-case anomaly name of a C4 pattern (`FracturedReadCO` ->
/// `fractured-read-co`).
pub fn pattern_name(pattern: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = pattern.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower = i > 0 && chars[i - 1].is_ascii_lowercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn canonical_names_and_aliases() {
        assert_eq!(canonical("serializable"), Some("PL-3"));
        assert_eq!(canonical(":snapshot-isolation"), Some("PL-SI"));
        assert_eq!(canonical("tcc"), Some("causal-cerone"));
        assert_eq!(canonical("ssi"), Some("strong-session-snapshot-isolation"));
        assert_eq!(canonical("strict-serializable"), Some("PL-SS"));
        assert_eq!(canonical("read-atomic"), Some("read-atomic"));
        assert_eq!(canonical("no-such-model"), None);
    }

    #[test]
    fn elle_boundaries() {
        // Elle's G-single-item example.
        let (not, also) = boundary(&set(&["G-single-item"]));
        assert_eq!(not, set(&["consistent-view", "repeatable-read"]));
        assert_eq!(
            also,
            set(&[
                "forward-consistent-view",
                "serializable",
                "snapshot-isolation",
                "strong-serializable",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
                "update-serializable"
            ])
        );
        assert_eq!(boundary(&set(&["G1a"])).0, set(&["read-committed"]));
        assert_eq!(boundary(&set(&["G0"])).0, set(&["read-uncommitted"]));
        assert_eq!(boundary(&set(&["internal"])).0, set(&["read-atomic"]));
        assert_eq!(boundary(&set(&["G2-item"])).0, set(&["repeatable-read"]));
        assert_eq!(
            boundary(&set(&["lost-update"])).0,
            set(&["cursor-stability", "update-atomic"])
        );
        assert_eq!(
            boundary(&set(&["G-nonadjacent-item"])).0,
            set(&["repeatable-read", "snapshot-isolation"])
        );
        assert_eq!(
            boundary(&set(&["G1c-process"])).0,
            set(&["strong-session-read-committed"])
        );
        assert_eq!(
            boundary(&set(&["G-single-item-process"])).0,
            set(&["strong-session-snapshot-isolation"])
        );
        let (n, a) = boundary(&set(&["G2-item-realtime"]));
        assert_eq!(n, set(&["strong-serializable"]));
        assert!(a.is_empty());
        assert!(boundary(&BTreeSet::new()).0.is_empty());
    }

    #[test]
    fn prohibited_sets() {
        let si = prohibited_by(&["PL-SI"]);
        assert!(si.contains("G-single-item") && si.contains("lost-update") && si.contains("G1a"));
        assert!(!si.contains("G2-item"));
        assert!(!si.contains("G-single-item-process"));
        let ssi = prohibited_by(&["strong-session-snapshot-isolation"]);
        assert!(ssi.contains("G-single-item-process") && ssi.contains("G1c-process"));
        let ser = prohibited_by(&["PL-3"]);
        assert!(ser.contains("G2-item") && !ser.contains("G2-item-process"));
        let rc = prohibited_by(&["PL-2"]);
        assert!(rc.contains("G1b") && rc.contains("dirty-update") && !rc.contains("internal"));
        assert!(rc.contains("not-my-own-write") && !rc.contains("non-repeatable-read"));
        let ra = prohibited_by(&["read-atomic"]);
        assert!(ra.contains("fractured-read-co") && !ra.contains("conflict-ao"));
        assert!(prohibited_by(&["causal-cerone"]).contains("conflict-ao"));
        // Elle's 24, plus 10 patterns and 2 pattern aliases of G1a/G1b
        // (not cyclic-co: a session finding).
        assert_eq!(prohibited_by(&["PL-SI"]).len(), 24 + 10 + 2);
        assert!(prohibited_by(&["strong-session-PL-2"]).contains("cyclic-co"));
        assert!(!prohibited_by(&["PL-2"]).contains("cyclic-co"));
    }

    #[test]
    fn session_findings_rule_out_only_models_that_keep_sessions() {
        let sessionless = ["snapshot-isolation", "serializable", "read-committed"];
        let (not, also) = boundary(&set(&["fractured-read-process"]));
        assert_eq!(not, set(&["read-atomic"]));
        assert_eq!(
            also,
            set(&[
                "causal-cerone",
                "parallel-snapshot-isolation",
                "prefix",
                "strong-serializable",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
                "update-atomic",
            ])
        );
        let (not, also) = boundary(&set(&["non-mono-read-process"]));
        assert_eq!(not, set(&["read-atomic", "strong-session-read-committed"]));
        assert!(also.contains("causal-cerone") && also.contains("strong-read-committed"));
        let (not, also) = boundary(&set(&["conflict-process"]));
        assert_eq!(not, set(&["causal-cerone"]));
        assert!(!also.contains("read-atomic"));
        // A cycle of session order and reads: Elle's G1c-process with it.
        let (not, also) = boundary(&set(&["G1c-process", "cyclic-co"]));
        assert_eq!(not, set(&["read-atomic", "strong-session-read-committed"]));
        assert!(also.contains("causal-cerone") && !also.contains("snapshot-isolation"));
        for a in SESSION_ANOMALIES {
            let (not, also) = boundary(&set(&[a]));
            for m in sessionless {
                assert!(!not.contains(m) && !also.contains(m), "{a} rules out {m}");
            }
        }
        // The same finding without sessions rules out snapshot isolation.
        assert!(
            boundary(&set(&["fractured-read-co"]))
                .1
                .contains("snapshot-isolation")
        );
        // Which checks count them.
        for m in [
            "read-atomic",
            "causal-cerone",
            "strong-session-snapshot-isolation",
        ] {
            assert!(
                prohibited_by(&[m]).contains("fractured-read-process"),
                "{m}"
            );
        }
        for m in ["PL-SI", "PL-3", "PL-2"] {
            let p = prohibited_by(&[m]);
            assert!(SESSION_ANOMALIES.iter().all(|a| !p.contains(*a)), "{m}");
        }
        assert!(prohibited_by(&["strong-session-PL-2"]).contains("non-mono-read-process"));
        assert!(!prohibited_by(&["strong-session-PL-2"]).contains("fractured-read-process"));
    }

    #[test]
    fn pattern_names() {
        assert_eq!(pattern_name("FracturedReadCO"), "fractured-read-co");
        assert_eq!(pattern_name("COConflictAO"), "co-conflict-ao");
        assert_eq!(pattern_name("NotMyOwnWrite"), "not-my-own-write");
        assert_eq!(pattern_name("ThinAirRead"), "thin-air-read");
        assert_eq!(pattern_name("CyclicCO"), "cyclic-co");
    }
}
