package elle_si.bench;

import java.util.List;

import clojure.lang.ILookup;
import clojure.lang.Keyword;
import clojure.lang.PersistentVector;

/**
 * The floor under encoding a history: reads every field and element that
 * elle_si.HistoryEncoder reads (all fields of every op, the micro-ops of
 * completions, every element of a list read), and writes nothing. Whatever
 * an encoder does, it cannot take less time than this walk over the JVM's
 * objects.
 */
public final class Walk {
    private static final Keyword TYPE = Keyword.intern("type");
    private static final Keyword PROCESS = Keyword.intern("process");
    private static final Keyword INDEX = Keyword.intern("index");
    private static final Keyword TIME = Keyword.intern("time");
    private static final Keyword F = Keyword.intern("f");
    private static final Keyword VALUE = Keyword.intern("value");
    private static final Keyword INVOKE = Keyword.intern("invoke");

    private Walk() {}

    private static long touch(Object x) {
        // An integer's value must be read; anything else the encoder only
        // compares by reference (keywords) or looks up once per op.
        if (x instanceof Long) return (Long) x;
        return x == null ? 0 : 1;
    }

    /** A checksum of what was read, so that none of the reading is optimised away. */
    public static long walk(List<?> history) {
        long sum = 0;
        for (int i = 0, n = history.size(); i < n; i++) {
            ILookup op = (ILookup) history.get(i);
            Object type = op.valAt(TYPE, null);
            sum += touch(op.valAt(PROCESS, null)) + touch(op.valAt(INDEX, null))
                + touch(op.valAt(TIME, null)) + touch(op.valAt(F, null)) + touch(type);
            if (type == INVOKE) continue;
            Object value = op.valAt(VALUE, null);
            if (!(value instanceof PersistentVector)) continue;
            PersistentVector mops = (PersistentVector) value;
            for (int j = 0, m = mops.count(); j < m; j++) {
                PersistentVector mop = (PersistentVector) mops.nth(j);
                sum += touch(mop.nth(0)) + touch(mop.nth(1));
                Object v = mop.count() > 2 ? mop.nth(2) : null;
                if (v instanceof PersistentVector) {
                    PersistentVector elems = (PersistentVector) v;
                    for (int k = 0, c = elems.count(); k < c; k++) sum += touch(elems.nth(k));
                } else {
                    sum += touch(v);
                }
            }
        }
        return sum;
    }
}
