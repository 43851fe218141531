(ns elle-si.rw-register
  "A drop-in for elle.rw-register/check: the same options and result map,
  checked by elle-si's native checker. See elle-si.core for the options."
  (:require [elle-si.core :as core]))

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
