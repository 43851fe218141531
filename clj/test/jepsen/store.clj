(ns jepsen.store
  "Test-only stand-in for jepsen.store/path!: a file under the test's store
  directory, <base>/<name>/<start-time>/args..., with its parents made.")

(defn path!
  [test & args]
  (let [f (apply clojure.java.io/file (:store-base test "store") (:name test)
                 (str (:start-time test)) (remove nil? args))]
    (.mkdirs (.getParentFile ^java.io.File f))
    f))
