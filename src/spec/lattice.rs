//! Closures over the specification's graphs, as Elle's
//! `elle.consistency-model` computes them: the models a model implies,
//! the anomalies a set of models prohibits, the models a set of anomalies
//! rules out, and `:not` / `:also-not`.
//!
//! A model prohibits every anomaly that implies one that it, or any weaker
//! model, proscribes directly. Given the anomalies found, the impossible
//! models are those that proscribe one of their implications, and
//! everything stronger; `:not` is the weakest of those, `:also-not` the
//! rest. Ours: session findings ([`AnomalyType::is_session`]) count only
//! for models that keep sessions.

use std::collections::{BTreeSet, VecDeque};

use super::{AnomalyType, Model};

fn bfs<T: Ord + Copy>(
    starts: impl IntoIterator<Item = T>,
    next: impl Fn(T) -> Vec<T>,
) -> BTreeSet<T> {
    let mut seen = BTreeSet::new();
    let mut q: VecDeque<T> = starts.into_iter().collect();
    while let Some(x) = q.pop_front() {
        if seen.insert(x) {
            q.extend(next(x));
        }
    }
    seen
}

fn stronger(m: Model) -> Vec<Model> {
    Model::ALL
        .iter()
        .copied()
        .filter(|s| s.weaker().contains(&m))
        .collect()
}

fn implying(a: AnomalyType) -> Vec<AnomalyType> {
    AnomalyType::ALL
        .iter()
        .copied()
        .filter(|b| b.implies().contains(&a))
        .collect()
}

/// The models a set of models implies (themselves and everything weaker).
pub fn implied_models(models: &[Model]) -> BTreeSet<Model> {
    bfs(models.iter().copied(), |m| m.weaker().to_vec())
}

/// Every anomaly type the given models prohibit (Elle's
/// `anomalies-prohibited-by`); session findings only by models that keep
/// sessions.
pub fn prohibited_by(models: &[Model]) -> BTreeSet<AnomalyType> {
    let mut direct = BTreeSet::new();
    for &m in models {
        let sessioned = m.keeps_sessions();
        direct.extend(
            implied_models(&[m])
                .iter()
                .flat_map(|w| w.proscribes().iter().copied())
                .filter(|a| sessioned || !a.is_session()),
        );
    }
    bfs(direct, implying)
}

/// The given anomalies and every anomaly that implies one of them (Elle's
/// `all-anomalies-implying`).
pub fn anomalies_implying(anomalies: &[AnomalyType]) -> BTreeSet<AnomalyType> {
    bfs(anomalies.iter().copied(), implying)
}

/// The given anomalies and every anomaly they imply (a G-single-item is
/// also a G-single-item-process).
pub fn implied_anomalies(anomalies: &[AnomalyType]) -> BTreeSet<AnomalyType> {
    bfs(anomalies.iter().copied(), |a| a.implies().to_vec())
}

/// Models that the given anomalies rule out.
pub fn impossible_models(anomalies: &BTreeSet<AnomalyType>) -> BTreeSet<Model> {
    let implied = bfs(anomalies.iter().copied(), |a| a.implies().to_vec());
    let implied = &implied;
    let proscribing = |session: bool| {
        Model::ALL.iter().copied().filter(move |m| {
            m.proscribes()
                .iter()
                .any(|a| implied.contains(a) && a.is_session() == session)
        })
    };
    let mut out = bfs(proscribing(false), stronger);
    // Session findings: the models above one that proscribes them, as long
    // as they keep sessions.
    out.extend(
        bfs(proscribing(true), stronger)
            .into_iter()
            .filter(|m| m.keeps_sessions()),
    );
    out
}

