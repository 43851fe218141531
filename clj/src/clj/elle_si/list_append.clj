(ns elle-si.list-append
  "A drop-in for elle.list-append/check: the same options and result map,
  checked by elle-si's native checker. See elle-si.core for the options."
  (:require [elle-si.core :as core]))

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
