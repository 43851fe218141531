(ns elle-si.txn
  "Transactions for a Jepsen test to run, as Elle's elle.txn makes them
  (wr-txns, gen): what elle-si.list-append/gen and elle-si.rw-register/gen
  draw from. Written here, not taken from Elle: the same options and the
  same shape of operations."
  (:import (java.util.concurrent ThreadLocalRandom)))

(defn- rng
  ^ThreadLocalRandom []
  (ThreadLocalRandom/current))

(defn- uniform
  "A long in [0, n)."
  ^long [^long n]
  (.nextLong (rng) n))

(defn- zipf
  "A long in [0, n), Zipf-distributed with this skew: 0 most often, the
  probability of i falling as 1/(i+1)^skew (sampled by inverting the
  continuous distribution, close enough for choosing keys and budgets)."
  (^long [^long n] (zipf 1.0001 n))
  (^long [skew ^long n]
   (let [s (double skew)
         u (.nextDouble (rng))
         x (if (< (Math/abs (- s 1.0)) 1e-9)
             (Math/exp (* u (Math/log (inc n))))
             (let [e (- 1.0 s)]
               (Math/pow (inc (* u (dec (Math/pow (inc n) e)))) (/ 1.0 e))))]
     (-> (long (Math/floor x)) dec (max 0) (min (dec n))))))

(defn- exponential
  "A long in [0, n), i chosen base^i times as often as 0."
  ^long [base ^long n]
  (let [b     (double base)
        total (/ (dec (Math/pow b n)) (dec b))
        u     (* (.nextDouble (rng)) total)]
    (-> (Math/log (inc (* u (dec b))))
        (/ (Math/log b))
        Math/floor
        long
        (max 0)
        (min (dec n)))))

(defn- key-index
  "Which of the n active keys an operation takes, by the :key-dist."
  ^long [{:keys [key-dist key-dist-base]} ^long n]
  (case key-dist
    :uniform     (uniform n)
    :exponential (exponential key-dist-base n)
    :zipf        (zipf key-dist-base n)))

(defn- budget
  "How many writes a key slot takes before its key retires: 1 or more,
  Zipf-distributed up to max-writes-per-key."
  ^long [max-writes-per-key]
  (inc (zipf max-writes-per-key)))

(defn- txn
  "One transaction and the state after it."
  [{:keys [min-txn-length max-txn-length max-writes-per-key] :as opts} state]
  (let [length (+ min-txn-length (uniform (inc (- max-txn-length min-txn-length))))]
    (loop [mops [], {:keys [active budgets values] :as state} state]
      (if (= length (count mops))
        [mops state]
        (let [i (key-index opts (count active))
              k (nth active i)]
          (if (zero? (uniform 2))
            (recur (conj mops [:r k nil]) state)
            (let [v (get values k 1)]
              (if (< (nth budgets i) v)
                ;; This key has had its writes: a fresh key takes its slot.
                (recur mops (-> state
                                (update :values dissoc k)
                                (assoc-in [:active i] (inc (reduce max active)))
                                (assoc-in [:budgets i] (budget max-writes-per-key))))
                (recur (conj mops [:w k v]) (assoc-in state [:values k] (inc v)))))))))))

(defn wr-txns
  "A lazy sequence of transactions of reads and writes over integer keys,
  as Elle's elle.txn/wr-txns: each a vector of [:r k nil] (a read, its
  value for the database to fill in) and [:w k v] (a write). Each key's
  writes are 1, 2, 3, ...: unique per key. Options (Elle's, and its
  defaults):

    :key-dist            :exponential (key i of the active ones key-dist-base^i
                         times as likely as the first), :uniform or :zipf
    :key-dist-base       2 (for :zipf, the skew)
    :key-count           Keys active at a time: 10, or 3 for :uniform
    :min-txn-length      1
    :max-txn-length      4
    :max-writes-per-key  256: past its writes, a key is replaced by a fresh one"
  ([] (wr-txns {}))
  ([opts]
   (let [key-dist (:key-dist opts :exponential)
         opts     {:key-dist           key-dist
                   :key-dist-base      (:key-dist-base opts 2)
                   :key-count          (:key-count opts (if (= :uniform key-dist) 3 10))
                   :min-txn-length     (:min-txn-length opts 1)
                   :max-txn-length     (:max-txn-length opts 4)
                   :max-writes-per-key (:max-writes-per-key opts 256)}
         _        (when-not (#{:exponential :uniform :zipf} key-dist)
                    (throw (IllegalArgumentException.
                             (str ":key-dist must be :exponential, :uniform or :zipf, not "
                                  (pr-str key-dist)))))
         _        (when-not (and (pos-int? (:key-count opts))
                                 (nat-int? (:min-txn-length opts))
                                 (<= (:min-txn-length opts) (:max-txn-length opts))
                                 (pos-int? (:max-writes-per-key opts)))
                    (throw (IllegalArgumentException.
                             (str "wr-txns takes a positive :key-count and :max-writes-per-key "
                                  "and 0 <= :min-txn-length <= :max-txn-length, not "
                                  (pr-str (select-keys opts [:key-count :min-txn-length
                                                             :max-txn-length :max-writes-per-key]))))))
         n        (:key-count opts)
         state    {:active  (vec (range n))
                   :budgets (vec (repeatedly n #(budget (:max-writes-per-key opts))))
                   :values  {}}]
     ((fn step [state]
        (lazy-seq
          (let [[t state] (txn opts state)]
            (cons t (step state)))))
      state))))

(defn gen
  "Invocations of transactions, as Elle's elle.txn/gen: a lazy sequence of
  {:type :invoke, :f :txn, :value txn}, for a Jepsen client to run."
  [txns]
  (map (fn [t] {:type :invoke, :f :txn, :value t}) txns))
