(ns jepsen.checker
  "Test-only stand-in for Jepsen's jepsen.checker (Jepsen is not available
  offline): the Checker protocol, declared as Jepsen declares it, and enough
  of compose to run checkers side by side as Jepsen does.")

(defprotocol Checker
  (check [checker test history opts]
    "Verify the history is correct. Returns a map like {:valid? true}."))

(defn compose
  "Runs several checkers in parallel, like Jepsen's compose (pmap)."
  [checker-map]
  (reify Checker
    (check [_ test history opts]
      (let [results (->> checker-map
                         (pmap (fn [[k c]]
                                 [k (check c test history opts)]))
                         (into {}))]
        (assoc results :valid? (every? (comp true? :valid?) (vals results)))))))