/// Elle's `friendly-boundary`: the weakest impossible models, and the rest,
/// by friendly name.
pub fn boundary(anomalies: &BTreeSet<AnomalyType>) -> (BTreeSet<String>, BTreeSet<String>) {
    let impossible = impossible_models(anomalies);
    let mut not = BTreeSet::new();
    let mut also = BTreeSet::new();
    for &m in &impossible {
        let weaker = implied_models(&[m]);
        let weakest = !weaker.iter().any(|w| *w != m && impossible.contains(w));
        if weakest {
            not.insert(m.friendly().to_string());
        } else if !m.is_ours() {
            // Elle's :also-not names its own models: ours stronger than
            // one ruled out would be noise in a result compared with
            // Elle's (a G1a would list C4's read committed too).
            also.insert(m.friendly().to_string());
        }
    }
    (not, also)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AnomalyType as A;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    fn of(xs: &[AnomalyType]) -> BTreeSet<AnomalyType> {
        xs.iter().copied().collect()
    }

    #[test]
    fn elle_boundaries() {
        // Elle's G-single-item example.
        let (not, also) = boundary(&of(&[A::GSingleItem]));
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
        let (not, also) = boundary(&of(&[A::G1a]));
        assert_eq!(not, set(&["read-committed"]));
        // Elle's :also-not names Elle's models alone: C4's read committed,
        // stronger than Adya's, is left out.
        assert!(also.contains("strong-session-read-committed"), "{also:?}");
        assert!(also.iter().all(|m| !m.ends_with("-c4")), "{also:?}");
        assert_eq!(boundary(&of(&[A::G0])).0, set(&["read-uncommitted"]));
        assert_eq!(boundary(&of(&[A::Internal])).0, set(&["read-atomic"]));
        assert_eq!(boundary(&of(&[A::G2Item])).0, set(&["repeatable-read"]));
        assert_eq!(
            boundary(&of(&[A::LostUpdate])).0,
            set(&["cursor-stability", "update-atomic"])
        );
        assert_eq!(
            boundary(&of(&[A::GNonadjacentItem])).0,
            set(&["repeatable-read", "snapshot-isolation"])
        );
        assert_eq!(
            boundary(&of(&[A::G1cProcess])).0,
            set(&["strong-session-read-committed"])
        );
        assert_eq!(
            boundary(&of(&[A::GSingleItemProcess])).0,
            set(&["strong-session-snapshot-isolation"])
        );
        let (n, a) = boundary(&of(&[A::G2ItemRealtime]));
        assert_eq!(n, set(&["strong-serializable"]));
        assert!(a.is_empty());
        assert!(boundary(&BTreeSet::new()).0.is_empty());
        // C4's read committed is stricter than Adya's: its patterns rule
        // out only it (and what is stronger), not Elle's read-committed.
        let (not, also) = boundary(&of(&[A::NonMonoReadCo]));
        assert_eq!(not, set(&["read-committed-c4"]));
        assert!(!also.contains("read-committed") && also.contains("read-atomic"));
    }

    #[test]
    fn prohibited_sets() {
        let si = prohibited_by(&[Model::SnapshotIsolation]);
        assert!(
            si.contains(&A::GSingleItem) && si.contains(&A::LostUpdate) && si.contains(&A::G1a)
        );
        assert!(!si.contains(&A::G2Item) && !si.contains(&A::GSingleItemProcess));
        let ser = prohibited_by(&[Model::Serializable]);
        assert!(ser.contains(&A::G2Item) && !ser.contains(&A::G2ItemProcess));
        let rc = prohibited_by(&[Model::ReadCommitted]);
        assert!(rc.contains(&A::G1b) && rc.contains(&A::DirtyUpdate) && rc.contains(&A::G1c));
        assert!(!rc.contains(&A::NotMyOwnWrite) && !rc.contains(&A::GSingleItem));
        let rc4 = prohibited_by(&[Model::ReadCommittedC4]);
        assert!(rc4.contains(&A::NotMyOwnWrite) && rc4.contains(&A::G1c));
        assert!(!rc4.contains(&A::NonRepeatableRead) && !rc4.contains(&A::CyclicCo));
        let ra = prohibited_by(&[Model::ReadAtomic]);
        assert!(ra.contains(&A::FracturedReadCo) && ra.contains(&A::CyclicCo));
        assert!(!ra.contains(&A::ConflictAo));
        assert!(prohibited_by(&[Model::CausalCerone]).contains(&A::ConflictAo));
        let ssrc = prohibited_by(&[Model::StrongSessionReadCommitted]);
        assert!(ssrc.contains(&A::G1cProcess) && ssrc.contains(&A::G0Process));
        assert!(!ssrc.contains(&A::CyclicCo));
        let rr = prohibited_by(&[Model::RepeatableRead]);
        assert!(
            rr.contains(&A::G2Item) && rr.contains(&A::LostUpdate) && rr.contains(&A::GSingleItem)
        );
    }

    #[test]
    fn prefix_and_psi_are_told_apart() {
        // A long fork rules out prefix, not PSI; a lost update PSI (through
        // update-atomic), not prefix; neither rules out Adya's SI, which
        // keeps no sessions.
        let (not, also) = boundary(&of(&[A::PrefixCycleExists]));
        assert_eq!(not, set(&["prefix"]));
        assert!(
            !also.contains("parallel-snapshot-isolation") && !also.contains("snapshot-isolation")
        );
        assert!(also.contains("strong-session-snapshot-isolation"));
        let (not, also) = boundary(&of(&[A::PsiCycleExists]));
        assert_eq!(not, set(&["parallel-snapshot-isolation"]));
        assert!(!also.contains("prefix") && !also.contains("snapshot-isolation"));
        let (not, also) = boundary(&of(&[A::LostUpdate]));
        assert!(not.contains("update-atomic") && also.contains("parallel-snapshot-isolation"));
        assert!(!also.contains("prefix"));
        let pc = prohibited_by(&[Model::Prefix]);
        assert!(pc.contains(&A::PrefixCycleExists) && !pc.contains(&A::LostUpdate));
        assert!(!pc.contains(&A::PsiCycleExists));
        let psi = prohibited_by(&[Model::ParallelSnapshotIsolation]);
        assert!(psi.contains(&A::PsiCycleExists) && psi.contains(&A::LostUpdate));
        assert!(!psi.contains(&A::PrefixCycleExists));
        let si = prohibited_by(&[Model::SnapshotIsolation]);
        assert!(!si.contains(&A::PrefixCycleExists) && !si.contains(&A::PsiCycleExists));
    }

    #[test]
    fn session_findings_rule_out_only_models_that_keep_sessions() {
        for a in super::super::anomaly::SESSION {
            let ms = impossible_models(&of(&[*a]));
            assert!(!ms.is_empty(), "{a}");
            assert!(ms.iter().all(|m| m.keeps_sessions()), "{a}: {ms:?}");
        }
        let (not, _) = boundary(&of(&[A::NonMonoReadProcess]));
        assert_eq!(not, set(&["strong-session-read-committed-c4"]));
        assert!(
            boundary(&of(&[A::FracturedReadCo]))
                .1
                .contains("snapshot-isolation")
        );
    }
}
