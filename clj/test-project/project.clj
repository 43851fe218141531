;; A project that uses elle-si as a Jepsen test does: one dependency, the
;; installed jar (`lein install` in clj/), no ELLE_SI_LIB, no
;; java.library.path. scripts/test-all.sh runs its `lein test`.

;; clj/project.clj, for its version and its (offline) repositories.
(def elle-si-project
  (let [[_ _ version & kvs] (read-string (slurp (clojure.java.io/file (.getParentFile (clojure.java.io/file *file*))
                                                                      ".." "project.clj")))]
    (assoc (apply hash-map kvs) :version version)))

(defproject elle-si-jar-test "0"
  :description "Checks that the installed elle-si jar carries and loads its native library."
  :dependencies [[org.clojure/clojure "1.11.1"]
                 [elle-si ~(:version elle-si-project)]]
  :repositories ~(:repositories elle-si-project)
  :plugin-repositories ~(:plugin-repositories elle-si-project)
  :pom-location "target/")
