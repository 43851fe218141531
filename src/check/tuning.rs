//! Every tuning constant of the checkers in one place: the bounds, sizes
//! and shares the strategies use, each with its reason. Every bound is
//! counted in work or items, never in seconds (see [`super::budget`]),
//! so the same input gets the same answer on every host. What was
//! measured to choose them is in docs/performance.md ("The engine's
//! tuning constants"); structural constants (bit widths, sentinels, the
//! plan's order) stay with the code they describe.

// The polygraph (`si::polygraph`).

/// Most unordered writer pairs a polygraph holds (each is a constraint
/// with its anti-dependencies): beyond this the variant answers unknown
/// rather than run out of memory.
pub const MAX_PAIRS: usize = 20_000_000;

/// Most edges a polygraph holds (32 bytes each): beyond this the variant
/// answers unknown rather than run out of memory. Writer pairs alone do
/// not bound them where reads may have observed any of several writers
/// (each such read adds an anti-dependency per pair).
pub const MAX_EDGES: usize = 50_000_000;

/// Most clock entries a dependency clock holds (4 bytes each: 1 GiB): a
/// history whose chains would take more gets no clock, and its writers
/// are ordered by known edges and pruning alone.
pub const MAX_CLOCK_ENTRIES: usize = 1 << 28;

// Pruning (`si::prune`).

/// Largest history (in transactions) for bitset reachability: n²/8 bytes.
pub const BITSET_LIMIT: usize = 40_000;

/// A pruning for a verdict alone (no cycle to tell) of at least
/// [`LONG_PRUNING`] open constraints stops once a round settles fewer than
/// one in this many: the later rounds settle a few each and cost what the
/// first did; the solver takes the rest. A cycle to tell is pruned to the
/// fixpoint: a violation the later rounds find is told by its cycle,
/// which the solver's core may not name.
pub const MIN_ROUND_SHARE: usize = 64;

/// The open constraints below which pruning goes on to its fixpoint
/// whatever it is for: its rounds cost little there.
pub const LONG_PRUNING: usize = 32_768;

// The solver (`si::solve`).

/// Nodes each of the theory's propagation walks may reach, once
/// [`PROPAGATE_AFTER`] conflicts show the search is hard: long enough to
/// find the cycles that spare conflicts, short enough to stay local.
pub const PROPAGATION_WALK: usize = 64;

/// Conflicts before the theory starts propagating: below it, the walks
/// cost more than the conflicts they spare.
pub const PROPAGATE_AFTER: u64 = 10_000;

/// Work counted for each of the solver's checks for a reason to stop (one
/// per decision and per restart), beside what its theory counts.
pub const DECISION_WORK: u64 = 16;

// Narrowing reads of repeated values (`si::narrow`).

/// Most rounds of the fixpoint (each after the first narrows only the
/// reads a newly plain read reaches; the histories measured settle in
/// fewer).
pub const NARROW_ROUNDS: usize = 16;

// Witnesses (`si::witness`).

/// Places in the guessed order within which two writers of a key are left
/// open by the banded witness: fewer puts every key on a cycle, more
/// leaves the solver more constraints than it decides.
pub const BAND: u64 = 64;

/// Most polygraphs the banded witness builds (each releasing the culprits
/// of the last): where it decides, two or three suffice.
pub const BANDED_ROUNDS: usize = 8;

/// Solver decisions each round of the banded witness may take: a bound in
/// work, not time, so that whether a witness is found does not depend on
/// the host's load.
pub const BAND_DECISIONS: u64 = PART_DECISIONS;

/// Most cycles looked for through a contradiction's or an unsatisfiable
/// core's sides (each a breadth-first search of the known graph; the
/// cores met hold a few constraints).
pub const MAX_CULPRIT_PATHS: usize = 256;

/// Most unordered writer pairs of the released keys.
pub const MAX_RELEASED_PAIRS: usize = 2_000_000;

/// Most work the released keys' solving may take
/// ([`crate::check::budget`] units).
pub const RELEASED_WORK: u64 = 1_000_000_000;

/// The guess is kept only where at most one key in this many is released:
/// beyond that the released keys hold most of the pairs the whole
/// polygraph would, and solving them is no cheaper.
pub const RELEASED_SHARE: usize = 10;

/// The released keys' witness is tried only where they hold at most one
/// writer pair in this many: beyond that its polygraph is nearly the
/// whole's, and a violation is found and told there once rather than
/// found in the attempt first.
pub const RELEASED_PAIRS_SHARE: usize = 2;

