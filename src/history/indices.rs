//! Jepsen's `:index` rule, as jepsen.history applies it when it makes a
//! history of ops, for every reader of an op stream (EDN files and
//! streams, elle-cli's JSON, the JNI bridge's records): real-time order
//! comes from the indices, so a history whose indices contradict its order
//! is refused rather than checked in an order it does not have.
//!
//! The first op decides. When it has an `:index`, every op has one, each
//! greater than the one before (a filtered history keeps its gaps), none
//! negative. When it has none, each op is numbered by its position (every
//! op counts, the nemesis's too), and an op that does give one gives that
//! position.

/// The numbering of one history's ops, op by op.
#[derive(Debug, Default)]
pub struct Indices {
    /// Ops numbered so far.
    seen: i64,
    /// Whether the first op gave an index (`None` before it).
    given: Option<bool>,
    /// The index of the last op numbered (`None` before the first; an op
    /// [`Indices::skip`] counts is not numbered).
    last: Option<i64>,
}

impl Indices {
    /// The index of the next op, which gave `index`; else why the history
    /// is refused.
    pub fn next(&mut self, index: Option<i64>) -> Result<i64, String> {
        let at = self.seen;
        self.seen += 1;
        let given = *self.given.get_or_insert(index.is_some());
        let i = match (given, index) {
            (true, Some(i)) if i < 0 => {
                return Err(format!(":index {i} is negative: Jepsen numbers ops from 0"));
            }
            (true, Some(i)) => match self.last {
                Some(last) if i <= last => {
                    return Err(format!(
                        ":index {i} is not above the previous op's :index {last}: \
                         a history's indices increase op by op"
                    ));
                }
                _ => i,
            },
            (true, None) => {
                return Err(
                    "this op has no :index, though the history's first op has one: \
                     Jepsen numbers every op or none"
                        .into(),
                );
            }
            (false, None) => at,
            (false, Some(i)) if i == at => i,
            (false, Some(i)) => {
                return Err(format!(
                    ":index {i} is not this op's position, {at}: the history's first op \
                     has no :index, so its ops are numbered by position, as jepsen.history \
                     numbers them"
                ));
            }
        };
        self.last = Some(i);
        Ok(i)
    }

    /// Counts an op whose index the reader does not see (the JNI bridge
    /// sends none for an op of no client): it takes a position, and
    /// nothing is checked of it.
    #[doc(hidden)]
    pub fn skip(&mut self) {
        self.seen += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::Indices;

    fn run(given: &[Option<i64>]) -> Result<Vec<i64>, (usize, String)> {
        let mut ix = Indices::default();
        given
            .iter()
            .enumerate()
            .map(|(n, &i)| ix.next(i).map_err(|e| (n, e)))
            .collect()
    }

    #[test]
    fn given_indices_increase_with_gaps() {
        assert_eq!(run(&[Some(3), Some(4), Some(9)]), Ok(vec![3, 4, 9]));
    }

    #[test]
    fn given_indices_that_do_not_increase_are_refused_where_they_stop() {
        let (at, why) = run(&[Some(1), Some(0)]).unwrap_err();
        assert_eq!(at, 1);
        assert!(why.contains(":index 0 is not above"), "{why}");
        assert_eq!(run(&[Some(0), Some(1), Some(1)]).unwrap_err().0, 2);
        let (at, why) = run(&[Some(0), Some(-1)]).unwrap_err();
        assert_eq!(at, 1);
        assert!(why.contains("negative"), "{why}");
    }

    #[test]
    fn an_op_without_an_index_after_one_with_is_refused() {
        let (at, why) = run(&[Some(0), Some(1), None]).unwrap_err();
        assert_eq!(at, 2);
        assert!(why.contains("no :index"), "{why}");
    }

    #[test]
    fn without_indices_ops_are_numbered_by_position() {
        assert_eq!(run(&[None, None, Some(2), None]), Ok(vec![0, 1, 2, 3]));
        let (at, why) = run(&[None, Some(0)]).unwrap_err();
        assert_eq!(at, 1);
        assert!(why.contains("position, 1"), "{why}");
    }
}
