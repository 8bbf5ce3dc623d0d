// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.util.Arrays;

/**
 * Kernel parameter sizes by {@code CUfunction}, for checking a launch's arguments before
 * {@code cuLaunchKernel} reads them. Lookups allocate nothing and take no lock: they read an
 * immutable open-addressing table through a volatile field; writers (module loads and unloads,
 * which are rare) copy it under a lock.
 */
final class ParamSizes {

    /** An immutable table; {@code funcs[i] == 0} marks a free slot (no function is NULL). */
    private record Table(long[] funcs, long[] modules, int[][] sizes, int count) {
    }

    private volatile Table table = new Table(new long[16], new long[16], new int[16][], 0);

    /**
     * {@return the parameter sizes of {@code func}, or {@code null} when not recorded}
     *
     * @param func the function
     */
    int[] get(long func) {
        Table t = table;
        long[] funcs = t.funcs;
        int mask = funcs.length - 1;
        for (int i = hash(func) & mask; ; i = (i + 1) & mask) {
            long f = funcs[i];
            if (f == func) {
                return t.sizes[i];
            }
            if (f == 0) {
                return null;
            }
        }
    }

    /**
     * Records the sizes of {@code func}, which belongs to {@code module}.
     *
     * @param func   the function
     * @param module its module (0 when unknown)
     * @param sizes  its parameter sizes
     */
    synchronized void put(long func, long module, int[] sizes) {
        Table t = table;
        int n = t.count + 1;
        int cap = t.funcs.length;
        while (n * 2 > cap) {
            cap *= 2;
        }
        long[] funcs = new long[cap];
        long[] modules = new long[cap];
        int[][] sz = new int[cap][];
        int count = 0;
        for (int i = 0; i < t.funcs.length; i++) {
            if (t.funcs[i] != 0 && t.funcs[i] != func) {
                insert(funcs, modules, sz, t.funcs[i], t.modules[i], t.sizes[i]);
                count++;
            }
        }
        insert(funcs, modules, sz, func, module, sizes.clone());
        table = new Table(funcs, modules, sz, count + 1);
    }

    /**
     * Forgets every function of {@code module}: after an unload the driver may reuse its handles.
     *
     * @param module the module
     */
    synchronized void removeModule(long module) {
        Table t = table;
        long[] funcs = new long[t.funcs.length];
        long[] modules = new long[t.funcs.length];
        int[][] sz = new int[t.funcs.length][];
        int count = 0;
        for (int i = 0; i < t.funcs.length; i++) {
            if (t.funcs[i] != 0 && t.modules[i] != module) {
                insert(funcs, modules, sz, t.funcs[i], t.modules[i], t.sizes[i]);
                count++;
            }
        }
        table = new Table(funcs, modules, sz, count);
    }

    private static void insert(long[] funcs, long[] modules, int[][] sizes, long func, long module, int[] s) {
        int mask = funcs.length - 1;
        int i = hash(func) & mask;
        while (funcs[i] != 0) {
            i = (i + 1) & mask;
        }
        funcs[i] = func;
        modules[i] = module;
        sizes[i] = s;
    }

    private static int hash(long v) {
        long h = v * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    @Override
    public String toString() {
        return "ParamSizes" + Arrays.toString(table.funcs);
    }
}
