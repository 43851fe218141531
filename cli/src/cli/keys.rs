//! The command line's form of Elle's rw-register key options
//! (`:linearizable-keys?`, `:sequential-keys?`, `:wfr-keys?`).

use elle_si::history::KeyOrders;

/// Elle's key options: version orders each check infers beside the reads.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct KeyArgs {
    /// Assume each key is linearizable (Elle's :linearizable-keys?): a
    /// transaction's final value of a key precedes the first value of every
    /// transaction invoked after it completed. rw-register only.
    #[arg(long)]
    pub linearizable_keys: bool,
    /// Assume each key is sequentially consistent (Elle's
    /// :sequential-keys?): as --linearizable-keys, in each process's order.
    #[arg(long)]
    pub sequential_keys: bool,
    /// Assume writes follow reads within a transaction (Elle's
    /// :wfr-keys?): its write of a key follows its read of it.
    #[arg(long)]
    pub wfr_keys: bool,
}

impl KeyArgs {
    /// The options as the library takes them.
    pub fn orders(self) -> KeyOrders {
        KeyOrders {
            wfr: self.wfr_keys,
            sequential: self.sequential_keys,
            linearizable: self.linearizable_keys,
        }
    }
}
