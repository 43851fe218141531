(ns elle-si.jar-test
  "The installed jar, as a Jepsen project uses it: elle-si comes from the
  jar in the local Maven repository, and so does its native library, with
  neither ELLE_SI_LIB nor a java.library.path holding the library."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [elle-si.list-append :as la]
            [elle-si.native :as native]
            [elle-si.platform :as platform]))

(deftest loads-from-the-jar-test
  (testing "nothing points at a library outside the jar"
    (is (nil? (System/getenv "ELLE_SI_LIB")))
    (is (not-any? #(.isFile (io/file % native/lib-file))
                  (.split (System/getProperty "java.library.path") java.io.File/pathSeparator))))
  (testing "the Clojure library is the installed jar"
    (is (= "jar" (.getProtocol (io/resource "elle_si/core.clj"))))
    (is (str/includes? (str (io/resource "elle_si/core.clj")) "/.m2/")))
  (let [{:keys [from version]} (native/ensure-loaded!)]
    (testing "the native library came from the jar, for this platform"
      (is (str/starts-with? from "jar:file:"))
      (is (str/ends-with? from (str "!/" (platform/library-resource (platform/platform))))))
    (is (re-matches #"\S+ \d+" version))))

(deftest checks-a-history-test
  (let [h [{:index 0, :process 0, :type :invoke, :f :txn, :value [[:append :x 1]]}
           {:index 1, :process 0, :type :fail, :f :txn, :value [[:append :x 1]]}
           {:index 2, :process 1, :type :invoke, :f :txn, :value [[:r :x nil]]}
           {:index 3, :process 1, :type :ok, :f :txn, :value [[:r :x [1]]]}]
        r (la/check {:consistency-models [:serializable]} h)]
    (is (= false (:valid? r)))
    ;; (Elle's :empty-transaction-graph beside it: no committed
    ;; transaction depends on another.)
    (is (= [:G1a :empty-transaction-graph] (:anomaly-types r)))
    (is (identical? (nth h 3) (:op (first (:G1a (:anomalies r))))))
    (testing "and with the append committed, the read is fine"
      (is (= {:valid? true}
             (select-keys (la/check {:consistency-models [:serializable]}
                                    (assoc-in h [1 :type] :ok))
                          [:valid? :anomaly-types]))))))
