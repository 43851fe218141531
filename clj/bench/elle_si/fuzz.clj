(ns elle-si.fuzz
  "Value-level fuzzing through JNI in one JVM (issue 53): for a given number
  of seconds, checks the semantic mutants the Rust side writes (tests/
  fuzz_cli.rs, write_mutants: values respelled as bigints, doubles,
  strings, keywords or nil, long and repeated list elements, processes
  reused after an :info, ...) with elle-si.list-append/check and
  elle-si.rw-register/check, each call with models, a timeout and
  sometimes a :directory drawn anew (the workload's checker as its micro-ops
  say, one call in eight the other), going round the folder as often as
  the time allows. Every call must return a result map or throw the
  IllegalArgumentException the bridge documents for a malformed history;
  an IllegalStateException (a panic in the library), any other throwable,
  or a result over the bound (:max-result-bytes is set to the README's 16
  bytes per byte of the history's file plus 16 MiB, and 64 KiB for the
  frame) is a failure, and the JVM must live to the end.

    FUZZ_MUTANTS=/tmp/mutants FUZZ_COUNT=5000 \\
      cargo test --release --test it fuzz_cli::write_mutants -- --ignored
    cargo build --release -p elle-si-jni
    lein fuzz /tmp/mutants 1800 [seed]

  Prints its figures every 1000 calls and at the end (calls, calls/s,
  verdicts, refusals by reason, failures, the JVM's peak RSS); exits 1 when
  anything failed. Failures are written to fuzz-failures.txt in the
  mutants' folder."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [elle-si.list-append :as la]
            [elle-si.rw-register :as rw])
  (:import (java.io File PushbackReader)
           (java.util Random)))

(def models
  "Elle's model names (elle.consistency-model/all-models and the causal
  ones elle-si adds), drawn from for each call."
  [:consistent-view :conflict-serializable :cursor-stability
   :forward-consistent-view :monotonic-atomic-view :monotonic-snapshot-read
   :monotonic-view :read-committed :read-uncommitted :repeatable-read
   :serializable :snapshot-isolation :strict-serializable :strong-serializable
   :update-serializable :strong-session-read-committed
   :strong-session-read-uncommitted :strong-session-serializable
   :strong-session-snapshot-isolation :strong-snapshot-isolation
   :strong-read-committed :strong-read-uncommitted :causal-cerone
   :parallel-snapshot-isolation :prefix :read-atomic :update-atomic
   :linearizable :sequential :causal :view-serializable])

