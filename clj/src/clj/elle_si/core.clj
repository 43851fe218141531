(ns elle-si.core
  "Checks Jepsen histories with elle-si's native checker and returns Elle's
  result map. elle-si.list-append and elle-si.rw-register are the drop-ins
  for Elle's namespaces; this is what they share.

  Options are Elle's:

    :consistency-models   Models the history should obey. Defaults to
                          [:strict-serializable], as in Elle; nil checks no
                          model.
    :anomalies            Anomalies to prohibit, each with every anomaly
                          implying it, with or without models: the checkers
                          that can find them look for them. An anomaly no
                          checker can find is refused by name rather than
                          left unchecked.
    :cycle-search-timeout Milliseconds: elle-si gives up after this long
                          on the whole check (Elle: per cycle search), and
                          answers :valid? :unknown.
    :directory            Where to write Elle's elle/ folder (by the
                          native side): <type>.txt explaining each anomaly
                          in prose, <type>/<n>.svg and .dot pictures, and
                          index.html, one page showing it all.
    :plot-format          :svg (the default) or :png (rasterized by
                          resvg, no Graphviz needed); any other is refused.
    :max-plot-bytes       Pictures whose DOT is longer are left out (65536).
    :plot-timeout         Milliseconds: pictures that take longer to draw
                          are left out (5000).
    :linearizable-keys?   rw-register: assume each key linearizable. A
                          transaction's final value of a key (its last
                          write, else its read) comes no later in the
                          key's version order than the first value of
                          every transaction invoked after it completed.
    :sequential-keys?     rw-register: the same along each process's order
                          (each key sequentially consistent).
    :wfr-keys?            rw-register: within a transaction, its write of a
                          key follows its read of it.

  and ours:

    :timeout              Seconds, like the CLI's --timeout.
    :plot-scc?            With :directory: also draw, for each cycle
                          drawn, the whole strongly connected component it
                          lies in (sccs/<n>.svg, at most 24 transactions
                          drawn, the rest said by count).
    :workload             :list-append or :rw-register (default: detected).
    :threads              How many native threads the check runs on (a
                          whole number from 1 to 1024; another is refused
                          by name). Default: one per core, like the CLI's
                          -j. Checks asking the same number share one pool
                          of that size, so checkers run side by side (as
                          Jepsen's compose runs them) never start more
                          native checking threads than that between them.
    :timings?             Add :elle-si/timings to the result, in ns:
                          encoding (with the handing over of its chunks,
                          :feed-ns), the native call at the end
                          (:native-ns), of which waiting for the decoding
                          thread (:wait-ns, whose last step is compiling,
                          :finish-compile-ns), checking and rendering; the
                          decoding thread's own work (:decode-ns and
                          :compile-ns, beside the encoding); and reading
                          the result. check-file: decoding is reading the
                          file and compiling it.

  The three key options each infer version orders before anything is
  solved, and orders that contradict each other are Elle's
  :cyclic-versions (invalid at every model). A list-append history takes
  them as Elle's list-append does: its lists show each key's version
  order, and nothing more is inferred.

  Elle's :transaction-order and :additional-graphs are refused by name
  (IllegalArgumentException) when given (not empty): elle-si does not
  take them, and checked without them a history could get another
  verdict than Elle's. Session and real-time order come with the model:
  the strong-session and strict models. Other keys are ignored, as Elle
  ignores them."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [elle-si.native :as native])
  (:import (elle_si HistoryEncoder NativeStream)))

(defn- encode-into
  ^HistoryEncoder [history ^HistoryEncoder enc]
  ;; Values go over as their printed EDN: it must be complete and plain.
  (binding [*print-length*         nil
            *print-level*          nil
            *print-meta*           false
            *print-dup*            false
            *print-readably*       true
            *print-namespace-maps* false]
    (.finish ^HistoryEncoder (reduce (fn [^HistoryEncoder e op] (.add e op)) enc history))))

(def ^:private chunk-bytes
  "How much of the encoding leaves at a time when streamed: small enough
  that the native decoder finishes soon after the last op, large enough
  that the calls across cost nothing."
  (* 64 1024))

(defn encode
  "Encodes a history (any reducible collection of op maps, such as a Jepsen
  IHistory) for the native checker: whole, or, with a sink (such as a
  NativeStream), in chunks as it goes."
  (^HistoryEncoder [history]
   (encode-into history (HistoryEncoder. (if (counted? history) (int (min (count history) Integer/MAX_VALUE)) 0))))
  (^HistoryEncoder [history sink]
   (encode-into history (HistoryEncoder. ^elle_si.HistoryEncoder$Sink sink (int chunk-bytes)))))

(defn- model-names
  [xs]
  (mapv (fn [x] (if (keyword? x) (name x) (str x))) xs))

(defn- refuse
  [& parts]
  (throw (IllegalArgumentException. ^String (apply str parts))))

(defn- amount
  "Option k of opts, a non-negative number (nil when not given), as a long:
  scaled by scale and rounded up, so that a fraction of a millisecond is
  not taken for none."
  [opts k scale]
  (when-some [x (get opts k)]
    (when-not (and (number? x) (not (neg? x)))
      (refuse k " must be a non-negative number, not " (pr-str x)))
    (long (Math/ceil (* (double x) scale)))))

