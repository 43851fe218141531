(ns jepsen.history
  "Test-only stand-in for jepsen.history (Jepsen is not available offline):
  ops are records shaped like jepsen.history.Op, and a history is a dense,
  indexed collection that Jepsen's checkers fold with reduce. This one
  offers only what Jepsen's IHistory does that a checker may rely on
  (reduce, count, nth) and no seq, so a checker that walks it any other way
  fails here.")

(defrecord Op [index time type process f value])

(deftype DenseHistory [ops]
  clojure.lang.Counted
  (count [_] (count ops))
  clojure.lang.Indexed
  (nth [_ i] (nth ops i))
  (nth [_ i not-found] (nth ops i not-found))
  clojure.lang.IReduceInit
  (reduce [_ f init] (reduce f init ops)))

(defn history
  "A history of Op records, indexed and timed in order, as
  jepsen.history/history makes from op maps."
  [ops]
  (->DenseHistory (vec (map-indexed (fn [i op]
                                      (map->Op (assoc op :index i, :time (* 1000 i))))
                                    ops))))
