//! Tests of the causal checks: the frontier derivation against the search.

use super::derive::{derive_causal, derive_search};
use super::driver::{Clocks, Ctx, Level, Stats, Triangle, build};
use crate::check::tests::generated;
use crate::generator::{Db, Distribution, Fault, GenOptions};
use crate::history::model::*;
use crate::history::{LoadOptions, Workload, load_bytes};

type Edges = Vec<(u32, u32, MopId, bool)>;

fn edges(ctx: &Ctx, redundant_too: bool, by_frontier: bool, keep_redundant: bool) -> Edges {
    let mut out = Vec::new();
    let mut push = |t: Triangle, r: bool| {
        if keep_redundant || !r {
            out.push((t.t1, t.t2, t.read, r));
        }
    };
    if by_frontier {
        derive_causal(ctx, redundant_too, &mut push);
    } else {
        derive_search(ctx, Level::Causal, redundant_too, push);
    }
    out
}

/// The frontier walk finds exactly the edges the per-read search does,
/// in the same order, on correct and faulty histories of every store,
/// with both kinds of clocks.
#[test]
fn frontier_derivation_matches_search() {
    let mut cases = 0;
    for seed in 0..24u64 {
        let db = [
            Db::Causal,
            Db::ReadAtomic,
            Db::ReadCommitted,
            Db::SnapshotIsolation,
        ][seed as usize % 4];
        let workload = if seed % 2 == 0 {
            Workload::RwRegister
        } else {
            Workload::ListAppend
        };
        let mut o = GenOptions {
            sessions: 2 + (seed % 7) as u32,
            txns_per_session: 30,
            ops_per_txn: 2 + (seed % 5) as u32,
            keys: [3, 10, 40][seed as usize % 3],
            distribution: [
                Distribution::Uniform,
                Distribution::Zipf,
                Distribution::Hotspot,
            ][(seed / 3) as usize % 3],
            workload,
            db,
            seed,
            info_rate: 0.05,
            abort_rate: 0.05,
            ..GenOptions::default()
        };
        if seed % 3 != 0 {
            for f in [
                Fault::CausalityViolation,
                Fault::FracturedRead,
                Fault::StaleSessionRead,
                Fault::LostUpdate,
                Fault::LongFork,
            ] {
                o.faults.set(f, 0.05);
            }
        }
        let h = &generated(&o);
        let vectors = build(h, Clocks::Vectors, true, &mut Stats::default());
        let trees = build(h, Clocks::TreeClocks, true, &mut Stats::default());
        for t in 0..h.txns.len() as TxnId {
            if vectors.included[t as usize] {
                assert_eq!(vectors.row(t), trees.row(t), "seed {seed}, clock of {t}");
            }
        }
        for ctx in [vectors, trees] {
            let found = edges(&ctx, false, true, false);
            assert_eq!(found, edges(&ctx, false, false, false), "seed {seed}");
            assert_eq!(
                edges(&ctx, true, true, true),
                edges(&ctx, true, false, true),
                "seed {seed}, redundant too"
            );
            cases += usize::from(!found.is_empty());
        }
    }
    assert!(cases > 10, "too few histories with derived edges: {cases}");
}

/// Instances past [`super::driver::MAX_INSTANCES`] of one name are
/// counted on the last one built (`:also`), not built: one writer session
/// and 1,200 readers, each of which saw its second write and missed its
/// first.
#[test]
fn instances_past_the_bound_are_counted_not_built() {
    use super::driver::MAX_INSTANCES;
    use crate::anomaly::found;
    let mut text = String::from("[x:=1]\n[y:=1]\n");
    let readers = MAX_INSTANCES + 200;
    for _ in 0..readers {
        text.push_str("---\n[y==1 x==?]\n");
    }
    let opts = LoadOptions {
        format: Some(crate::history::Format::DbcopHist),
        ..LoadOptions::default()
    };
    let l = load_bytes("readers.hist", text.into_bytes(), opts).expect("loads");
    let (built, stats) = super::check(&l.history, Level::Causal, true, Clocks::Vectors, None);
    // Found by two levels, each instance once.
    let mut ledger = super::Ledger::default();
    let mut out = ledger.level(built.clone(), stats.counted.clone());
    // The second level's built instances go to the caller's merge, which
    // drops them as the first's; its counted ones are met already.
    assert_eq!(ledger.level(built, stats.counted).len(), MAX_INSTANCES);
    ledger.attach(&mut out);
    assert_eq!(out.len(), MAX_INSTANCES, "one name, built up to the bound");
    assert!(out.iter().all(|a| a.kind == out[0].kind));
    assert_eq!(out.last().map(|a| a.also()), Some(200));
    assert_eq!(found(&out), readers as u64);
}