// Parts and windows (`si::refute`).

/// Transactions per window.
pub const WINDOW: usize = 8192;

/// Transactions per window of a history beyond pruning's reach (more than
/// [`BITSET_LIMIT`] transactions, whose whole polygraph the solver gets
/// unpruned): half that limit, so that each window is pruned (its bitsets
/// a quarter of the limit's, 50 MB).
pub const WIDE_WINDOW: usize = BITSET_LIMIT / 2;

/// The fewest pairs of writers of a key (over all keys) for which a
/// history is refuted in windows: smaller ones are checked whole at once,
/// as fast, with the whole's cycles to tell (but see `refute::by_keys`).
pub const MIN_PAIRS: usize = 4 * WINDOW_PAIRS;

/// The smallest window tried when hot keys make a window too big.
pub const MIN_WINDOW: usize = 512;

/// Most unordered writer pairs in a window's polygraph.
pub const WINDOW_PAIRS: usize = 400_000;

/// Most work one window may take ([`crate::check::budget`] units).
pub const WINDOW_WORK: u64 = 400_000_000;

/// Most work all windows (or all suspects' parts) together may take
/// before the whole is checked.
pub const WINDOWS_BUDGET: u64 = 2_000_000_000;

/// Solver decisions the whole polygraph of a large sessionless history
/// gets when nothing else decided it: enough to set every constraint of
/// the largest polygraph built twice over ([`MAX_PAIRS`] pairs), so that
/// only a search that is lost is cut.
pub const LARGE_WHOLE_DECISIONS: u64 = 2 * MAX_PAIRS as u64;

/// Most windows checked around a stronger variant's violations, of each
/// kind (clusters, lone ones).
pub const AROUND: usize = 4;

/// Solver decisions the whole polygraph of a small sessionless history
/// gets before it is refuted in windows of growing size: histories
/// decided within them are told exactly as before, whatever their parts
/// hold.
pub const WHOLE_DECISIONS: u64 = 300_000;

/// Solver decisions each part (a window of growing size, a suspect's
/// keys) gets: enough for the refuting windows measured.
pub const PART_DECISIONS: u64 = 1_000_000;

/// The first size of the growing windows; each next one is about 1.4
/// times the last (so that a violation spread over a given span falls in
/// a window of at most about twice as many transactions, each shifted by
/// half). Smaller windows hold what pruning already finds in the whole's
/// first attempt.
pub const FIRST_PART: usize = 512;

/// The first part checked around a suspect (places either way), widened
/// four-fold while it passes, up to [`SPAN`]: a violation is most often
/// near its suspect, and a part's polygraph grows with the square of its
/// writers.
pub const FIRST_SPAN: usize = 1024;

/// Suspects looked for: short cycles of the logged order of writes.
pub const SUSPECTS: usize = 256;

/// Most of them whose parts are checked, in their order (fewest keys
/// first): where none of these refutes, the history is most likely valid,
/// and the rest cost its witness their time.
pub const LOOKS: usize = 32;

/// Lost updates looked at in a history below the windows' size (see
/// `refute::by_keys`): the first refutes but where its version's writer
/// is far from it in time, or its key's part is too big for a window.
/// Each part is bounded in decisions, so at most this many times two
/// parts' [`PART_DECISIONS`] are spent.
pub const FEW_SUSPECTS: usize = 16;

/// How far in time order (transactions, either way) a suspect cycle is
/// looked for, and the widest part checked around one.
pub const SPAN: usize = 4096;

/// Short cycles' parts a glance checks: what a valid history pays before
/// its stronger variants' attempts.
pub const GLANCES: usize = 2;

/// Most writer pairs in a glance's part: a valid history's parts pass, and
/// cost it their time.
pub const GLANCE_PAIRS: usize = WINDOW_PAIRS / 8;

// The bounded-sessions search (`si::sessions`).

/// Most states (prefixes) the search enters before it gives up; also the
/// largest state space (`∏(steps + 1)` over sessions) it takes on, so
/// that where it runs it can always finish (an unbounded space makes it
/// thrash where the polygraph answers at once).
pub const MAX_STATES: usize = 1 << 23;

/// Most sessions the search takes on.
pub const MAX_SESSIONS: usize = 16;

// Prefix and PSI (`si::forks`).

