(ns elle-si.bridge-test
  "The bridge itself: shared histories through both paths (file and
  in-memory encoding), bad input, panics, parallel checks, values of every
  kind, restored ops, output files."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [clojure.walk :as walk]
            [elle-si.core :as core]
            [elle-si.list-append :as la]
            [elle-si.native :as native]
            [elle-si.platform :as platform]
            [elle-si.rw-register :as rw]
            [elle-si.test-util :refer [history la-op pair verdict]])
  (:import (elle_si Native)
           (java.io File PushbackReader)))

(def shared
  "The shared histories, beside the checkout."
  "../../shared/histories")

(defn corpus?
  "Whether the shared histories are there. A clone without them skips the
  tests that read them, and says so once; with ELLE_SI_REQUIRE_CORPUS set
  (CI, which has them) their absence fails instead."
  []
  (let [here? (.isDirectory (io/file shared))]
    (when-not here?
      (when (seq (System/getenv "ELLE_SI_REQUIRE_CORPUS"))
        (throw (ex-info (str "ELLE_SI_REQUIRE_CORPUS is set but " shared " is missing") {})))
      (locking corpus?
        (when-not (System/getProperty "elle-si.corpus-note")
          (System/setProperty "elle-si.corpus-note" "said")
          (binding [*out* *err*]
            (println "note:" shared "is absent: the tests that read it are skipped")))))
    here?))

