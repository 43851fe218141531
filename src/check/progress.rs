//! What a check is doing now, for a person watching a terminal: the
//! stages under way (a file, a causal level, an SI / serializability
//! variant, a strategy of its plan), each entered with [`Stage::enter`]
//! and left when the guard drops. The CLI draws [`now`] on stderr while
//! checking when stderr is a terminal; nothing reads it otherwise, and
//! while [`enable`] has not been called entering a stage costs one
//! relaxed load. It only reports: nothing decides by it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static ON: AtomicBool = AtomicBool::new(false);
static NEXT: AtomicU64 = AtomicU64::new(0);
/// The stages under way, oldest first.
static STAGES: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());

/// Starts keeping the stages under way (the CLI, on a terminal).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// A stage under way until dropped.
#[must_use]
pub struct Stage(Option<u64>);

impl Stage {
    /// Enters the stage `label` names (built only when kept).
    pub fn enter(label: impl FnOnce() -> String) -> Stage {
        if !ON.load(Ordering::Relaxed) {
            return Stage(None);
        }
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = STAGES.lock() {
            s.push((id, label()));
        }
        Stage(Some(id))
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(id) = self.0
            && let Ok(mut s) = STAGES.lock()
        {
            s.retain(|(i, _)| *i != id);
        }
    }
}

/// The stages under way, oldest first, joined by ` › `.
pub fn now() -> String {
    STAGES
        .lock()
        .map(|s| {
            s.iter()
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
                .join(" › ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_shown_while_under_way() {
        enable();
        let outer = Stage::enter(|| "a-file.edn".into());
        {
            let _inner = Stage::enter(|| "PL-3".into());
            assert!(now().contains("a-file.edn › PL-3"), "{}", now());
        }
        assert!(!now().contains("PL-3"), "{}", now());
        drop(outer);
        assert!(!now().contains("a-file.edn"), "{}", now());
    }
}
