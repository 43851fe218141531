(ns elle-si.jepsen-test
  "The Jepsen adapter, through a test-only jepsen.checker that declares the
  Checker protocol as Jepsen does."
  (:require [clojure.java.io :as io]
            [clojure.test :refer [deftest is testing]]
            [jepsen.checker :as checker]
            [elle-si.jepsen :as ej]
            [elle-si.test-util :refer [history la-op pair]])
  (:import (java.io File)))

(defn- test-map
  []
  {:name       "elle-si-adapter"
   :start-time (System/nanoTime)
   :store-base (str (File. (System/getProperty "java.io.tmpdir") "elle-si-store"))})

(deftest checker-test
  (is (ej/jepsen-available?))
  (let [c    (ej/checker {:consistency-models [:read-committed]})
        test (test-map)
        h    (history (concat [{:process :nemesis, :type :info, :f :start, :value nil}]
                              [{:process 0, :type :fail, :f :txn, :value [[:append :x 1]]}
                               (la-op 1 :ok "rx1")]))]
    (is (satisfies? checker/Checker c))
    (let [r (checker/check c test h {})]
      (is (= false (:valid? r)))
      ;; :empty-transaction-graph, as Elle (see list-append-test/g1a-test).
      (is (= [:G1a :empty-transaction-graph] (:anomaly-types r)))
      (testing "files land in the test's store directory, under elle/"
        (let [dir (io/file (:store-base test) (:name test) (str (:start-time test)) "elle")]
          (is (.isFile (io/file dir "index.html")))
          (is (.isFile (io/file dir "G1a.txt"))))))))

(deftest compose-test
  ;; Jepsen's compose runs checkers in parallel.
  (let [la (ej/list-append-checker {:consistency-models [:read-committed]})
        ok (history (mapcat (comp pair la-op) ["ax1" "rx1"]))
        r  (checker/check (checker/compose {:a la, :b la, :c la}) (test-map) ok {})]
    (is (= {:valid? true} (:a r) (:b r) (:c r)))
    (is (true? (:valid? r)))))
