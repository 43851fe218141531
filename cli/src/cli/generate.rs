//! The `elle-si gen` command line: flags to [`GenOptions`], the history to a
//! file or stdout, and the fault record beside the file. Part of the binary
//! (clap stays out of the library and the JVM's native library).

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::ValueEnum;

use elle_si::error::Error;
use elle_si::generator::{Db, Distribution, Fault, GenOptions, Preset, faults_edn, generate_to};
use elle_si::history::{Format, Workload};

/// PolySI's workload names, as the flag spells them (`general-rh`, ...).
#[allow(clippy::enum_variant_names)]
#[derive(Copy, Clone, ValueEnum)]
pub enum PresetArg {
    GeneralRh,
    GeneralRw,
    GeneralWh,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum DistArg {
    Uniform,
    Zipf,
    Hotspot,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum WorkloadArg {
    ListAppend,
    RwRegister,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum FormatArg {
    Edn,
    Text,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum DbArg {
    Serializable,
    SnapshotIsolation,
    Causal,
    ReadAtomic,
    ReadCommitted,
    Prefix,
    ParallelSnapshotIsolation,
}

/// Flags of `elle-si gen`. Unset flags take the preset's value, else the
/// default.
#[derive(clap::Args)]
pub struct GenArgs {
    /// PolySI's workloads: 25 sessions x 400 txns x 8 ops, rw-register,
    /// Zipfian keys, at 95% / 50% / 30% reads.
    #[arg(long, value_enum)]
    pub preset: Option<PresetArg>,
    /// Sessions (Jepsen processes) [default: 25].
    #[arg(long)]
    pub sessions: Option<u32>,
    /// Transactions per session [default: 200].
    #[arg(long)]
    pub txns_per_session: Option<u32>,
    /// Micro-ops per transaction [default: 20].
    #[arg(long)]
    pub ops_per_txn: Option<u32>,
    /// Probability that a micro-op is a read [default: 0.5].
    #[arg(long)]
    pub read_ratio: Option<f64>,
    /// Number of keys [default: 10000].
    #[arg(long)]
    pub keys: Option<u64>,
    /// Key distribution (hotspot: 80% of ops on 20% of keys) [default: uniform].
    #[arg(long, value_enum)]
    pub distribution: Option<DistArg>,
    /// Zipf exponent [default: 0.99].
    #[arg(long)]
    pub zipf_exponent: Option<f64>,
    /// Workload [default: list-append].
    #[arg(long, value_enum)]
    pub workload: Option<WorkloadArg>,
    /// Seed: the same seed and flags give the same history.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output format (text: r(key,value,session,txn) lines, rw-register only).
    #[arg(long, value_enum, default_value = "edn")]
    pub format: FormatArg,
    /// Output file (default: stdout). The faults that fired go to
    /// FILE.faults.edn.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The simulated database.
    #[arg(long, value_enum, default_value = "serializable")]
    pub db: DbArg,
    /// Replicas of the causal store.
    #[arg(long, default_value_t = 3)]
    pub replicas: u32,
    /// Retire a key after this many writes and use a fresh one.
    #[arg(long)]
    pub max_writes_per_key: Option<u32>,
    /// Probability that a client times out (:info; committed or not, by seed).
    #[arg(long, default_value_t = 0.0)]
    pub info_rate: f64,
    /// Probability that a transaction rolls back (:fail).
    #[arg(long, default_value_t = 0.0)]
    pub abort_rate: f64,
    /// Fault: skip the write-write conflict check.
    #[arg(long, default_value_t = 0.0)]
    pub lost_update: f64,
    /// Fault: two replicas apply concurrent transactions in different orders.
    #[arg(long, default_value_t = 0.0)]
    pub long_fork: f64,
    /// Fault: apply a transaction's writes non-atomically.
    #[arg(long, default_value_t = 0.0)]
    pub fractured_read: f64,
    /// Fault: deliver out of causal order.
    #[arg(long, default_value_t = 0.0)]
    pub causality_violation: f64,
    /// Fault: a read sees an aborted transaction's write.
    #[arg(long, default_value_t = 0.0)]
    pub aborted_read: f64,
    /// Fault: a read sees another transaction's non-final write.
    #[arg(long, default_value_t = 0.0)]
    pub intermediate_read: f64,
    /// Fault: two reads of a key in one transaction see different versions.
    #[arg(long, default_value_t = 0.0)]
    pub non_repeatable_read: f64,
    /// Fault: a session does not see its own earlier write.
    #[arg(long, default_value_t = 0.0)]
    pub stale_session_read: f64,
    /// Fault: a read returns a value nobody wrote.
    #[arg(long, default_value_t = 0.0)]
    pub thin_air_read: f64,
    /// Fault (list-append): an element appears twice in a list.
    #[arg(long, default_value_t = 0.0)]
    pub duplicate_append: f64,
    /// rw-register: probability that a write shows a value already written
    /// to its key (not a fault: a read of it may have observed either
    /// write; faults still show).
    #[arg(long, default_value_t = 0.0)]
    pub repeat_values: f64,
}

impl GenArgs {
    pub fn options(&self) -> GenOptions {
        let mut o = match self.preset {
            Some(PresetArg::GeneralRh) => GenOptions::preset(Preset::GeneralRh),
            Some(PresetArg::GeneralRw) => GenOptions::preset(Preset::GeneralRw),
            Some(PresetArg::GeneralWh) => GenOptions::preset(Preset::GeneralWh),
            None => GenOptions::default(),
        };
        o.sessions = self.sessions.unwrap_or(o.sessions);
        o.txns_per_session = self.txns_per_session.unwrap_or(o.txns_per_session);
        o.ops_per_txn = self.ops_per_txn.unwrap_or(o.ops_per_txn);
        o.read_ratio = self.read_ratio.unwrap_or(o.read_ratio);
        o.keys = self.keys.unwrap_or(o.keys);
        o.zipf_exponent = self.zipf_exponent.unwrap_or(o.zipf_exponent);
        if let Some(d) = self.distribution {
            o.distribution = match d {
                DistArg::Uniform => Distribution::Uniform,
                DistArg::Zipf => Distribution::Zipf,
                DistArg::Hotspot => Distribution::Hotspot,
            };
        }
        if let Some(w) = self.workload {
            o.workload = match w {
                WorkloadArg::ListAppend => Workload::ListAppend,
                WorkloadArg::RwRegister => Workload::RwRegister,
            };
        }
        o.seed = self.seed;
        o.format = match self.format {
            FormatArg::Edn => Format::Edn,
            FormatArg::Text => Format::Text,
        };
        o.db = match self.db {
            DbArg::Serializable => Db::Serializable,
            DbArg::SnapshotIsolation => Db::SnapshotIsolation,
            DbArg::Causal => Db::Causal,
            DbArg::ReadAtomic => Db::ReadAtomic,
            DbArg::ReadCommitted => Db::ReadCommitted,
            DbArg::Prefix => Db::Prefix,
            DbArg::ParallelSnapshotIsolation => Db::ParallelSnapshotIsolation,
        };
        o.replicas = self.replicas;
        o.max_writes_per_key = self.max_writes_per_key;
        o.info_rate = self.info_rate;
        o.abort_rate = self.abort_rate;
        o.repeat_values = self.repeat_values;
        for (f, r) in [
            (Fault::LostUpdate, self.lost_update),
            (Fault::LongFork, self.long_fork),
            (Fault::FracturedRead, self.fractured_read),
            (Fault::CausalityViolation, self.causality_violation),
            (Fault::AbortedRead, self.aborted_read),
            (Fault::IntermediateRead, self.intermediate_read),
            (Fault::NonRepeatableRead, self.non_repeatable_read),
            (Fault::StaleSessionRead, self.stale_session_read),
            (Fault::ThinAirRead, self.thin_air_read),
            (Fault::DuplicateAppend, self.duplicate_append),
        ] {
            o.faults.set(f, r);
        }
        o
    }
}

/// Runs `elle-si gen`; the exit code is 0.
pub fn run(args: &GenArgs) -> Result<u8, Error> {
    let opts = args.options();
    opts.check()?;
    for f in opts.inapplicable_faults() {
        say!(
            "note: --{} cannot fire in the {} store with {}: its level allows it (or the workload cannot show it)",
            f.name(),
            opts.db.name(),
            opts.workload.name()
        );
    }
    let report = match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| Error::io(path.display(), e))?;
            let report = generate_to(&opts, BufWriter::with_capacity(1 << 20, file))?;
            let side = PathBuf::from(format!("{}.faults.edn", path.display()));
            std::fs::write(&side, faults_edn(&report.faults))
                .map_err(|e| Error::io(side.display(), e))?;
            report
        }
        None => {
            let stdout = std::io::stdout().lock();
            let report = generate_to(&opts, BufWriter::with_capacity(1 << 20, stdout))?;
            std::io::stdout()
                .flush()
                .map_err(|e| Error::io("stdout", e))?;
            report
        }
    };
    let s = &report.stats;
    let mut counts: Vec<(Fault, usize)> = Vec::new();
    for f in &report.faults {
        match counts.iter_mut().find(|(g, _)| *g == f.fault) {
            Some(c) => c.1 += 1,
            None => counts.push((f.fault, 1)),
        }
    }
    let fired: Vec<String> = counts
        .iter()
        .map(|(f, n)| format!("{n} {}", f.name()))
        .collect();
    say!(
        "{} transactions ({} ok, {} fail, {} info) in the {} store; faults fired: {}",
        s.txns,
        s.ok,
        s.fail,
        s.info,
        opts.db.name(),
        if fired.is_empty() {
            "none".to_string()
        } else {
            fired.join(", ")
        }
    );
    // An enabled fault that could fire here and did not: the history
    // shows none of it, so say why rather than let a valid verdict look
    // like a missed fault (an aborted read in a store that aborted
    // nothing, a lost update without contention).
    for f in opts.faults.enabled() {
        if opts.inapplicable_faults().contains(&f) || report.faults.iter().any(|x| x.fault == f) {
            continue;
        }
        if f == Fault::AbortedRead && s.fail == 0 {
            say!(
                "note: --aborted-read fired nothing: no transaction aborted in the {} store; give --abort-rate too",
                opts.db.name()
            );
        } else {
            say!("note: --{} fired nothing: {}", f.name(), f.needs());
        }
    }
    Ok(0)
}
