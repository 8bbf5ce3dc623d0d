// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.ArrayList;
import java.util.List;
import metrale.gpu.KernelArgs;
import metrale.telemetry.TraceEntry;

/**
 * The ops one thread enqueued during a captured step's traced run: the trace entries, and for each
 * kernel a copy of its arguments with their kinds and sizes (a trace word keeps only 8 bytes of a
 * wider argument, too little to set a graph node from). Confined to the thread that runs the step.
 */
final class StepRecorder {

    final List<TraceEntry> entries = new ArrayList<>();
    /** Per entry: the kernel's arguments, or {@code null} for a memset or copy. */
    final List<Args> args = new ArrayList<>();

    void add(TraceEntry e, KernelArgs a) {
        entries.add(e);
        args.add(a == null ? null : Args.of(a));
    }

    /**
     * A kernel's arguments as the launch gave them.
     *
     * @param kinds  how each was appended
     * @param values each one's bits: an {@code int}'s or {@code float}'s in the low 32
     * @param wide   each {@link KernelArgs.Kind#BYTES} argument's bytes, else {@code null}
     */
    record Args(KernelArgs.Kind[] kinds, long[] values, byte[][] wide) {

        static Args of(KernelArgs a) {
            int n = a.count();
            KernelArgs.Kind[] kinds = new KernelArgs.Kind[n];
            long[] values = new long[n];
            byte[][] wide = new byte[n][];
            for (int i = 0; i < n; i++) {
                kinds[i] = a.kind(i);
                switch (kinds[i]) {
                    case I32 -> values[i] = a.getInt(i);
                    case F32 -> values[i] = Float.floatToRawIntBits(a.getFloat(i));
                    case F64 -> values[i] = Double.doubleToRawLongBits(a.getDouble(i));
                    case I64, PTR -> values[i] = a.getLong(i);
                    case BYTES -> wide[i] = a.getBytes(i);
                }
            }
            return new Args(kinds, values, wide);
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
