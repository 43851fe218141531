(ns elle-si.jepsen-history-test
  "Checks over Jepsen's own history type: Op records in a history folded
  with reduce (the stand-in jepsen.history), through the namespaces and the
  Jepsen checker."
  (:require [clojure.test :refer [deftest is testing]]
            [elle-si.jepsen :as ej]
            [elle-si.list-append :as la]
            [elle-si.rw-register :as rw]
            [elle-si.test-util :refer [la-op pair rw-op verdict]]
            [jepsen.checker :as checker]
            [jepsen.history :as h])
  (:import (jepsen.history Op)))

(deftest records-fold-test
  (let [hist (h/history [{:process :nemesis, :type :info, :f :start, :value nil}
                         {:process 0, :type :invoke, :f :txn, :value [[:append :x 1]]}
                         {:process 0, :type :fail, :f :txn, :value [[:append :x 1]]}
                         {:process 1, :type :invoke, :f :txn, :value [[:r :x nil]]}
                         {:process 1, :type :ok, :f :txn, :value [[:r :x [1]]]}])]
    (is (not (seqable? hist)) "the stand-in can only be folded")
    (is (every? #(instance? Op %) (reduce conj [] hist)))
    (let [r (la/check {:consistency-models [:serializable]} hist)]
      ;; (No committed transaction depends on another: Elle's
      ;; :empty-transaction-graph comes beside the aborted read.)
      (is (= {:valid? false, :anomaly-types [:G1a :empty-transaction-graph],
              :not #{:read-committed}}
             (verdict r)))
      (testing "the anomalies hold the history's own records"
        (let [[a] (:G1a (:anomalies r))]
          (is (identical? (nth hist 4) (:op a)))
          (is (identical? (nth hist 2) (:writer a)))
          (is (= 4 (:index (:op a)))))))
    (testing "through the Jepsen checker"
      (let [r (checker/check (ej/checker {:consistency-models [:serializable]})
                             {:name "records", :start-time 0,
                              :store-base (str (System/getProperty "java.io.tmpdir") "/elle-si-records")}
                             hist {})]
        (is (= [:G1a :empty-transaction-graph] (:anomaly-types r)))))))

(deftest records-valid-and-register-test
  (testing "a valid list-append history of records"
    (is (= {:valid? true}
           (verdict (la/check {:consistency-models [:strict-serializable]}
                              (h/history (mapcat (comp pair la-op) ["ax1" "ax2" "rx12"])))))))
  (testing "a register history of records: each transaction reads the other's write"
    (is (= {:valid? false, :anomaly-types [:G1c], :not #{:read-committed}}
           (verdict (rw/check {:consistency-models [:serializable]}
                              (h/history [(rw-op 0 :ok "wx1ry1") (rw-op 1 :ok "wy1rx1")])))))))
