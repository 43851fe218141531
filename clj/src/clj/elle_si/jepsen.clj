(ns elle-si.jepsen
  "A Jepsen checker backed by elle-si: use it where a test uses
  jepsen.tests.cycle.append/checker or jepsen.tests.cycle.wr/checker.

    :checker (elle-si.jepsen/checker {:consistency-models [:serializable]})

  Like Jepsen's Elle checkers, it writes its files under the test's store
  directory, in elle/ (inside the checker's :subdirectory, when composed).
  Jepsen is found at load time: this namespace loads without it, and then
  `checker` says so."
  (:require [elle-si.core :as core]))

(defn- resolve-optional
  "The var ns/sym, when ns can be loaded; else nil."
  [ns sym]
  (try (require ns)
       (ns-resolve ns sym)
       (catch java.io.FileNotFoundException _ nil)))

(def ^:private checker-protocol
  (some-> (resolve-optional 'jepsen.checker 'Checker) deref))

(def ^:private store-path!
  (resolve-optional 'jepsen.store 'path!))

(defn- directory
  "Where a Jepsen checker writes: <store>/<test>/<time>/<subdirectory>/elle."
  [opts test checker-opts]
  (if store-path!
    (.getCanonicalPath ^java.io.File (store-path! test (:subdirectory checker-opts) "elle"))
    (:directory opts)))

(defrecord ElleSiChecker [opts])

(defn check
  "What the checker does: checks the test's history."
  [^ElleSiChecker checker test history checker-opts]
  (let [opts (:opts checker)]
    (core/check (assoc opts :directory (directory opts test checker-opts))
                history)))

(when checker-protocol
  (extend ElleSiChecker checker-protocol {:check check}))

(defn jepsen-available?
  "Whether jepsen.checker was found when this namespace loaded."
  []
  (boolean checker-protocol))

(defn checker
  "A jepsen.checker/Checker that checks the history with elle-si. Options
  are Elle's (see elle-si.core); :workload :list-append or :rw-register
  fixes the workload (default: detected from the micro-ops)."
  ([] (checker {}))
  ([opts]
   (when-not checker-protocol
     (throw (ex-info (str "jepsen.checker is not on the classpath, so elle-si cannot make a Jepsen checker; "
                          "call elle-si.list-append/check or elle-si.rw-register/check directly.")
                     {:type :elle-si/no-jepsen})))
   (->ElleSiChecker opts)))

(defn list-append-checker
  "A Jepsen checker for list-append histories (jepsen.tests.cycle.append)."
  ([] (list-append-checker {}))
  ([opts] (checker (assoc opts :workload :list-append))))

(defn rw-register-checker
  "A Jepsen checker for read-write register histories (jepsen.tests.cycle.wr)."
  ([] (rw-register-checker {}))
  ([opts] (checker (assoc opts :workload :rw-register))))
