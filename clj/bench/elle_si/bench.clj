(ns elle-si.bench
  "Measures the bridge on a generated list-append history: encoding in the
  JVM, the JNI crossing, decoding in Rust, checking, rendering and reading
  the result back; and the CLI on the same history written to a file.

    lein bench [txns] [model]    (default 50000 transactions = 100k ops)

  Needs target/release/elle-si and the bridge (cargo build --release --workspace)."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [elle-si.core :as core]
            [elle-si.list-append :as la])
  (:import (elle_si.bench Walk)
           (java.util Random)))

(defn generate
  "A strict-serializable list-append history of n transactions by 10
  processes, each with up to 10 invocations outstanding: a transaction takes
  effect when it completes. Micro-ops are 1-4 reads or appends over 10
  active keys; a key is retired after 32 appends."
  [n seed]
  (let [rnd       (Random. seed)
        procs     10
        state     (java.util.HashMap.)
        active    (long-array (range 10))
        next-key  (volatile! 10)
        appends   (java.util.HashMap.)
        pending   (object-array procs)
        out       (java.util.ArrayList.)
        t         (volatile! 0)
        emit!     (fn [op] (.add out (assoc op :index (long (.size out)) :time (vswap! t + 1000))))
        gen-txn   (fn []
                    (vec (for [_ (range (inc (.nextInt rnd 4)))]
                           (let [slot (.nextInt rnd 10)
                                 k    (aget active slot)]
                             (if (.nextBoolean rnd)
                               [:r k nil]
                               (let [c (long (or (.get appends k) 0))]
                                 (if (>= c 32)
                                   (let [k' (vswap! next-key inc)]
                                     (aset active slot (long k'))
                                     (.put appends k' 1)
                                     [:append k' 1])
                                   (do (.put appends k (inc c))
                                       [:append k (inc c)]))))))))
        apply!    (fn [txn]
                    (mapv (fn [[f k v :as mop]]
                            (case f
                              :r      [:r k (.get state k)]
                              :append (do (.put state k (conj (or (.get state k) []) v))
                                          mop)))
                          txn))]
    (loop [started 0]
      (let [p (.nextInt rnd procs)]
        (cond
          (aget pending p)
          (let [txn (aget pending p)]
            (aset pending p nil)
            (emit! {:type :ok, :process p, :f :txn, :value (apply! txn)})
            (recur started))

          (< started n)
          (let [txn (gen-txn)]
            (aset pending p txn)
            (emit! {:type :invoke, :process p, :f :txn, :value txn})
            (recur (inc started)))

          (some identity pending) (recur started)
          :else (vec out))))))

(defn- median [xs] (nth (sort xs) (quot (count xs) 2)))

(defn- ms [ns] (/ (double ns) 1e6))

(def ^:private thread-mx (java.lang.management.ManagementFactory/getThreadMXBean))

(defn- cpu-ns
  "CPU time of this thread: the check runs on it, in Java and in Rust."
  []
  (.getCurrentThreadCpuTime ^java.lang.management.ThreadMXBean thread-mx))

(defn- run-cli
  "Runs the CLI once under /usr/bin/time; [wall-ns cpu-ns] (CPU: user +
  system of the process, or nil without /usr/bin/time)."
  [cmd]
  (let [timed? (.canExecute (io/file "/usr/bin/time"))
        cmd    (if timed? (into ["/usr/bin/time" "-f" "elle-si-cpu %U %S"] cmd) cmd)
        t0     (System/nanoTime)
        p      (.start (doto (ProcessBuilder. ^java.util.List cmd)
                         (.redirectOutput (java.lang.ProcessBuilder$Redirect/DISCARD))))
        err    (slurp (.getErrorStream p))
        _      (.waitFor p)
        wall   (- (System/nanoTime) t0)
        [_ u s] (re-find #"elle-si-cpu ([\d.]+) ([\d.]+)" err)]
    [wall (when u (long (* 1e9 (+ (Double/parseDouble u) (Double/parseDouble s)))))]))

(defn- summary
  "\"median 12.3 (min 10.1)\" ms of a per-run figure."
  [xs]
  (format "%.1f (min %.1f)" (ms (median xs)) (ms (apply min xs))))

(defn -main
  [& args]
  (let [n     (Long/parseLong (or (first args) "50000"))
        model (keyword (or (second args) "serializable"))
        h     (generate n 42)
        file  (io/file (System/getProperty "java.io.tmpdir") (str "elle-si-bench-" n ".edn"))
        opts  {:consistency-models [model], :timings? true}
        cli   (-> (io/file "../target/release/elle-si") .getCanonicalPath)
        cmd   [cli "check" "-o" "edn" "-c" (name model) (str file)]]
    (with-open [w (io/writer file)]
      (binding [*out* w] (doseq [op h] (prn op))))
    (println (format "history: %d ops, %d transactions, %.1f MB as EDN; model %s"
                     (count h) n (/ (.length file) 1e6) (name model)))
    (dotimes [_ 3] (la/check opts h))            ; warm the JIT
    (dotimes [_ 20] (Walk/walk h))
    (let [encode-cpu (vec (for [_ (range 9)]
                            (let [c0 (cpu-ns)] (core/encode h) (- (cpu-ns) c0))))
          walk-cpu   (vec (for [_ (range 9)]
                            (let [c0 (cpu-ns)] (Walk/walk h) (- (cpu-ns) c0))))
          runs (vec (for [_ (range 9)]
                      (let [c0 (cpu-ns)
                            t0 (System/nanoTime)
                            r  (la/check opts h)
                            t1 (System/nanoTime)
                            c1 (cpu-ns)
                            t  (:elle-si/timings r)
                            ;; The check is streamed: Rust decodes and
                            ;; compiles each chunk while the JVM encodes the
                            ;; next. What the bridge adds to the wall time is
                            ;; the encoding (with handing its chunks over)
                            ;; and, of the final native call, everything but
                            ;; checking, rendering and the compiler's last
                            ;; step: the decoder's tail and the result's
                            ;; transfer.
                            tail (- (:native-ns t) (:check-ns t) (:render-ns t)
                                    (:finish-compile-ns t))]
                        (assoc t
                               :valid? (:valid? r)
                               :wall-ns (- t1 t0)
                               ;; This thread's CPU, and the decoder thread's
                               ;; busy time (its CPU, on an idle machine).
                               :cpu-ns (+ (- c1 c0) (:decode-ns t) (:compile-ns t))
                               :tail-ns tail
                               :overhead-ns (+ (:encode-ns t) tail)
                               ;; The work of the bridge, wherever it ran.
                               :bridge-work-ns (+ (:encode-ns t) (:decode-ns t))))))
          col  (fn [k] (map k runs))
          ratios (map #(/ (double (:overhead-ns %)) (max 1 (:check-ns %))) runs)
          cli-runs (vec (for [_ (range 9)] (run-cli cmd)))
          cli-wall (map first cli-runs)
          cli-cpu  (keep second cli-runs)]
      (println "verdict:" (:valid? (first runs)))
      (println "per-run figures in ms, median of 9 (and min):")
      (doseq [[label k] [["  encode (JVM, with feeding)" :encode-ns]
                         ["    of which feeding       " :feed-ns]
                         ["  decode (Rust thread)     " :decode-ns]
                         ["  compile (Rust thread)    " :compile-ns]
                         ["  final native call        " :native-ns]
                         ["    waiting for decoder    " :wait-ns]
                         ["    compiler's last step   " :finish-compile-ns]
                         ["    check                  " :check-ns]
                         ["    render                 " :render-ns]
                         ["  EDN read (JVM)           " :read-ns]
                         ["  whole la/check, wall     " :wall-ns]
                         ["  whole la/check, CPU (both threads)" :cpu-ns]]]
        (println label (summary (col k))))
      (println "  encode alone, CPU        " (summary encode-cpu))
      ;; What any encoder must do at least: read the ops' fields and
      ;; elements off the JVM's objects.
      (println (format "  walk alone, CPU           %s = %.0f%% of check time (reading what the encoder reads, writing nothing: the floor under any encoding)"
                       (summary walk-cpu)
                       (* 100 (/ (double (median walk-cpu)) (max 1 (median (col :check-ns)))))))
      ;; Compiling the ops into the history model is not the bridge's cost:
      ;; the CLI compiles the same transactions after parsing its file.
      (println (format "bridge overhead on the wall clock (encode + handing over + decoder tail + result transfer; compiling is the checker's, as in the CLI): %s ms = %.0f%% of check time (median of per-run ratios; min %.0f%%)"
                       (summary (col :overhead-ns))
                       (* 100 (median ratios)) (* 100 (apply min ratios))))
      (println (format "bridge work wherever it ran (encode + decode): %s ms = %.0f%% of check time"
                       (summary (col :bridge-work-ns))
                       (* 100 (median (map #(/ (double (:bridge-work-ns %)) (max 1 (:check-ns %))) runs)))))
      (println (format "CLI `%s`: wall %s ms (process start and file read included)%s"
                       (str/join " " (cons "elle-si" (rest cmd)))
                       (summary cli-wall)
                       (if (seq cli-cpu) (str ", CPU " (summary cli-cpu) " ms") "")))
      (println (format "JVM/CLI: wall %.2f%s"
                       (/ (double (median (col :wall-ns))) (median cli-wall))
                       (if (seq cli-cpu)
                         (format ", CPU %.2f" (/ (double (median (col :cpu-ns))) (median cli-cpu)))
                         ""))))
    (shutdown-agents)))