/// Most clauses taken from one model: enough to steer the solver, few
/// enough that a model with many violations costs no more than a search.
pub const MAX_LEMMAS_PER_MODEL: usize = 256;

/// Most cycle searches when telling a violation.
pub const MAX_WITNESS_SEARCHES: usize = 256;

// Naming cycles (`si::cycles`).

/// Most cycles reported per strongly connected component.
pub const MAX_CYCLES_PER_SCC: usize = 20;

/// Searches for a G-nonadjacent-item cycle that may find none in a
/// component before its pass gives up there. Each search walks the whole
/// component (four states per transaction), and in a large component most
/// rw edges lie on no such cycle.
pub const MAX_NONADJACENT_MISSES_PER_SCC: usize = 64;

/// States kept in the searches of one set of components (about 24 bytes
/// each, in a hash map).
pub const MAX_SEARCH_STATES: usize = 1 << 22;

/// Work the searches for the other orders' cycles may take in all, a
/// fraction of a telling's ([`TELL_STEPS`]); past it a cycle's claim is
/// narrowed.
pub const OTHER_ORDER_STEPS: u64 = 20_000_000;

// What a cycle rests on (`si::grounds`).

/// Most transactions one search for a data path looks at.
pub const GROUNDS_SEARCH_BUDGET: usize = 32;

/// Most transactions one search for a data path behind one of pruning's
/// inferences looks at (no clock prunes it; asked once per pair of
/// writers on a cycle told).
pub const GROUNDS_DATA_BUDGET: usize = 256;

// Anomalies-only cycle checks (`si::shapes`).

/// Work a check may spend ([`crate::check::budget`] units) before it
/// answers undecided: build, pruning, the solver's decisions and the
/// searches of each solution. Counted, never timed, so the same history
/// always gets the same answer.
pub const SHAPES_WORK: u64 = 4_000_000_000;

/// Most pairs of one key's writers (over the keys) the cycle checker
/// builds its whole polygraph for: its constraints take memory by them
/// (docs/performance.md has the figures);
/// beyond, it answers undecided before building.
pub const SHAPES_PAIRS: u64 = 1_000_000;

/// Most product-graph nodes (transactions times states) pruning takes
/// bitsets for (a word per node per component: 32 MiB at this size);
/// beyond it the solver decides alone.
pub const PRUNE_LIMIT: usize = 16_384;

/// Most steps one depth-first search for a simple G-nonadjacent-item
/// cycle takes; past it the search is cut and a solution it found nothing
/// in proves nothing.
pub const SIMPLE_SEARCH_STEPS: u64 = 200_000;

/// Most cycle searches when telling the violation.
pub const MAX_TELL: usize = 256;

// Telling (`si::tell`).

/// What telling one variant's violation may look at: far above what the
/// corpus and the benchmarks take.
pub const TELL_STEPS: u64 = 200_000_000;

/// Solver decisions a verdict that only serves to name another's cycles
/// may take (a weaker variant consulted for a suffix, the polygraph route
/// naming what the sessions search refuted): the weaker variants measured
/// decide in far fewer, most by pruning.
pub const NAMING_DECISIONS: u64 = 2_000_000;

// Settling guessed reads (`check::settle`).

/// Most resolutions of the ambiguous reads tried one by one, every one of
/// them when there are no more (work, not time: the same every run).
pub const SETTLE_EXHAUSTIVE: usize = 64;

/// Most checks the search for one resolution makes, when there are more.
pub const SETTLE_SEARCH_CHECKS: usize = 64;

/// Most resolutions the SAT search for a causally consistent one tries
/// (`check::cc_witness`): each costs a closure of the history.
pub const CC_WITNESS_ROUNDS: usize = 512;

/// Most transactions that search takes (its closure costs a word per 64
/// transactions per component).
pub const CC_WITNESS_MAX_TXNS: usize = 20_000;

// Key options (`check::keys`).

/// Most steps the search for the nearest installed values takes (pairs
/// looked at, nodes walked): past it, the write orders are left
/// incomplete and the verdict at best unknown.
pub const KEY_ORDER_WORK: u64 = 200_000_000;

// The causal family (`check::causal`).

/// Most instances that get a full path in their report.
pub const CAUSAL_MAX_PATHS: usize = 1000;

/// Widest window of session positions scanned rather than searched.
pub const WINDOW_SCAN: u32 = 8;
