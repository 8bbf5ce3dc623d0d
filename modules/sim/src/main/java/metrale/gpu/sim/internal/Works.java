// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import metrale.gpu.CudaError;
import metrale.gpu.Dim3;
import metrale.gpu.sim.SimKernel;

/**
 * The kinds of device work. Each re-resolves its device addresses when it runs, so work that
 * outlives its memory (a graph replayed after a free) faults with {@code ILLEGAL_ADDRESS} instead of
 * touching freed memory; host memory freed before an async copy runs faults the same way.
 */
final class Works {

    private Works() {
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /** Host-to-device copy; the source is read when it runs. */
    record CopyH2D(String op, long dst, MemorySegment src, long bytes) implements Work {
        @Override
        public void run(Engine e) {
            MemorySegment d = e.memory.rangeOrFault(dst, bytes, describe() + " destination");
            try {
                MemorySegment.copy(src, 0, d, 0, bytes);
            } catch (IllegalStateException x) {
                throw new SimFault(CudaError.ILLEGAL_ADDRESS, describe() + ": the host source was freed before the copy ran", x);
            } catch (WrongThreadException x) {
                throw new SimFault(CudaError.ILLEGAL_ADDRESS, describe() + ": the host source is confined to another "
                        + "thread than the one that ran the copy (" + Thread.currentThread().getName() + ")", x);
            }
            if (e.memory.init != null) {
                e.memory.init.wrote(e.memory, dst, bytes);
            }
        }

        @Override
        public String describe() {
            return op + "(dst=" + hex(dst) + ", bytes=" + bytes + ")";
        }

        @Override
        public boolean touches(long lo, long hi) {
            return Work.overlaps(dst, bytes, lo, hi);
        }
    }

    /** Device-to-host copy; the destination is written when it runs. */
    record CopyD2H(String op, MemorySegment dst, long src, long bytes) implements Work {
        @Override
        public void run(Engine e) {
            MemorySegment s = e.memory.rangeOrFault(src, bytes, describe() + " source");
            if (e.memory.init != null) {
                e.memory.init.read(e.memory, describe(), src, bytes);
            }
            try {
                MemorySegment.copy(s, 0, dst, 0, bytes);
            } catch (IllegalStateException x) {
                throw new SimFault(CudaError.ILLEGAL_ADDRESS, describe() + ": the host destination was freed before the copy ran", x);
            } catch (WrongThreadException x) {
                throw new SimFault(CudaError.ILLEGAL_ADDRESS, describe() + ": the host destination is confined to another "
                        + "thread than the one that ran the copy (" + Thread.currentThread().getName() + ")", x);
            }
        }

        @Override
        public String describe() {
            return op + "(src=" + hex(src) + ", bytes=" + bytes + ")";
        }

        @Override
        public boolean touches(long lo, long hi) {
            return Work.overlaps(src, bytes, lo, hi);
        }
    }

    /** Device-to-device copy; overlapping ranges behave like {@code memmove}. */
    record CopyD2D(String op, long dst, long src, long bytes) implements Work {
        @Override
        public void run(Engine e) {
            MemorySegment s = e.memory.rangeOrFault(src, bytes, describe() + " source");
            MemorySegment d = e.memory.rangeOrFault(dst, bytes, describe() + " destination");
            if (e.memory.init != null) {
                e.memory.init.read(e.memory, describe(), src, bytes);
                e.memory.init.wrote(e.memory, dst, bytes);
            }
            MemorySegment.copy(s, 0, d, 0, bytes);
        }

        @Override
        public String describe() {
            return op + "(dst=" + hex(dst) + ", src=" + hex(src) + ", bytes=" + bytes + ")";
        }

        @Override
        public boolean touches(long lo, long hi) {
            return Work.overlaps(dst, bytes, lo, hi) || Work.overlaps(src, bytes, lo, hi);
        }
    }

    /** Pitched device-to-device copy of {@code height} rows of {@code width} bytes. */
    record Copy2D(long dst, long dstPitch, long src, long srcPitch, long width, long height) implements Work {
        @Override
        public void run(Engine e) {
            MemorySegment s = e.memory.rangeOrFault(src, (height - 1) * srcPitch + width, describe() + " source");
            MemorySegment d = e.memory.rangeOrFault(dst, (height - 1) * dstPitch + width, describe() + " destination");
            for (long r = 0; r < height; r++) {
                if (e.memory.init != null) {
                    e.memory.init.read(e.memory, describe(), src + r * srcPitch, width);
                    e.memory.init.wrote(e.memory, dst + r * dstPitch, width);
                }
                MemorySegment.copy(s, r * srcPitch, d, r * dstPitch, width);
            }
        }

        @Override
        public String describe() {
            return "cuMemcpy2DAsync_v2(dst=" + hex(dst) + ", dstPitch=" + dstPitch + ", src=" + hex(src)
                    + ", srcPitch=" + srcPitch + ", width=" + width + ", height=" + height + ")";
        }

        @Override
        public boolean touches(long lo, long hi) {
            return height > 0 && (Work.overlaps(dst, (height - 1) * dstPitch + width, lo, hi)
                    || Work.overlaps(src, (height - 1) * srcPitch + width, lo, hi));
        }
    }

    /** Byte memset. */
    record Memset(String op, long ptr, byte value, long bytes) implements Work {
        @Override
        public void run(Engine e) {
            e.memory.rangeOrFault(ptr, bytes, describe()).fill(value);
            if (e.memory.init != null) {
                e.memory.init.wrote(e.memory, ptr, bytes);
            }
        }

        @Override
        public String describe() {
            return op + "(ptr=" + hex(ptr) + ", value=" + (value & 0xff) + ", bytes=" + bytes + ")";
        }

        @Override
        public boolean touches(long lo, long hi) {
            return Work.overlaps(ptr, bytes, lo, hi);
        }
    }

    /** An event's marker, or a wait: does nothing itself; its completion is what matters. */
    record Marker(String what) implements Work {
        @Override
        public void run(Engine e) {
            // Completion is recorded by the scheduler.
        }

        @Override
        public String describe() {
            return what;
        }
    }

    /**
     * One kernel launch with the argument values copied at enqueue, and {@code reach}: pairs of
     * {@code [lo, hi)}, the allocations its argument words lay in at enqueue (empty when unknown).
     */
    record Kernel(String name, SimKernel kernel, Dim3 grid, Dim3 block, int sharedMemBytes,
                  long[] words, byte[][] bytes, int[] sizes, long[] reach) implements Work {
        @Override
        public void run(Engine e) {
            if (e.faultKernels.remove(name)) {
                throw new SimFault(CudaError.ILLEGAL_ADDRESS, "kernel " + describe()
                        + ": illegal address injected by SimControls.faultKernel(\"" + name.replace("::", "\", \"") + "\")");
            }
            LaunchImpl launch = new LaunchImpl(this, e);
            try {
                kernel.launch(launch);
                // The twin's own declaration wins over the per-kernel one.
                long d = launch.declaredNanos();
                e.workNanos += d >= 0 ? d : e.durations.getOrDefault(name, 0L);
            } catch (SimFault f) {
                throw new SimFault(f.error, "kernel " + describe() + ": " + f.getMessage(), f);
            } catch (IndexOutOfBoundsException | IllegalStateException x) {
                // A segment bounds or liveness check the views did not catch first.
                throw new SimFault(CudaError.ILLEGAL_ADDRESS, "kernel " + describe() + ": " + x, x);
            } catch (AssertionError x) {
                throw new SimFault(CudaError.ASSERT, "kernel " + describe() + ": device-side assert: " + x.getMessage(), x);
            } catch (RuntimeException x) {
                throw new SimFault(CudaError.LAUNCH_FAILED, "kernel " + describe() + " threw " + x, x);
            } finally {
                launch.close();
            }
        }

        @Override
        public String describe() {
            return name + " (grid " + grid + ", block " + block + ", smem " + sharedMemBytes + ")";
        }

        @Override
        public boolean touches(long lo, long hi) {
            for (long w : words) {
                if (Long.compareUnsigned(w, lo) >= 0 && Long.compareUnsigned(w, hi) < 0) {
                    return true;
                }
            }
            for (int i = 0; i < reach.length; i += 2) {
                if (Work.overlaps(reach[i], reach[i + 1] - reach[i], lo, hi)) {
                    return true;
                }
            }
            return false;
        }

        /** {@return the {@code reach} of {@code words}: the allocation each lies in, by {@code extents}} */
        static long[] reachOf(metrale.gpu.spi.Driver.Extents extents, long[] words) {
            if (extents == null) {
                return new long[0];
            }
            long[] r = new long[2 * words.length];
            int n = 0;
            for (long w : words) {
                long[] e = w == 0 ? null : extents.of(w);
                if (e != null) {
                    r[n++] = e[0];
                    r[n++] = e[0] + e[1];
                }
            }
            return java.util.Arrays.copyOf(r, n);
        }
    }

    /** One node of a captured graph. */
    record Node(Work work, int[] deps) {
    }

    /** A graph replay: its nodes in a seeded topological order. */
    static final class GraphRun implements Work {
        private final List<Node> nodes;
        private final int[][] succ;
        private final int[] indeg;
        private final String label;

        GraphRun(List<Node> nodes, String label) {
            this.nodes = List.copyOf(nodes);
            this.label = label;
            int n = nodes.size();
            this.indeg = new int[n];
            List<List<Integer>> s = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                s.add(new ArrayList<>());
            }
            for (int i = 0; i < n; i++) {
                for (int d : nodes.get(i).deps()) {
                    s.get(d).add(i);
                    indeg[i]++;
                }
            }
            this.succ = new int[n][];
            for (int i = 0; i < n; i++) {
                succ[i] = s.get(i).stream().mapToInt(Integer::intValue).toArray();
            }
        }

        int size() {
            return nodes.size();
        }

        /** {@return the dependencies of node {@code i}} */
        int[] deps(int i) {
            return nodes.get(i).deps();
        }

        /** {@return the work of node {@code i}} */
        Work work(int i) {
            return nodes.get(i).work();
        }

        /** {@return a copy of this run with node {@code i}'s work replaced; the dependencies stay} */
        GraphRun with(int i, Work w) {
            List<Node> copy = new ArrayList<>(nodes);
            copy.set(i, new Node(w, nodes.get(i).deps()));
            return new GraphRun(copy, label);
        }

        /** {@return the {@code CUgraphNodeType} of a node holding {@code w}} */
        static int nodeType(Work w) {
            return switch (w) {
                case Kernel k -> 0;
                case CopyH2D c -> 1;
                case CopyD2H c -> 1;
                case CopyD2D c -> 1;
                case Copy2D c -> 1;
                case Memset m -> 2;
                case GraphRun g -> 4;
                default -> 5;
            };
        }

        @Override
        public void run(Engine e) {
            int[] left = indeg.clone();
            int[] ready = new int[nodes.size()];
            int nReady = 0;
            for (int i = 0; i < left.length; i++) {
                if (left[i] == 0) {
                    ready[nReady++] = i;
                }
            }
            while (nReady > 0) {
                int k = e.choose(nReady);
                int i = ready[k];
                ready[k] = ready[--nReady];
                nodes.get(i).work().run(e);
                for (int s : succ[i]) {
                    if (--left[s] == 0) {
                        ready[nReady++] = s;
                    }
                }
            }
        }

        @Override
        public String describe() {
            return label + " (" + nodes.size() + " nodes)";
        }

        @Override
        public boolean touches(long lo, long hi) {
            for (Node n : nodes) {
                if (n.work().touches(lo, hi)) {
                    return true;
                }
            }
            return false;
        }
    }
}
