(ns elle-si.test-util
  "Histories for the tests, written in a compact notation: `ax1` appends 1
  to :x, `rx12` reads :x as [1 2], `rx` reads nil (list-append); `wx1`
  writes 1 to :x, `rx1` reads 1, `rx_` reads nil (rw-register)."
  (:require [elle-si.list-append :as la]
            [elle-si.rw-register :as rw]))

(defn- la-mop
  [[_ f k digits]]
  (let [k (keyword k)]
    (case f
      "a" [:append k (parse-long digits)]
      "r" [:r k (when (seq digits) (mapv #(parse-long (str %)) digits))])))

(defn la-txn
  "List-append micro-ops from notation like \"ax1ry12\"."
  [s]
  (mapv la-mop (re-seq #"([ar])([xyztu])(\d*)" s)))

(defn- rw-mop
  [[_ f k v]]
  [(keyword f) (keyword k) (when-not (= "_" v) (parse-long v))])

(defn rw-txn
  "Register micro-ops from notation like \"wx1ry_\"."
  [s]
  (mapv rw-mop (re-seq #"([wr])([xyz])(\d|_)" s)))

(defn la-op
  "A completed list-append transaction."
  ([s] (la-op 0 :ok s))
  ([process type s] {:process process, :type type, :f :txn, :value (la-txn s)}))

(defn rw-op
  "A completed register transaction."
  ([s] (rw-op 0 :ok s))
  ([process type s] {:process process, :type type, :f :txn, :value (rw-txn s)}))

(defn pair
  "[invocation completion] for a completed op: the invocation's reads are
  unknown."
  [op]
  [(-> op
       (assoc :type :invoke)
       (update :value (partial mapv (fn [[f k v :as mop]] (if (= :r f) [f k nil] mop)))))
   op])

(defn history
  "Numbers ops by position, as jepsen.history/history does."
  [ops]
  (vec (map-indexed (fn [i op] (assoc op :index i)) ops)))

(defn verdict
  "The parts of a result map the tests compare with Elle's."
  [r]
  (select-keys r [:valid? :anomaly-types :not]))

(defn la
  "Checks a list-append history; the verdict."
  [opts h]
  (verdict (la/check opts h)))

(defn rw
  "Checks a register history; the verdict."
  [opts h]
  (verdict (rw/check opts h)))
