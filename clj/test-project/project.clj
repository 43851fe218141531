;; A project that uses elle-si as a Jepsen test does: one dependency, the
;; installed jar (`lein install` in clj/), no ELLE_SI_LIB, no
;; java.library.path. scripts/test-all.sh runs its `lein test`.
(defproject elle-si-jar-test "0"
  :description "Checks that the installed elle-si jar carries and loads its native library."
  :dependencies [[org.clojure/clojure "1.11.1"]
                 ;; The version clj/project.clj gives.
                 [elle-si ~(nth (read-string (slurp "../project.clj")) 2)]]
  :repositories ^:replace [["debian" {:url "file:///usr/share/maven-repo"
                                      :checksum :ignore
                                      :snapshots false}]]
  :plugin-repositories ^:replace [["debian" {:url "file:///usr/share/maven-repo"
                                             :checksum :ignore
                                             :snapshots false}]]
  :pom-location "target/")
