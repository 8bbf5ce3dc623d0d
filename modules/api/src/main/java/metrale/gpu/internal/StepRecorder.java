// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import metrale.gpu.KernelArgs;
import metrale.gpu.StepParam;
import metrale.telemetry.TraceEntry;

/**
 * The ops one thread enqueued during a captured step's traced run: the trace entries, and for each
 * kernel a copy of its arguments with their kinds and sizes (a trace word keeps only 8 bytes of a
 * wider argument, too little to set a graph node from) and the step parameters among them.
 * Confined to the thread that runs the step.
 */
final class StepRecorder {

    final List<TraceEntry> entries = new ArrayList<>();
    /** Per entry: the kernel's arguments, or {@code null} for a memset or copy. */
    final List<Args> args = new ArrayList<>();

    StepRecorder() {
    }

    /** {@return a recorder holding copies of these ops, as if a run had recorded them} */
    static StepRecorder of(TraceEntry[] entries, Args[] args) {
        StepRecorder r = new StepRecorder();
        r.entries.addAll(Arrays.asList(entries));
        r.args.addAll(Arrays.asList(args));
        return r;
    }

    void add(TraceEntry e, KernelArgs a) {
        entries.add(e);
        args.add(a == null ? null : Args.of(a));
    }

    /**
     * Gives every argument that came from {@code p} p's current value, in the entries and the
     * arguments both. {@return whether {@code p} is among the arguments}
     */
    boolean patch(StepParam<?> p, long bits, byte[] wide) {
        boolean found = false;
        for (int op = 0; op < args.size(); op++) {
            Args a = args.get(op);
            if (a == null || a.params() == null) {
                continue;
            }
            for (int i = 0; i < a.params().length; i++) {
                if (a.params()[i] == p) {
                    found = true;
                    a = a.with(i, bits, wide);
                    args.set(op, a);
                    entries.set(op, withWord(entries.get(op), i, a.word(i)));
                }
            }
        }
        return found;
    }

    /** {@return {@code e} with argument {@code i}'s trace word replaced} */
    static TraceEntry withWord(TraceEntry e, int i, long word) {
        long[] w = e.args();
        w[i] = word;
        return TraceEntry.kernel(e.func(), e.gridX(), e.gridY(), e.gridZ(), e.blockX(), e.blockY(), e.blockZ(),
                e.sharedMemBytes(), w, e.argKinds());
    }

    /**
     * A kernel's arguments as the launch gave them. Not written once made: {@link #with} copies.
     *
     * @param kinds  how each was appended
     * @param values each one's bits: an {@code int}'s or {@code float}'s in the low 32, sign-extended
     * @param wide   each {@link KernelArgs.Kind#BYTES} argument's bytes, else {@code null}
     * @param params each argument's step parameter, {@code null} for a plain value; the array is
     *               {@code null} when no argument came from a parameter
     */
    record Args(KernelArgs.Kind[] kinds, long[] values, byte[][] wide, StepParam<?>[] params) {

        static Args of(KernelArgs a) {
            int n = a.count();
            KernelArgs.Kind[] kinds = new KernelArgs.Kind[n];
            long[] values = new long[n];
            byte[][] wide = new byte[n][];
            StepParam<?>[] params = null;
            for (int i = 0; i < n; i++) {
                kinds[i] = a.kind(i);
                StepParam<?> p = a.paramAt(i).orElse(null);
                if (p != null) {
                    if (params == null) {
                        params = new StepParam<?>[n];
                    }
                    params[i] = p;
                }
                switch (kinds[i]) {
                    case I32 -> values[i] = a.getInt(i);
                    case F32 -> values[i] = Float.floatToRawIntBits(a.getFloat(i));
                    case F64 -> values[i] = Double.doubleToRawLongBits(a.getDouble(i));
                    case I64, PTR -> values[i] = a.getLong(i);
                    case BYTES -> wide[i] = a.getBytes(i);
                }
            }
            return new Args(kinds, values, wide, params);
        }

        /** {@return these arguments with argument {@code i} set to {@code bits} (or {@code wide}, for bytes)} */
        Args with(int i, long bits, byte[] wideValue) {
            long[] v = values.clone();
            byte[][] w = wide.clone();
            if (kinds[i] == KernelArgs.Kind.BYTES) {
                w[i] = wideValue;
            } else {
                v[i] = bits;
            }
            return new Args(kinds, v, w, params);
        }

        /** {@return these arguments' values with other parameters marked} */
        Args withParams(StepParam<?>[] marks) {
            return new Args(kinds, values, wide, marks);
        }

        /** {@return whether argument {@code i} holds {@code bits} (or {@code wide}, for bytes)} */
        boolean holds(int i, long bits, byte[] wideValue) {
            return kinds[i] == KernelArgs.Kind.BYTES ? Arrays.equals(wide[i], wideValue) : values[i] == bits;
        }

        /** {@return argument {@code i}'s step parameter, or {@code null}} */
        StepParam<?> param(int i) {
            return params == null ? null : params[i];
        }

        /** {@return whether {@code o} takes the same parameters at the same arguments} */
        boolean sameParams(Args o) {
            return Arrays.equals(params, o.params);
        }

        /** {@return argument {@code i} as the launch trace records it ({@link KernelArgs#word})} */
        long word(int i) {
            return switch (kinds[i]) {
                case I32, F32 -> values[i] & 0xffff_ffffL;
                case I64, F64, PTR -> values[i];
                case BYTES -> {
                    byte[] b = wide[i];
                    long w = 0;
                    for (int k = 0; k < Math.min(8, b.length); k++) {
                        w |= (b[k] & 0xffL) << (8 * k);
                    }
                    yield w;
                }
            };
        }

        /** Refills {@code into} with these arguments. */
        KernelArgs fill(KernelArgs into) {
            into.clear();
            for (int i = 0; i < kinds.length; i++) {
                switch (kinds[i]) {
                    case I32 -> into.i32((int) values[i]);
                    case F32 -> into.f32(Float.intBitsToFloat((int) values[i]));
                    case F64 -> into.f64(Double.longBitsToDouble(values[i]));
                    case I64 -> into.i64(values[i]);
                    case PTR -> into.ptr(values[i]);
                    case BYTES -> into.bytes(wide[i]);
                }
            }
            return into;
        }
    }
}
