(ns elle-si.list-append
  "A drop-in for elle.list-append/check: the same options and result map,
  checked by elle-si's native checker. See elle-si.core for the options."
  (:require [elle-si.core :as core]
            [elle-si.txn :as txn]))

(defn check
  "Checks a list-append history (micro-ops [:append k v] and [:r k list])
  against the :consistency-models in opts (default [:strict-serializable]).
  Returns Elle's result map: {:valid? true|false|:unknown, :anomaly-types
  [...], :anomalies {...}, :not #{...}, :also-not #{...}}."
  ([history] (check {} history))
  ([opts history]
   (core/check (assoc opts :workload :list-append) history)))

(defn check-file
  "Checks a list-append history file without reading it into the JVM."
  ([path] (check-file {} path))
  ([opts path]
   (core/check-file (assoc opts :workload :list-append) path)))

(defn append-txns
  "As elle-si.txn/wr-txns, each write an append: [:append k v]."
  [opts]
  (map (fn [t] (mapv (fn [[f k v]] [(if (= :w f) :append f) k v]) t))
       (txn/wr-txns opts)))

(defn gen
  "A generator of list-append transactions for a Jepsen test, as Elle's
  elle.list-append/gen: a lazy sequence of {:type :invoke, :f :txn, :value
  [[:r k nil] [:append k v] ...]}, each key's appended values unique.
  Options as elle-si.txn/wr-txns (Elle's): :key-count, :min-txn-length,
  :max-txn-length, :max-writes-per-key (appends per key), :key-dist,
  :key-dist-base."
  ([] (gen {}))
  ([opts]
   (txn/gen (append-txns opts))))
