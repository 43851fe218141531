(ns elle-si.rw-register-test
  "The substance of Elle's rw-register checker tests, through the bridge."
  (:require [clojure.test :refer [deftest is testing]]
            [elle-si.rw-register :as rw]
            [elle-si.test-util :refer [history pair rw rw-op verdict]]))

(deftest g1a-test
  ;; T1 reads the value of T2's failed write.
  (let [[t1 t2 :as h] (history [(rw-op "rx1") (rw-op 0 :fail "wx1")])
        r (rw/check {:consistency-models [:read-committed]} h)]
    ;; :empty-transaction-graph, as Elle (see the list-append g1a-test).
    (is (= {:valid? false, :anomaly-types [:G1a :empty-transaction-graph], :not #{:read-committed}}
           (verdict r)))
    (is (= [{:op t1, :writer t2, :mop [:r :x 1]}]
           (map #(select-keys % [:op :writer :mop]) (:G1a (:anomalies r)))))))

(deftest g1b-test
  ;; T2 reads T1's intermediate write.
  ;; Elle checks :repeatable-read; read committed prohibits G1b as well,
  ;; and :not is the same. T2 read T1's write: the graph has an edge.
  (let [[t1 t2 :as h] (history [(rw-op "wx1wx2") (rw-op "rx1")])
        r (rw/check {:consistency-models [:read-committed]} h)]
    (is (= {:valid? false, :anomaly-types [:G1b], :not #{:read-committed}}
           (verdict r)))
    ;; Sorted, as Elle's, and naming Elle's models alone.
    (is (sorted? (:not r)))
    (is (sorted? (:also-not r)))
    (is (seq (:also-not r)))
    (is (not-any? #(.endsWith (name %) "-c4") (:also-not r)))
    (is (= [{:op t2, :writer t1, :mop [:r :x 1]}]
           (map #(select-keys % [:op :writer :mop]) (:G1b (:anomalies r)))))))

(deftest g1c-test
  ;; Each transaction reads the other's write.
  (let [[t1 t2 :as h] (history [(rw-op "wx1ry1") (rw-op "wy1rx1")])]
    ;; Elle checks :read-uncommitted; elle-si has no checker for it, and
    ;; asks for what it prohibits, G0.
    (is (= {:valid? true} (rw {:consistency-models nil, :anomalies [:G0]} h)))
    (doseq [model [:read-committed :serializable]]
      (let [r (rw/check {:consistency-models [model]} h)]
        (is (= {:valid? false, :anomaly-types [:G1c], :not #{:read-committed}}
               (verdict r)))
        (is (= #{t1 t2} (set (:cycle (first (:G1c (:anomalies r)))))))))))

(deftest initial-state-test
  ;; T1 read x's initial nil but saw y = 1 from T2, which also wrote x.
  (let [h (history (let [[a a'] (pair (rw-op 0 :ok "rx_ry1"))
                         [b b'] (pair (rw-op 1 :ok "wy1wx2"))]
                     [a b b' a']))]
    (is (= {:valid? false, :anomaly-types [:G-single-item],
            :not #{:consistent-view :repeatable-read}}
           (rw {:consistency-models [:serializable]} h)))))

(deftest internal-test
  ;; Two reads of x in one transaction disagree. (Elle's version reads
  ;; values nobody wrote, which elle-si also flags as thin-air reads.)
  (let [[_ _ t1 :as h] (history [(rw-op 1 :ok "wx1") (rw-op 2 :ok "wx2") (rw-op "rx1rx2")])
        r (rw/check {:consistency-models [:read-atomic]} h)]
    ;; Besides Elle's :internal, elle-si names the C4 patterns the two
    ;; reads make: reading x from T1 and from T2, each writer was visible to
    ;; the read of the other's value, so each must commit before the other
    ;; (read committed's premise gives one of these edges, non-mono-read,
    ;; read atomic's the other, fractured-read). Found at read atomic, the
    ;; non-mono-read proves only what read atomic's edges prove: it is
    ;; filed as :fractured-read-ao, its own pattern kept as :cycle-type.
    (is (= {:valid? false, :anomaly-types [:fractured-read-ao :internal],
            :not #{:read-atomic}}
           (verdict r)))
    (is (= #{:fractured-read-ao :non-mono-read-ao}
           (set (map #(or (:cycle-type %) (:type %)) (:fractured-read-ao (:anomalies r))))))
    (is (= [{:op t1, :mop [:r :x 2], :expected 1}]
           (map #(select-keys % [:op :mop :expected]) (:internal (:anomalies r)))))))

(deftest workload-is-fixed-test
  (testing "an append in a register history is refused"
    (is (thrown-with-msg? IllegalArgumentException #"an append does not belong in a rw-register history"
                          (rw/check {} (history [{:process 0, :type :ok, :f :txn
                                                  :value [[:append :x 1]]}]))))))

(deftest key-options-test
  ;; x's versions 1 then 2 in process 0; process 1 reads x = 1 and y = 2.
  ;; Elle with :sequential-keys? orders x's versions by process order and
  ;; finds a G-single (Elle's own test of it); so does elle-si. Without
  ;; invocations there is no real time: :linearizable-keys? infers
  ;; nothing here, nor :wfr-keys? (no transaction reads and writes a key).
  (let [h (history [{:process 0, :type :ok, :f :txn, :value [[:w :x 1]]}
                    {:process 0, :type :ok, :f :txn, :value [[:w :x 2] [:w :y 2]]}
                    {:process 1, :type :ok, :f :txn, :value [[:r :x 1] [:r :y 2]]}])
        opts {:consistency-models [:serializable]}]
    (is (= {:valid? true} (rw opts h)))
    (is (= {:valid? false, :anomaly-types [:G-single-item], :not #{:consistent-view :repeatable-read}}
           (rw (assoc opts :sequential-keys? true) h)))
    (is (= {:valid? true} (rw (assoc opts :linearizable-keys? true, :wfr-keys? true) h)))
    (testing "the same options, off, change nothing"
      (is (= {:valid? true} (rw (assoc opts :sequential-keys? false, :wfr-keys? nil) h)))))
  (testing "Elle's cyclic version order (its rw-register test): x = 1, 2, then 1 read in one process"
    (let [h (history [(rw-op "wx1") (rw-op "wx2") (rw-op "rx1")])
          ;; (Elle's test asks for strict serializability, whose session
          ;; order elle-si also finds a G-single-item-process through.)
          r (rw/check {:consistency-models [:serializable], :sequential-keys? true} h)]
      (is (= {:valid? false, :anomaly-types [:cyclic-versions], :not #{:read-uncommitted}}
             (verdict r)))
      (is (= [{:key :x, :scc #{1 2}, :sources [:initial-state :sequential-keys]}]
             (map #(select-keys % [:key :scc :sources]) (:cyclic-versions (:anomalies r)))))))
  (testing ":wfr-keys?: each transaction read the other's write of y and wrote its own"
    (let [h (history [(rw-op 0 :ok "ry2wy1") (rw-op 1 :ok "ry1wy2")])]
      ;; A wr cycle (G1c), which read uncommitted allows; as versions,
      ;; 1 < 2 < 1.
      (is (= {:valid? true} (rw {:consistency-models [:read-uncommitted]} h)))
      (is (= {:valid? false, :anomaly-types [:cyclic-versions], :not #{:read-uncommitted}}
             (rw {:consistency-models [:read-uncommitted], :wfr-keys? true} h))))))

(deftest unhonoured-options-are-refused-test
  (let [h (history [(rw-op 0 :ok "wx1") (rw-op 1 :ok "rx1")])
        opts {:consistency-models [:serializable]}]
    (doseq [[k v] [[:transaction-order {1 0}] [:additional-graphs [:realtime]]]]
      (testing (str k)
        (is (thrown-with-msg? IllegalArgumentException
                              (re-pattern (str "elle-si does not take " (java.util.regex.Pattern/quote (str k))
                                               ".*Leave " (java.util.regex.Pattern/quote (str k)) " out"))
                              (rw/check (assoc opts k v) h)))))
    (testing "the same options, empty, are fine"
      (is (= true (:valid? (rw/check (assoc opts :additional-graphs []) h))))))
  (testing "a timeout that is not a number is refused by name"
    (is (thrown-with-msg? IllegalArgumentException #":plot-timeout must be a non-negative number, not \"5\""
                          (rw/check {:plot-timeout "5"} (history []))))))

(deftest repeated-values-test
  ;; x = 1 is written twice (ops 0 and 2), as transaction fuzzers write;
  ;; op 2 had read y = 5. Op 3 reads x = 1 and y's initial state: read
  ;; from op 2 it missed what op 2 had seen (a causal violation), read
  ;; from op 0 nothing is wrong. Elle refuses such a history; elle-si tries
  ;; each writer, with no file to read again, and names the read.
  (let [h (history [(rw-op 0 :ok "wx1") (rw-op 0 :ok "wy5")
                    (rw-op 1 :ok "ry5wx1") (rw-op 2 :ok "rx1ry_")])]
    (doseq [model [:causal-cerone :read-atomic :serializable]]
      (testing (str model)
        (let [r (rw/check {:consistency-models [model]} h)]
          (is (= true (:valid? r)))
          (is (= {:policy :any, :count 1
                  :reads [{:index 3, :process 2, :mop [:r :x 1], :writers [0 2]}]}
                 (:elle-si/ambiguous-reads r))))))))
