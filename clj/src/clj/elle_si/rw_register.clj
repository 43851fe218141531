(ns elle-si.rw-register
  "A drop-in for elle.rw-register/check: the same options and result map,
  checked by elle-si's native checker. See elle-si.core for the options."
  (:require [elle-si.core :as core]
            [elle-si.txn :as txn]))

(defn check
  "Checks a read-write register history (micro-ops [:w k v] and [:r k v])
  against the :consistency-models in opts (default [:strict-serializable]).
  Returns Elle's result map."
  ([history] (check {} history))
  ([opts history]
   (core/check (assoc opts :workload :rw-register) history)))

(defn check-file
  "Checks an rw-register history file without reading it into the JVM."
  ([path] (check-file {} path))
  ([opts path]
   (core/check-file (assoc opts :workload :rw-register) path)))

(defn gen
  "A generator of register transactions for a Jepsen test, as Elle's
  elle.rw-register/gen: a lazy sequence of {:type :invoke, :f :txn, :value
  [[:r k nil] [:w k v] ...]}, each key's written values unique. Options
  as elle-si.txn/wr-txns (Elle's): :key-count, :min-txn-length,
  :max-txn-length, :max-writes-per-key, :key-dist, :key-dist-base."
  ([] (gen {}))
  ([opts]
   (txn/gen (txn/wr-txns opts))))
