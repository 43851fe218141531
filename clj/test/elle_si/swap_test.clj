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
