(ns elle-si.spec-test
  "Elle's contract as the typed specification gives it: every model of
  Elle's all-models gives a verdict, read committed is Adya's, anomalies
  asked for alone are looked for or refused by name, and a history with no
  dependency is :unknown with :empty-transaction-graph."
  (:require [clojure.test :refer [deftest is testing]]
            [elle-si.list-append :as la]
            [elle-si.test-util :refer [history la-op]]))

(def all-models
  "Elle's all-models (elle.consistency-model)."
  [:1SR :PL-1 :PL-2 :PL-2+ :PL-2.99 :PL-2L :PL-3 :PL-3U :PL-CS :PL-FCV :PL-MSR
   :PL-SI :PL-SS :PRAM :causal :causal-cerone :conflict-serializable
   :consistent-view :cursor-stability :forward-consistent-view :linearizable
   :monotonic-atomic-view :monotonic-reads :monotonic-snapshot-read
   :monotonic-view :monotonic-writes :parallel-snapshot-isolation :prefix
   :read-atomic :read-committed :read-uncommitted :read-your-writes
   :repeatable-read :sequential :serializable :session-serializable
   :snapshot-isolation :strict-serializable :strong-PL-1 :strong-PL-2
   :strong-read-committed :strong-read-uncommitted :strong-serializable
   :strong-session-PL-1 :strong-session-PL-2 :strong-session-read-committed
   :strong-session-read-uncommitted :strong-session-serializable
   :strong-session-snapshot-isolation :strong-snapshot-isolation
   :update-serializable :view-serializable :writes-follow-reads :update-atomic])

(def read-skew
  "T2 sees T1's append to x and misses its append to y."
  (history [(la-op 0 :ok "ax1ay1") (la-op 1 :ok "rx1ry")]))

(def thin-air
  "A read of an element nobody appended."
  (history [(la-op 0 :ok "ax1") (la-op 1 :ok "rx19")]))

(deftest every-model-gives-a-verdict
  (doseq [m all-models]
    (let [r (la/check {:consistency-models [m]} thin-air)]
      (is (contains? #{false :unknown} (:valid? r)) (str m)))
    (is (contains? #{true :unknown}
                   (:valid? (la/check {:consistency-models [m]}
                                      (history [(la-op 0 :ok "ax1") (la-op 1 :ok "rx1")]))))
        (str m))))

(deftest read-committed-is-adya
  (is (= true (:valid? (la/check {:consistency-models [:read-committed]} read-skew))))
  (is (= false (:valid? (la/check {:consistency-models [:read-atomic]} read-skew))))
  (is (= false (:valid? (la/check {:consistency-models [:read-committed-c4]} read-skew))))
  (is (= false (:valid? (la/check {:consistency-models [:snapshot-isolation]} read-skew)))))

(deftest default-is-strict-serializable
  (is (= false (:valid? (la/check {} read-skew)))))

(deftest anomalies-alone
  (testing "looked for, with every anomaly implying them"
    (doseq [a [:G-single :G-single-item :G2]]
      (is (= false (:valid? (la/check {:consistency-models nil, :anomalies [a]} read-skew)))
          (str a)))
    (is (= true (:valid? (la/check {:consistency-models nil, :anomalies [:G1]} read-skew)))))
  (testing "beside a model that allows them"
    (is (= false (:valid? (la/check {:consistency-models [:read-committed], :anomalies [:G-single]}
                                    read-skew)))))
  (testing "refused by name when no checker can find them"
    (doseq [a [:G-cursor :predicate-read-miss :G9]]
      (is (thrown-with-msg? IllegalArgumentException (re-pattern (name a))
                            (la/check {:consistency-models nil, :anomalies [a]} read-skew))))))

(deftest empty-transaction-graph
  (let [r (la/check {} (history [(la-op 0 :ok "ax1")]))]
    (is (= :unknown (:valid? r)))
    (is (= [:empty-transaction-graph] (:anomaly-types r))))
  (let [r (la/check {} (history [(la-op 0 :info "ax1") (la-op 1 :info "ax2")]))]
    (is (= :unknown (:valid? r)))))