(defn read-history
  "The op maps of a history file: one op a line, or one vector of them.
  nil when Clojure's reader refuses the text (a set with a repeated
  element, say)."
  [^File f]
  (try
    (with-open [r (PushbackReader. (io/reader f))]
      (let [forms (->> (repeatedly #(edn/read {:eof ::eof :default tagged-literal} r))
                       (take-while #(not= ::eof %))
                       doall)]
        (if (and (= 1 (count forms)) (vector? (first forms)))
          (first forms)
          (vec forms))))
    (catch RuntimeException _ nil)))

(defn- appends?
  "Whether a history's micro-ops hold an append: checked as list-append
  (mostly; as the other workload one call in eight)."
  [history]
  (boolean (some (fn [op] (let [v (:value op)]
                            (and (sequential? v)
                                 (some #(and (sequential? %) (= :append (first %))) v))))
                 history)))

(defn- bound
  "The most bytes a result may hold for a history file of n bytes: the
  README's 16 per byte plus 16 MiB, and a frame of 64 KiB."
  [n]
  (+ (* 16 n) (bit-shift-left 16 20) (bit-shift-left 64 10)))

(defn- shape
  "A refusal's message with its numbers left out: refusals by kind."
  [^String msg]
  (let [s (-> (or msg "") str/split-lines first (or "") (str/replace #"\d+" "#"))]
    (subs s 0 (min 100 (count s)))))

(defn- peak-rss-kib
  "The JVM's peak resident set (VmHWM), in KiB."
  []
  (some->> (String. (java.nio.file.Files/readAllBytes (.toPath (io/file "/proc/self/status"))))
           (re-find #"VmHWM:\s+(\d+) kB")
           second
           parse-long))

(defn- options
  [^Random rnd n dir]
  (cond-> {:consistency-models (vec (repeatedly (inc (.nextInt rnd 3))
                                                #(nth models (.nextInt rnd (count models)))))
           :timeout            (nth [0.5 2 2 5] (.nextInt rnd 4))
           :max-result-bytes   (bound n)}
    (zero? (.nextInt rnd 8)) (assoc :directory (str dir))))

(defn- check-one
  "Checks one history; :ok, [:refused why] or [:failed why]."
  [check opts history]
  (try
    (let [r (check opts history)]
      (if (and (map? r) (contains? #{true false :unknown} (:valid? r)))
        [:ok (:valid? r)]
        [:failed (str "not a result map: " (pr-str (if (map? r) (keys r) (type r))))]))
    (catch IllegalArgumentException e
      (if (str/includes? (str (.getMessage e)) ":max-result-bytes")
        [:failed (str "over the bound: " (.getMessage e))]
        [:refused (shape (.getMessage e))]))
    (catch IllegalStateException e
      [:failed (str "IllegalStateException (a panic in the library): " (.getMessage e))])
    (catch Throwable t
      [:failed (str (.getName (class t)) ": " (.getMessage t))])))

(defn- summary
  [{:keys [calls verdicts refused failures unreadable started]}]
  (let [secs (/ (- (System/nanoTime) started) 1e9)]
    (format "%d calls in %.0f s (%.1f calls/s): true/false/unknown %s, %d refused, %d failures, %d files Clojure cannot read; peak RSS %d MiB, heap %d MiB"
            calls secs (/ calls (max secs 1e-9))
            (pr-str (mapv #(get verdicts % 0) [true false :unknown]))
            (reduce + 0 (vals refused)) (count failures) unreadable
            (quot (or (peak-rss-kib) 0) 1024)
            (quot (- (.totalMemory (Runtime/getRuntime)) (.freeMemory (Runtime/getRuntime))) (* 1024 1024)))))

(defn -main
  [dir seconds & [seed]]
  (let [files (->> (.listFiles (io/file dir))
                   (filter #(str/ends-with? (.getName ^File %) ".edn"))
                   (sort-by #(.getName ^File %))
                   vec)
        _     (when (empty? files) (throw (ex-info (str "no mutants in " dir) {})))
        until (+ (System/nanoTime) (* (parse-long seconds) 1000000000))
        rnd   (Random. (long (or (some-> seed parse-long) 53)))
        out   (io/file dir "fuzz-folder")
        state (loop [i 0
                     s {:calls 0, :verdicts {}, :refused {}, :failures [], :unreadable 0
                        :started (System/nanoTime)}]
                (if (>= (System/nanoTime) until)
                  s
                  (let [^File f (nth files (mod i (count files)))
                        h       (read-history f)]
                    (if (nil? h)
                      (recur (inc i) (update s :unreadable inc))
                      (let [[name check] (if (not= (appends? h) (zero? (.nextInt rnd 8)))
                                           ["list-append" la/check]
                                           ["rw-register" rw/check])
                            opts  (options rnd (.length f) out)
                            [k v] (check-one check opts h)
                            s     (-> (case k
                                        :ok      (update-in s [:verdicts v] (fnil inc 0))
                                        :refused (update-in s [:refused v] (fnil inc 0))
                                        :failed  (update s :failures conj
                                                         (str (.getPath f) " " name " " (pr-str opts) ": " v)))
                                      (update :calls inc))]
                        (when (= k :failed)
                          (println "FAILED" (peek (:failures s))))
                        (when (zero? (mod (:calls s) 1000))
                          (println (summary s)))
                        (recur (inc i) s))))))]
    (println (summary state))
    (println "refusals by reason:")
    (doseq [[why n] (take 20 (sort-by (comp - val) (:refused state)))]
      (println (format "  %6d  %s" n why)))
    (spit (io/file dir "fuzz-failures.txt") (str/join "\n" (:failures state)))
    (shutdown-agents)
    (System/exit (if (empty? (:failures state)) 0 1))))