(def ^:private unhonoured
  "Elle's options that add to what a check assumes or infers, which elle-si
  does not: each refused by name when given, rather than checked without
  it (a verdict that could differ from Elle's)."
  {:transaction-order  "Elle then takes version orders from the database's own transaction order"
   :additional-graphs  "Elle then adds those graphs' edges to every check; elle-si adds session or real-time order by the model named (the strong-session and strict models)"})

(defn- refuse-unhonoured
  [opts]
  (doseq [[k why] unhonoured]
    (let [v (get opts k)]
      (when (and v (not (and (coll? v) (empty? v))))
        (refuse "elle-si does not take " k " " (pr-str v) ": " why
                ", and elle-si infers each version order from what the reads observe "
                "(and the key options) alone. Leave " k " out, or check with Elle.")))))

(defn native-options
  "The options the native checker reads, from Elle's. Throws
  IllegalArgumentException for an option elle-si cannot honour (see
  unhonoured) or a timeout or size that is not a non-negative number."
  [opts]
  (refuse-unhonoured opts)
  (let [cst (amount opts :cycle-search-timeout 1)
        t   (amount opts :timeout 1000)
        ms  (cond (and cst t) (min cst t)
                  cst         cst
                  :else       t)
        max-plot-bytes (amount opts :max-plot-bytes 1)
        plot-timeout   (amount opts :plot-timeout 1)
        max-result     (amount opts :max-result-bytes 1)]
    (cond-> {:op-refs   (boolean (:op-refs opts))
             :models    (if (contains? opts :consistency-models)
                          (model-names (:consistency-models opts))
                          ["strict-serializable"])
             :anomalies (model-names (:anomalies opts))
             :timings   (boolean (:timings? opts))
             :linearizable-keys (boolean (:linearizable-keys? opts))
             :sequential-keys   (boolean (:sequential-keys? opts))
             :wfr-keys          (boolean (:wfr-keys? opts))
             :plot-scc          (boolean (:plot-scc? opts))}
      ms               (assoc :timeout-ms ms)
      (:workload opts) (assoc :workload (name (:workload opts)))
      (:directory opts) (assoc :directory (str (:directory opts)))
      (:plot-format opts) (assoc :plot-format (name (:plot-format opts)))
      max-plot-bytes   (assoc :max-plot-bytes max-plot-bytes)
      plot-timeout     (assoc :plot-timeout-ms plot-timeout)
      max-result       (assoc :max-result-bytes max-result)
      (:name opts)     (assoc :name (str (:name opts)))
      ;; Passed as given: the native side refuses a bad one by name.
      (some? (:threads opts)) (assoc :threads (:threads opts)))))

(defn- op-finder
  "A function from an op's :index (its position, when ops have no :index) to
  the history's own op. Jepsen histories are densely indexed, so nth finds
  the op; otherwise one pass over the history builds a map, on first use."
  [history]
  (let [indexed  (when (instance? clojure.lang.Indexed history) history)
        by-index (delay (persistent!
                          (second
                            (reduce (fn [[pos m] op]
                                      (let [i (:index op)]
                                        [(inc pos) (assoc! m (if (integer? i) (long i) pos) op)]))
                                    [0 (transient {})]
                                    history))))]
    (fn [i]
      (let [i  (long i)
            op (when (and indexed (< -1 i (count indexed)))
                 (nth indexed i))]
        (if (and op (let [j (:index op)] (or (nil? j) (= i j))))
          op
          (get @by-index i {:index i}))))))

(defn- read-result
  "Reads the result's EDN. With a history, #elle-si/op <index> is the
  history's own op, as Elle's results hold them."
  [^String s history]
  (edn/read-string {:readers (if history
                               {'elle-si/op (op-finder history)}
                               {})
                    :default tagged-literal}
                   s))

(defn- sorted-sets
  "Elle's :not and :also-not are sorted sets (the EDN reader makes hash
  sets): the same order in a test's printed results."
  [result]
  (reduce (fn [r k]
            (if (set? (get r k)) (update r k #(into (sorted-set) %)) r))
          result
          [:not :also-not]))

(defn- finish
  [opts history result-text times]
  (let [t0     (System/nanoTime)
        result (sorted-sets (read-result result-text history))
        t-read (- (System/nanoTime) t0)
        result (if (:timings? opts)
                 (update result :elle-si/timings merge times {:read-ns t-read})
                 result)]
    result))

(defn check
  "Checks a history: a Jepsen IHistory, or any sequential collection of op
  maps. Ops whose :process is not an integer (the nemesis) are skipped, as
  Elle's client-ops does. Returns Elle's result map. Throws
  IllegalArgumentException for a malformed history or bad options."
  ([history] (check {} history))
  ([opts history]
   ;; Streamed: the native side decodes each chunk while the next is
   ;; encoded here, so the bridge costs little more than the encoding.
   (let [options (pr-str (native-options (assoc opts :op-refs true)))
         stream  (native/open-stream options)]
     (try
       (let [t0   (System/nanoTime)
             _    (encode history stream)
             t1   (System/nanoTime)
             text (.finish stream)
             t2   (System/nanoTime)]
         (finish opts history text {:encode-ns (- t1 t0), :feed-ns (.feedNanos stream)
                                    :native-ns (- t2 t1)}))
       (finally (.close stream))))))

(defn check-file
  "Checks a history file (an archived history.edn, or the r(k,v,s,t) text
  format) without reading it into the JVM. Transactions in the result are
  op maps rebuilt from the file, with its :line."
  ([path] (check-file {} path))
  ([opts path]
   (let [options (pr-str (native-options opts))
         t0      (System/nanoTime)
         text    (native/check-file (str path) options)]
     (finish opts nil text {:encode-ns 0, :native-ns (- (System/nanoTime) t0)}))))
