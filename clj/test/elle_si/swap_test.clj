(ns elle-si.swap-test
  "A Jepsen-style test that swaps Elle's namespaces for elle-si's: the
  generator (la/gen, rw/gen) feeds clients on several threads, which run
  each transaction against an in-memory store and record the invocation
  and completion as Jepsen does; the checker (la/check, rw/check, with
  :linearizable-keys?) reads the history, and the test reads the result.
  The aliases are the ones a suite gives Elle's namespaces."
  (:require [clojure.test :refer [deftest is testing]]
            [elle-si.list-append :as la]
            [elle-si.rw-register :as rw]
            [jepsen.history :as h]))

(defn- run-clients
  "Runs the generator's first n ops on `threads` processes against a store
  (an atom), as a Jepsen client would: each process takes the next op,
  records its invocation, applies it with (apply-txn state txn) ->
  [state' completed-txn] atomically, and records its completion. Returns
  the history."
  [gen n threads apply-txn]
  (let [ops     (atom (take n gen))
        events  (atom [])
        record! (fn [e] (locking events (swap! events conj e)))
        store   (atom {})
        take!   (fn [] (locking ops
                         (let [op (first @ops)]
                           (swap! ops rest)
                           op)))
        workers (for [p (range threads)]
                  (future
                    (loop []
                      (when-let [op (take!)]
                        (record! (assoc op :process p))
                        ;; Applied atomically: a serializable, linearizable
                        ;; store.
                        (let [done (locking store
                                     (let [[s' t'] (apply-txn @store (:value op))]
                                       (reset! store s')
                                       t'))]
                          (record! (assoc op :process p, :type :ok, :value done)))
                        (recur)))))]
    (run! deref (doall workers))
    (h/history @events)))

(defn- append-txn
  "A list-append transaction on a map of keys to vectors."
  [state txn]
  (reduce (fn [[s out] [f k v]]
            (case f
              :append [(update s k (fnil conj []) v) (conj out [f k v])]
              :r      [s (conj out [f k (get s k)])]))
          [state []]
          txn))

(defn- register-txn
  "A register transaction on a map of keys to values; with `stale`, reads
  return the key's value before its last write (an out-of-date replica)."
  ([state txn] (register-txn false state txn))
  ([stale state txn]
   (reduce (fn [[s out] [f k v]]
             (case f
               :w [(-> s (assoc-in [:prev k] (get-in s [:now k])) (assoc-in [:now k] v))
                   (conj out [f k v])]
               :r [s (conj out [f k (get-in s [(if (and stale (not (some (fn [[g kk]] (and (= :w g) (= k kk))) out)))
                                                 :prev
                                                 :now)
                                               k])])]))
           [state []]
           txn)))

(defn- serial-history
  "A Jepsen history from [process invoked-txn completed-txn] triples, each
  invoked and completed before the next is invoked."
  [triples]
  (h/history (mapcat (fn [[p txn done]]
                       [{:process p, :type :invoke, :f :txn, :value txn}
                        {:process p, :type :ok, :f :txn, :value done}])
                     triples)))

(deftest generators-yield-elles-shape
  ;; Elle's elle.txn/gen: {:type :invoke, :f :txn, :value txn}, nothing
  ;; else (Jepsen's interpreter adds :process and :time); each key's
  ;; writes are 1, 2, 3, ... in the order the generator yields them
  ;; (elle.txn/wr-txns: (get state k 1), then inc).
  (doseq [[name gen w] [["la/gen" (la/gen) :append] ["rw/gen" (rw/gen) :w]]]
    (testing name
      (let [ops (take 300 gen)]
        (is (every? #(= #{:type :f :value} (set (keys %))) ops))
        (is (every? #(<= 1 (count (:value %)) 4) ops) "Elle's defaults: 1 to 4 micro-ops")
        (let [by-key (reduce (fn [m [f k v]] (if (= w f) (update m k (fnil conj []) v) m))
                             {}
                             (mapcat :value ops))]
          (is (seq by-key))
          (is (every? (fn [[_ vs]] (= vs (vec (range 1 (inc (count vs)))))) by-key)
              (pr-str by-key))))))
  (testing "the zero-argument and option forms, and the lengths asked"
    (is (every? #(= 2 (count (:value %)))
                (take 100 (rw/gen {:min-txn-length 2, :max-txn-length 2}))))
    ;; One key active at a time: keys 0, 1, 2, ..., each replaced by the
    ;; next once its writes are spent, never coming back.
    (let [ks (map second (mapcat :value (take 300 (la/gen {:key-count 1, :max-writes-per-key 3}))))]
      (is (= 0 (first ks)))
      (is (every? (fn [[a b]] (<= a b (inc a))) (partition 2 1 ks)))
      (is (< 1 (last ks))))))

(deftest a-key-option-makes-a-g-single-visible
  ;; T1 writes x=1 and completes; T3 starts, then T2 writes x=2 and y=1 and
  ;; completes; T3 reads x=1 and y=1. Serializable without an order of x's
  ;; writes (T2, T1, T3); with x's versions in real time (1 before 2), T3
  ;; read T2's y but not its x: Elle's G-single-item (a read skew).
  (let [ops     [{:process 0, :type :invoke, :f :txn, :value [[:w :x 1]]}
                 {:process 0, :type :ok, :f :txn, :value [[:w :x 1]]}
                 {:process 2, :type :invoke, :f :txn, :value [[:r :x nil] [:r :y nil]]}
                 {:process 1, :type :invoke, :f :txn, :value [[:w :x 2] [:w :y 1]]}
                 {:process 1, :type :ok, :f :txn, :value [[:w :x 2] [:w :y 1]]}
                 {:process 2, :type :ok, :f :txn, :value [[:r :x 1] [:r :y 1]]}]
        history (h/history ops)
        opts    {:consistency-models [:serializable]}]
    (is (= {:valid? true} (rw/check opts history)))
    (let [r (rw/check (assoc opts :linearizable-keys? true) history)]
      (is (= false (:valid? r)))
      (is (= [:G-single-item] (:anomaly-types r)))
      (let [[a] (:G-single-item (:anomalies r))]
        (is (= [[:wr :y 1] [:rw :x 1]] (map (juxt :type :key :value) (:steps a))))
        (is (= [[[:w :x 2] [:w :y 1]] [[:r :x 1] [:r :y 1]] [[:w :x 2] [:w :y 1]]]
               (map :value (:cycle a))))))
    (testing "process order relates T1 and T2 only when one process ran both"
      (is (= {:valid? true} (rw/check (assoc opts :sequential-keys? true) history)))
      (let [same (h/history (map #(if (= 1 (:process %)) (assoc % :process 0) %) ops))
            r    (rw/check (assoc opts :sequential-keys? true) same)]
        (is (= false (:valid? r)))
        (is (= [:G-single-item] (:anomaly-types r)))))
    (testing "writes-follow-reads orders nothing here: no read of x before a write of it"
      (is (= {:valid? true} (rw/check (assoc opts :wfr-keys? true) history))))))

(deftest wfr-keys-orders-a-read-before-the-write
  ;; Each transaction read y from the other and wrote its own: a circle of
  ;; write-read edges, which read uncommitted allows; as versions under
  ;; :wfr-keys?, 2 < 1 (the first read 2, wrote 1) and 1 < 2.
  (let [history (h/history [{:process 0, :type :invoke, :f :txn, :value [[:r :y nil] [:w :y 1]]}
                            {:process 1, :type :invoke, :f :txn, :value [[:r :y nil] [:w :y 2]]}
                            {:process 0, :type :ok, :f :txn, :value [[:r :y 2] [:w :y 1]]}
                            {:process 1, :type :ok, :f :txn, :value [[:r :y 1] [:w :y 2]]}])
        opts    {:consistency-models [:read-uncommitted]}]
    (is (= {:valid? true} (rw/check opts history)))
    (let [r (rw/check (assoc opts :wfr-keys? true) history)]
      (is (= false (:valid? r)))
      (is (= [{:key :y, :scc #{1 2}, :sources [:initial-state :wfr-keys]}]
             (map #(select-keys % [:key :scc :sources]) (:cyclic-versions (:anomalies r))))))))

(deftest generators-make-ops-a-client-runs
  (doseq [[name gen mop?] [["la/gen" (la/gen {:key-count 3, :max-txn-length 5})
                            #{:r :append}]
                           ["rw/gen" (rw/gen {:key-count 3, :max-txn-length 5})
                            #{:r :w}]]]
    (testing name
      (let [ops (take 500 gen)]
        (is (every? #(and (= :invoke (:type %)) (= :txn (:f %)) (vector? (:value %))) ops))
        (is (every? #(<= 1 (count (:value %)) 5) ops))
        (is (every? (fn [[f k v]] (and (mop? f) (integer? k) (if (= :r f) (nil? v) (pos-int? v))))
                    (mapcat :value ops)))
        ;; Each key's written values are unique: what Elle's checkers need.
        (let [writes (for [op ops, [f k v] (:value op) :when (not= :r f)] [k v])]
          (is (= (count writes) (count (set writes)))))
        ;; Reads and writes both, on more keys than are active at a time
        ;; (keys retire after their writes).
        (is (= #{:r (if (= name "la/gen") :append :w)} (set (map first (mapcat :value ops)))))))
    (testing "a key retires after :max-writes-per-key"
      (let [ks (set (for [op (take 400 (rw/gen {:key-count 2, :max-writes-per-key 3}))
                          [_ k] (:value op)]
                      k))]
        (is (< 2 (count ks)))))))

(deftest swap-list-append-test
  (let [history (run-clients (la/gen {:key-count 4, :max-txn-length 4}) 400 4 append-txn)]
    (is (= 800 (count history)))
    (let [r (la/check {:consistency-models [:serializable] :linearizable-keys? true} history)]
      (is (= true (:valid? r)) (pr-str (dissoc r :also-not)))
      (is (nil? (:anomalies r))))
    (testing "the history, checked strict-serializable, as the store is"
      (is (= true (:valid? (la/check {:consistency-models [:strict-serializable]} history)))))))

(deftest swap-rw-register-test
  (let [history (run-clients (rw/gen {:key-count 4, :max-txn-length 4}) 400 4 register-txn)]
    (let [r (rw/check {:consistency-models [:serializable] :linearizable-keys? true
                       :sequential-keys? true :wfr-keys? true}
                      history)]
      (is (= true (:valid? r)) (pr-str (dissoc r :also-not)))))
  (testing "a store whose reads lag one write behind: its keys are not linearizable"
    (let [history (run-clients (rw/gen {:key-count 2, :max-txn-length 3}) 300 2 (partial register-txn true))
          r       (rw/check {:consistency-models [:serializable] :linearizable-keys? true} history)]
      (is (= false (:valid? r)))
      (is (seq (:anomaly-types r)))))
  (testing "two writes in real-time order, then a read of the first: invalid only as linearizable keys"
    (let [history (h/history (mapcat (fn [[p txn done]]
                                       [{:process p, :type :invoke, :f :txn, :value txn}
                                        {:process p, :type :ok, :f :txn, :value done}])
                                     [[0 [[:w :x 1]] [[:w :x 1]]]
                                      [1 [[:w :x 2]] [[:w :x 2]]]
                                      [2 [[:r :x nil]] [[:r :x 1]]]]))
          opts    {:consistency-models [:serializable]}]
      (is (= {:valid? true} (rw/check opts history)))
      (let [r (rw/check (assoc opts :linearizable-keys? true) history)]
        (is (= false (:valid? r)))
        (is (= [:cyclic-versions] (:anomaly-types r)))
        (is (= [{:key :x, :scc #{1 2}, :sources [:initial-state :linearizable-keys]}]
               (map #(select-keys % [:key :scc :sources]) (:cyclic-versions (:anomalies r))))))
      (testing "list-append takes the option as Elle's does: it infers nothing more"
        (let [la-history (h/history [{:process 0, :type :invoke, :f :txn, :value [[:append :x 1]]}
                                     {:process 0, :type :ok, :f :txn, :value [[:append :x 1]]}
                                     {:process 1, :type :invoke, :f :txn, :value [[:r :x nil]]}
                                     {:process 1, :type :ok, :f :txn, :value [[:r :x [1]]]}])]
          (is (= (la/check opts la-history)
                 (la/check (assoc opts :linearizable-keys? true) la-history))))))))
