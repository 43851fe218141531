(ns elle-si.bench
  "Measures the bridge on a generated list-append history: encoding in the
  JVM, the JNI crossing, decoding in Rust, checking, rendering and reading
  the result back; and the CLI on the same history written to a file.

    lein bench [txns] [model]    (default 50000 transactions = 100k ops)

  Needs target/release/elle-si (cargo build --release --features jni)."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [elle-si.list-append :as la])
  (:import (java.util Random)))

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
        emit!     (fn [op] (.add out (assoc op :index (.size out) :time (vswap! t + 1000))))
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

(defn -main
  [& args]
  (let [n     (Long/parseLong (or (first args) "50000"))
        model (keyword (or (second args) "serializable"))
        h     (generate n 42)
        file  (io/file (System/getProperty "java.io.tmpdir") (str "elle-si-bench-" n ".edn"))
        opts  {:consistency-models [model], :timings? true}
        cli   (-> (io/file "../target/release/elle-si") .getCanonicalPath)]
    (with-open [w (io/writer file)]
      (binding [*out* w] (doseq [op h] (prn op))))
    (println (format "history: %d ops, %d transactions, %.1f MB as EDN; model %s"
                     (count h) n (/ (.length file) 1e6) (name model)))
    (dotimes [_ 3] (la/check opts h))            ; warm the JIT
    (let [runs (vec (for [_ (range 7)]
                      (let [t0 (System/nanoTime)
                            r  (la/check opts h)
                            t1 (System/nanoTime)]
                        (assoc (:elle-si/timings r) :wall-ns (- t1 t0) :valid? (:valid? r)))))
          med  (fn [k] (median (map k runs)))
          transfer (- (med :native-ns) (med :decode-ns) (med :check-ns) (med :render-ns))
          overhead (+ (med :encode-ns) transfer (med :decode-ns))
          cli-runs (vec (for [_ (range 7)]
                          (let [t0 (System/nanoTime)
                                p  (.start (doto (ProcessBuilder. [cli "check" "-o" "edn" "-c" (name model) (str file)])
                                             (.redirectOutput (java.lang.ProcessBuilder$Redirect/DISCARD))
                                             (.redirectErrorStream true)))]
                            (.waitFor p)
                            (- (System/nanoTime) t0))))
          cli-ms (ms (median cli-runs))]
      (println "verdict:" (:valid? (first runs)))
      (println (format "JVM (median of 7): encode %.1f ms, JNI transfer %.1f ms, decode+compile %.1f ms, check %.1f ms, render %.1f ms, EDN read %.1f ms; whole la/check %.1f ms"
                       (ms (med :encode-ns)) (ms transfer) (ms (med :decode-ns)) (ms (med :check-ns))
                       (ms (med :render-ns)) (ms (med :read-ns)) (ms (med :wall-ns))))
      (println (format "bridge overhead (encode + transfer + decode): %.1f ms = %.0f%% of check time"
                       (ms overhead) (* 100 (/ (double overhead) (max 1 (med :check-ns))))))
      (println (format "CLI `elle-si check` on the same history (median of 7, process start included): %.1f ms; JVM/CLI = %.2f"
                       cli-ms (/ (ms (med :wall-ns)) cli-ms))))
    (shutdown-agents)))