(defmacro when-corpus
  "Runs the body when the shared histories are there."
  [& body]
  `(when (corpus?) ~@body))

(defn read-history
  "Reads a history.edn (one op per line, comments allowed) into op maps."
  [path]
  (with-open [r (PushbackReader. (io/reader path))]
    (loop [ops []]
      (let [op (edn/read {:eof ::eof, :default tagged-literal} r)]
        (if (= ::eof op) ops (recur (conj ops op)))))))

(defn- op-indices
  "A result with each op (rebuilt from the file, or the history's own) in
  its anomalies replaced by its :index."
  [r]
  (walk/postwalk (fn [x] (if (and (map? x) (#{:invoke :ok :fail :info} (:type x)))
                           (:index x)
                           x))
                 r))

(deftest shared-history-test
  (when-corpus
  (testing "Elle's verdicts on its own sample histories"
    (doseq [[file model expected]
            [["elle/list-append-gh-30.edn" :snapshot-isolation {:valid? true}]
             ["elle/list-append-gh-30.edn" :serializable
              {:valid? false, :anomaly-types [:G2-item]}]
             ["elle/si-without-g-single.edn" :snapshot-isolation {:valid? true}]
             ["elle/si-without-g-single.edn" :serializable
              {:valid? false, :anomaly-types [:G2-item]}]]]
      (let [path (str shared "/" file)]
        (testing (str file " " model)
          (is (= expected (select-keys (la/check-file {:consistency-models [model]} path)
                                       [:valid? :anomaly-types])))
          (is (= expected (select-keys (la/check {:consistency-models [model]} (read-history path))
                                       [:valid? :anomaly-types])))))))))

(deftest file-and-memory-agree-test
  (when-corpus
  ;; A real Jepsen MongoDB history with nemesis ops and :info ops: reading
  ;; the file natively and encoding the parsed ops must give one answer.
  (let [path (str shared "/violations/mongodb-aborted-read.edn")
        ops  (read-history path)
        opts {:consistency-models [:read-committed]}
        from-file (la/check-file opts path)
        from-jvm  (la/check opts ops)]
    (is (some #{:G1a} (:anomaly-types from-file)))
    (is (= (op-indices from-file) (op-indices from-jvm)))
    (testing "nemesis ops are skipped"
      (is (some #(= :nemesis (:process %)) ops))
      (is (= (verdict from-jvm)
             (verdict (la/check opts (remove #(= :nemesis (:process %)) ops)))))))))

;; Streamed checks send the encoding in 64 KB chunks: a history this size
;; crosses in dozens of them, decoded while the rest is encoded.
(deftest streamed-in-chunks-test
  (when-corpus
  (let [path (str shared "/valid/list-append/fig10-sess20.edn")
        ops  (read-history path)
        opts {:consistency-models [:serializable]}
        whole (edn/read-string {:default tagged-literal}
                               (native/check-encoded (core/encode ops)
                                                     (pr-str (core/native-options opts))))
        streamed (la/check opts ops)]
    (is (> (.opsLength (core/encode ops)) (* 5 64 1024)))
    (is (= (verdict whole) (verdict streamed) (verdict (la/check-file opts path))))
    (is (= (count (:G2-item (:anomalies whole))) (count (:G2-item (:anomalies streamed)))))
    (testing "an op the encoder refuses after many chunks have gone"
      (is (thrown-with-msg? IllegalArgumentException #"history\[4000\]: expected an op map"
                            (la/check opts (conj ops [:ok])))))
    (testing "an error the decoder finds in a late chunk"
      (let [n   (count ops)
            op  {:process 99, :f :txn, :value (:value (first (filter #(= :ok (:type %)) ops)))}]
        (is (thrown-with-msg? IllegalArgumentException #"history\[4001\] \(:index 4001, :process 99\): value .* appended to key .* twice"
                              (la/check {:consistency-models [:read-committed]}
                                        (conj ops (assoc op :index n :type :invoke)
                                              (assoc op :index (inc n) :type :ok)))))))
    (testing "and checks go on"
      (is (= (verdict streamed) (verdict (la/check opts ops))))))))

(deftest malformed-history-test
  (testing "not an op"
    (is (thrown-with-msg? IllegalArgumentException #"history\[1\]: expected an op map .* found a vector \[:ok\]"
                          (la/check {} [(la-op "ax1") [:ok]]))))
  (testing "no :type"
    (is (thrown-with-msg? IllegalArgumentException #"history\[0\] \(:process 0\): client op has no :type"
                          (la/check {} [{:process 0, :value [[:append :x 1]]}]))))
  (testing "a completion with no invocation"
    (is (thrown-with-msg? IllegalArgumentException
                          #"history\[1\] \(:index 1, :process 1\): a :ok completion for process 1, which has no outstanding invocation"
                          (la/check {} (history [{:process 0, :type :invoke, :value [[:append :x 1]]}
                                                 {:process 1, :type :ok, :value [[:append :x 1]]}])))))
  (testing "a micro-op that is not one"
    (is (thrown-with-msg? IllegalArgumentException #"history\[0\].*unknown function a keyword :frob"
                          (la/check {} [{:process 0, :type :ok, :value [[:frob :x 1]]}]))))
  (testing "a value appended twice, with both ops named"
    (let [e (is (thrown? IllegalArgumentException
                         (la/check {} (history [(la-op "ax1") (la-op 1 :ok "ax1")]))))]
      (is (re-find #"history\[1\] \(:index 1, :process 1\): value 1 appended to key :x twice" (.getMessage ^Exception e)))
      (is (re-find #"written before here: history\[0\]" (.getMessage ^Exception e)))))
  (testing "an unknown model"
    (is (thrown-with-msg? IllegalArgumentException #"unknown consistency model `snapshot-isolated`"
                          (la/check {:consistency-models [:snapshot-isolated]} [(la-op "ax1")]))))
  (testing "a missing file, a malformed file"
    (is (thrown-with-msg? IllegalArgumentException #"no-such-history.edn"
                          (la/check-file {} "no-such-history.edn")))
    (let [f (File/createTempFile "elle-si-bad" ".edn")]
      (try
        (spit f "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 1 :value [[:append :x\n")
        (is (thrown-with-msg? IllegalArgumentException #"elle-si-bad.*\.edn:\d+:\d+: "
                              (la/check-file {} (str f))))
        (finally (.delete f)))))
  (testing "the JVM carries on"
    (is (= {:valid? true} (la/check {:consistency-models [:read-committed]} (history [(la-op "ax1") (la-op "rx1")]))))))

(deftest panic-test
  (native/ensure-loaded!)
  (is (thrown-with-msg? IllegalStateException
                        #"elle-si internal error.*deliberate panic for the tests: formatted 42 \(at jni/src/ffi\.rs:\d+:\d+\)"
                        (Native/panicForTest (str "formatted " 42))))
  (testing "and then checks go on"
    (is (= {:valid? true} (la/check {:consistency-models [:read-committed]} (history [(la-op "ax1") (la-op "rx1")]))))))

(defn- message
  [f]
  (try (f) nil (catch IllegalArgumentException e (.getMessage e))))

(deftest clojure-words-test
  ;; The checker's advice names the Clojure library's functions and
  ;; options, not the command line's flags.
  (let [flag #"(^|\s)-[a-z]\b|--[a-z]"]
    (testing "a micro-op of the other workload"
      (let [m (message #(rw/check {} [{:process 0, :type :ok, :f :txn, :value [[:append :x 1]]}]))]
        (is (re-find #"does not belong in a rw-register history" m))
        (is (re-find #"help: elle-si.rw-register/check .*elle-si.core/check .* without :workload detect the workload" m))
        (is (not (re-find flag m)) m)))
    (let [dir (File. (System/getProperty "java.io.tmpdir") (str "elle-si-words-" (System/nanoTime)))
          f   (File. dir "history.bin")]
      (.mkdirs dir)
      (try
        (testing "a file of no format elle-si reads"
          (spit f "\u0001\u0002 not a history")
          (let [m (message #(la/check-file {} (str f)))]
            (is (re-find #"cannot tell the format of this file" m))
            (is (re-find #"help: check-file reads Jepsen EDN" m))
            (is (not (re-find flag m)) m)))
        (testing "a directory holding no history"
          (let [m (message #(la/check-file {} (str dir)))]
            (is (re-find #"a directory, but not a Jepsen run" m))
            (is (re-find #"help: check-file takes a history file" m))
            (is (not (re-find flag m)) m)))
        (finally (.delete f) (.delete dir))))))

(deftest missing-library-message-test
  (let [msg (.getMessage ^Exception (#'native/missing ["somewhere: not built"]))]
    (is (str/includes? msg (str "for this platform, " (platform/platform))))
    (is (str/includes? msg "cargo build --release -p elle-si-jni"))
    (is (str/includes? msg "lein install"))
    (is (str/includes? msg "ELLE_SI_LIB"))
    (is (str/includes? msg "somewhere: not built"))))

(deftest platform-test
  ;; The jar's folder for each platform, from the JVM's os.name and os.arch.
  (is (= "linux-x86_64" (platform/platform "Linux" "amd64")))
  (is (= "linux-aarch64" (platform/platform "Linux" "aarch64")))
  (is (= "macos-aarch64" (platform/platform "Mac OS X" "aarch64")))
  (is (= "windows-x86_64" (platform/platform "Windows 11" "amd64")))
  (is (= "elle_si/native/linux-x86_64/libelle_si_jni.so" (platform/library-resource "linux-x86_64")))
  (is (= "elle_si/native/macos-aarch64/libelle_si_jni.dylib" (platform/library-resource "macos-aarch64")))
  (is (nil? (platform/library-resource "freebsd-x86_64")))
  (testing "every cross-build target names a platform the loader can look up"
    (is (every? platform/library-resource (vals platform/rust-targets)))))

(deftest values-round-trip-test
  ;; Keys and elements that are not small integers cross as EDN text and
  ;; come back equal in the anomalies.
  (let [k    [:anti 1]
        big  123456789012345678901234N
        [w r :as h] (history [{:process 0, :type :fail, :f :txn
                               :value [[:append k "s"] [:append "key" big]]}
                              {:process 1, :type :ok, :f :txn
                               :value [[:r k ["s"]] [:r "key" [big]]]}])
        res (la/check {:consistency-models [:read-committed]} h)
        g1a (:G1a (:anomalies res))]
    (is (= #{[:r k ["s"]] [:r "key" [big]]} (set (map :mop g1a))))
    (is (= #{"s" big} (set (map :element g1a))))
    (testing "the anomalies hold the history's own ops"
      (is (every? #(identical? r (:op %)) g1a))
      (is (every? #(identical? w (:writer %)) g1a)))))

(deftest parallel-test
  ;; Jepsen's compose runs checkers under pmap: calls share nothing.
  (let [hs (for [i (range 16)]
             (history (mapcat (comp pair la-op)
                              (if (even? i) ["ax1" "rx1"] ["ax1" "ax2" "rx12" "rx1"]))))
        opts {:consistency-models [:read-committed]}
        serial (mapv #(la/check opts %) hs)]
    (is (= serial (vec (pmap #(la/check opts %) hs))))))

(deftest threads-test
  ;; :threads sizes the native pool the check runs in; the result is the
  ;; same on one thread as on two, and a bad count is refused by name.
  (let [h    (history (mapcat (comp pair la-op) ["ax1" "ax2" "rx12" "rx1" "ay1ax3" "rx1" "ry1"]))
        opts {:consistency-models [:serializable :snapshot-isolation :causal-cerone]}
        one  (la/check (assoc opts :threads 1) h)]
    (is (false? (:valid? one)))
    (is (= one (la/check (assoc opts :threads 2) h)))
    (is (= one (la/check opts h)))
    (doseq [bad [0 -1 "x" 1.5]]
      (is (thrown-with-msg? IllegalArgumentException #":threads must be a whole number"
                            (la/check (assoc opts :threads bad) h))
          (pr-str bad)))))

(deftest directory-test
  (let [dir (File. (System/getProperty "java.io.tmpdir") (str "elle-si-dir-" (System/nanoTime)))
        h   (history [{:process 0, :type :fail, :f :txn, :value [[:append :x 1]]} (la-op "rx1")])
        r   (la/check {:consistency-models [:read-committed], :directory (str dir)} h)]
    ;; No committed transaction depends on another: Elle's
    ;; :empty-transaction-graph beside the aborted read.
    (is (= [:G1a :empty-transaction-graph] (:anomaly-types r)))
    ;; Elle's folder, written by the native side: prose, a picture of the
    ;; aborted read, and the page.
    (is (str/includes? (slurp (io/file dir "G1a.txt")) "G1a #0"))
    (is (.isFile (io/file dir "G1a" "0.svg")))
    (is (str/includes? (slurp (io/file dir "index.html")) "G1a"))))

(deftest plot-scc-test
  ;; A write skew: with :plot-scc? its component is drawn too, once.
  (let [dir (File. (System/getProperty "java.io.tmpdir") (str "elle-si-scc-" (System/nanoTime)))
        h   (history [{:process 0, :type :ok, :f :txn, :value [[:r :x []] [:append :y 1]]}
                      {:process 1, :type :ok, :f :txn, :value [[:r :y []] [:append :x 1]]}
                      {:process 2, :type :ok, :f :txn, :value [[:r :x [1]] [:r :y [1]]]}])
        r   (la/check {:consistency-models [:serializable], :directory (str dir)
                       :plot-scc? true} h)]
    (is (= false (:valid? r)))
    (is (.isFile (io/file dir "sccs" "0.svg")))
    (is (str/includes? (slurp (io/file dir "G2-item.txt")) "component: sccs/0.svg"))))

(deftest plot-format-test
  ;; A format elle-si cannot draw is refused, never ignored.
  (is (thrown-with-msg? IllegalArgumentException #":pdf"
                        (la/check {:consistency-models [:read-committed], :directory "/tmp/x"
                                   :plot-format :pdf}
                                  (history [(la-op "ax1") (la-op "rx1")])))))

(deftest timings-test
  (let [r (la/check {:consistency-models [:read-committed], :timings? true}
                    (history [(la-op "ax1") (la-op "rx1")]))
        t (:elle-si/timings r)]
    (is (every? #(nat-int? (get t %))
                [:encode-ns :feed-ns :native-ns :wait-ns :finish-compile-ns :read-ns :decode-ns :compile-ns
                 :check-ns :render-ns]))
    (is (= 2 (:txns t)))))

(deftest rw-register-file-test
  (when-corpus
  ;; Elle calls this valid; elle-si also flags the read of 3, which no one
  ;; wrote, as a thin-air read.
  (let [path (str shared "/elle/rw-register.edn")
        r    (rw/check-file {:consistency-models [:serializable]} path)]
    (is (= {:valid? false, :anomaly-types [:thin-air-read], :not #{:read-uncommitted}}
           (verdict r)))
    (is (= [[:r :x 3]] (map :mop (:thin-air-read (:anomalies r)))))
    (is (= (verdict r)
           (verdict (rw/check {:consistency-models [:serializable]} (read-history path))))))))

(deftest invocation-values-test
  ;; The encoder sends invocations without their micro-ops (completions
  ;; repeat them). A :fail without a :value and an invocation that never
  ;; completes must still say what they attempted: the aborted append makes
  ;; the read of x a G1a, and the dangling append of y is what the read of y
  ;; saw (not a thin-air read).
  (let [h    [{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
              {:index 1, :type :fail, :process 0, :f :txn}
              {:index 2, :type :invoke, :process 1, :f :txn, :value [[:append :y 1]]}
              {:index 3, :type :invoke, :process 2, :f :txn, :value [[:r :x nil] [:r :y nil]]}
              {:index 4, :type :ok, :process 2, :f :txn, :value [[:r :x [1]] [:r :y [1]]]}]
        opts {:consistency-models [:read-committed]}
        file (File/createTempFile "elle-si-invocations" ".edn")]
    (try
      (spit file (str/join "\n" (map pr-str h)))
      (let [from-jvm  (la/check opts h)
            from-file (la/check-file opts (str file))]
        (is (= [:G1a] (:anomaly-types from-jvm)))
        (is (= (op-indices from-file) (op-indices from-jvm))))
      (finally (.delete file)))))

(deftest result-bound-test
  ;; One transaction reading 5,000 elements nobody appended: 5,000
  ;; thin-air reads, 1,000 listed and the rest counted in :also; a result
  ;; over :max-result-bytes is an exception naming the limit.
  (let [h (history [{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0}
                    {:type :ok, :f :txn, :value [[:r 1 (vec (range 1 5001))]], :process 0}])
        r (la/check {:consistency-models [:read-committed]} h)
        listed (get-in r [:anomalies :thin-air-read])]
    (is (= false (:valid? r)))
    (is (= 1000 (count listed)))
    (is (= 4000 (:also (last listed))))
    (is (thrown-with-msg? IllegalArgumentException #":max-result-bytes limit of 4096 bytes"
                          (la/check {:consistency-models [:read-committed], :max-result-bytes 4096} h)))
    (is (thrown-with-msg? IllegalArgumentException #":max-result-bytes must be"
                          (la/check {:consistency-models [:read-committed], :max-result-bytes -1} h)))))
