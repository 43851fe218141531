//! A history that arrives in chunks ([`Stream`]).
//!
//! A history may also arrive in chunks (`streamOpen`, `streamFeed`,
//! `streamFinish`): the concatenation of the chunks' value bytes is the
//! value table and of their op bytes the ops above, each chunk cut after a
//! whole record and a whole value entry. A thread of ours decodes and
//! compiles each chunk as it comes, so the JVM's encoding and our decoding
//! overlap; it never touches the JVM.
//!

use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use elle_si::check::CheckOptions;

use super::bridge::check_loaded;
use super::options::BridgeOptions;
use super::threads;
use super::wire::{Decoded, Decoding};

/// A history that arrives in chunks while the JVM is still encoding it. A
/// thread of ours, which never touches the JVM, decodes and compiles each
/// chunk as it comes, so that encoding there and decoding here overlap:
/// on two cores the bridge then costs little more than the encoding.
pub struct Stream {
    opts: BridgeOptions,
    copts: CheckOptions,
    tx: Option<SyncSender<Msg>>,
    /// The bytes fed so far: the result's bound is in terms of them.
    fed: usize,
    worker: Option<JoinHandle<Result<(Decoded, Duration), String>>>,
}

pub(super) enum Msg {
    /// Value-table entries and op records, each chunk whole.
    Chunk(Vec<u8>, Vec<u8>),
    /// The JVM gave up (its encoder threw): stop without compiling.
    Abort,
}

impl Stream {
    /// Starts a check with the options' EDN text; refuses bad options at
    /// once, before anything is encoded.
    pub fn open(options: &str) -> Result<Stream, String> {
        let opts = BridgeOptions::parse(options)?;
        let copts = opts.check_options()?;
        // A few chunks in flight: the encoder runs ahead of the decoder
        // without holding the whole history twice.
        let (tx, rx) = sync_channel::<Msg>(8);
        let mut d = Decoding::new(&opts, opts.timings);
        let worker = std::thread::Builder::new()
            .name("elle-si-decode".into())
            .spawn(move || {
                let mut busy = Duration::ZERO;
                while let Ok(msg) = rx.recv() {
                    let Msg::Chunk(values, ops) = msg else {
                        return Err("the encoding was abandoned".to_string());
                    };
                    let t0 = Instant::now();
                    d.values(&values)?;
                    d.ops(&ops)?;
                    busy += t0.elapsed();
                }
                let t0 = Instant::now();
                let done = d.finish()?;
                busy += t0.elapsed();
                Ok((done, busy))
            })
            .map_err(|e| format!("could not start the decoding thread: {e}"))?;
        Ok(Stream {
            opts,
            copts,
            tx: Some(tx),
            fed: 0,
            worker: Some(worker),
        })
    }

    /// Hands a chunk to the decoding thread (waiting while it is eight
    /// chunks behind).
    pub fn feed(&mut self, values: Vec<u8>, ops: Vec<u8>) {
        self.fed = self
            .fed
            .saturating_add(values.len())
            .saturating_add(ops.len());
        if let Some(tx) = &self.tx {
            // A closed channel means the decoder stopped at an error, which
            // `finish` reports.
            let _ = tx.send(Msg::Chunk(values, ops));
        }
    }

    /// Ends the history, waits for its decoding, checks it (in the pool of
    /// `:threads`, [`threads::run`]) and renders the result map.
    pub fn finish(mut self) -> Result<String, String> {
        drop(self.tx.take());
        let t0 = Instant::now();
        let Some(worker) = self.worker.take() else {
            return Err("the stream was already finished".into());
        };
        let (done, busy) = match worker.join() {
            Ok(r) => r?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let wait = t0.elapsed();
        // The decoding ran beside the encoding; what the JVM waited for is
        // `wait`, of which `finish-compile` is the compiler's last step.
        let times = [
            ("decode-ns", busy.saturating_sub(done.compile)),
            ("compile-ns", done.compile),
            ("wait-ns", wait),
            ("finish-compile-ns", done.finish),
        ];
        let (opts, copts, fed) = (&self.opts, &self.copts, self.fed);
        threads::run(opts.threads, || {
            check_loaded(&done.loaded, copts, opts, fed, &times)
        })?
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Msg::Abort);
        }
    }
}
