(defproject elle-si "0.1.0-SNAPSHOT"
  :description "Elle's checkers, backed by elle-si's native checker: a drop-in for elle.list-append/check and elle.rw-register/check in Jepsen tests."
  :license {:name "same as elle-si"}
  :dependencies [[org.clojure/clojure "1.11.1"]]
  ;; Debian's maven repository only: the build works offline. ^:replace
  ;; keeps lein from reaching for Maven Central and Clojars.
  :repositories ^:replace [["debian" {:url "file:///usr/share/maven-repo"
                                      :checksum :ignore
                                      :snapshots false}]]
  :plugin-repositories ^:replace [["debian" {:url "file:///usr/share/maven-repo"
                                             :checksum :ignore
                                             :snapshots false}]]
  :source-paths ["src/clj"]
  :java-source-paths ["src/java"]
  :test-paths ["test"]
  :javac-options ["--release" "17" "-Xlint:-options"]
  :jvm-opts ["-Xcheck:jni"]
  :profiles {:bench {:source-paths ["bench"]
                     :java-source-paths ["bench/java"]
                     :jvm-opts ^:replace ["-Xmx4g" "-XX:+UseParallelGC"]}}
  :aliases {"bench" ["with-profile" "+bench" "run" "-m" "elle-si.bench"]})
