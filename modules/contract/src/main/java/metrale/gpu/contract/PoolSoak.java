// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;

/**
 * A soak of the allocation path under threads: each of N platform or virtual threads, on a
 * stream of its own, repeats alloc, an asynchronous copy of random bytes into the block, a launch
 * of {@code add_i32} over it, a copy back that waits for the stream, and a free, with a random
 * size each cycle; every result is checked on the host. Bounded in cycles and in time. Both the
 * contract ({@link PoolSoakContract}) and the benchmarks' command-line soak
 * ({@code metrale.bench.soak.Soak}) run it, on either backend and with any allocator.
 */
public final class PoolSoak {

    /** How many failure messages a result keeps, first come. */
    private static final int KEPT_MESSAGES = 5;

    /**
     * What a soak does.
     *
     * @param threads       how many threads, at least 1
     * @param virtual       virtual threads instead of platform threads
     * @param cycles        cycles per thread, at least 1
     * @param maxBytes      the largest block; each cycle draws 1 to this many bytes
     * @param seconds       the most wall-clock seconds; a thread stops at its next cycle past it
     * @param streamOrdered {@code gpu.alloc(n, stream)} and {@code gpu.free(p, stream)} on the thread's
     *                      stream; otherwise {@code gpu.alloc(n)} and {@code gpu.free(p)}
     * @param seed          the random sizes' and bytes' seed; thread {@code t} draws from {@code seed + t}
     */
    public record Config(int threads, boolean virtual, int cycles, int maxBytes, double seconds, boolean streamOrdered,
                         long seed) {
        /** Validates. */
        public Config {
            if (threads < 1 || cycles < 1 || maxBytes < 1 || !(seconds > 0)) {
                throw new IllegalArgumentException("threads, cycles, maxBytes and seconds must be positive: " + threads
                        + ", " + cycles + ", " + maxBytes + ", " + seconds);
            }
        }
    }

    /**
     * What a soak saw.
     *
     * @param cycles          cycles run, all threads together
     * @param planned         cycles asked for, all threads together
     * @param failures        exceptions by kind ({@code GpuException:INVALID_VALUE}, say), each counted once
     * @param messages        the first few failures' messages
     * @param wrongResults    cycles whose copy back differed from the host's reckoning
     * @param liveAllocsStart live ledger entries before the soak
     * @param liveBytesStart  live ledger bytes before the soak
     * @param liveAllocsEnd   live ledger entries after it
     * @param liveBytesEnd    live ledger bytes after it
     * @param stickyFault     whether the runtime latched a sticky fault (the soak stops at it)
     * @param millis          how long it ran
     */
    public record Result(long cycles, long planned, Map<String, Long> failures, List<String> messages, long wrongResults,
                         int liveAllocsStart, long liveBytesStart, int liveAllocsEnd, long liveBytesEnd,
                         boolean stickyFault, long millis) {

        /** {@return whether every planned cycle ran with no failure and no wrong result, and the ledger is back to the start} */
        public boolean clean() {
            return cycles == planned && failures.isEmpty() && wrongResults == 0 && !stickyFault
                    && liveAllocsEnd == liveAllocsStart && liveBytesEnd == liveBytesStart;
        }

        /** {@return a few lines a person reads: the counts, the failures by kind and the first messages} */
        public String report() {
            StringBuilder sb = new StringBuilder();
            sb.append(String.format(Locale.ROOT, "cycles %d of %d in %.1f s (%.0f/s); failures %d; wrong results %d; "
                            + "live allocations %d -> %d, bytes %d -> %d%s; %s%n", cycles, planned, millis / 1000.0,
                    millis == 0 ? 0.0 : cycles * 1000.0 / millis, failures.values().stream().mapToLong(Long::longValue).sum(),
                    wrongResults, liveAllocsStart, liveAllocsEnd, liveBytesStart, liveBytesEnd,
                    stickyFault ? "; sticky fault latched" : "", clean() ? "CLEAN" : "NOT CLEAN"));
            failures.forEach((k, v) -> sb.append("  ").append(v).append(" x ").append(k).append('\n'));
            for (String m : messages) {
                sb.append("  first: ").append(m).append('\n');
            }
            return sb.toString();
        }
    }

    private PoolSoak() {
    }

    /**
     * Runs a soak on {@code gpu}; returns when every thread has stopped.
     *
     * @param gpu    the runtime; its ledger should hold only what the caller keeps for the whole soak
     * @param addI32 the contract kernel {@code add_i32(int* p, int v, int n)}: {@code p[i] += v} for {@code i < n}
     * @param config what to do
     * @return what it saw
     * @throws InterruptedException if the calling thread is interrupted while it waits for the threads
     */
    public static Result run(Gpu gpu, KernelHandle addI32, Config config) throws InterruptedException {
        int allocsStart = gpu.liveAllocCount();
        long bytesStart = gpu.liveBytes();
        long start = System.nanoTime();
        long deadline = start + (long) (config.seconds() * 1e9);
        AtomicLong cycles = new AtomicLong();
        LongAdder wrong = new LongAdder();
        Map<String, Long> failures = new ConcurrentHashMap<>();
        List<String> messages = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < config.threads(); t++) {
            long seed = config.seed() + t;
            Runnable body = () -> worker(gpu, addI32, config, seed, deadline, stop, cycles, wrong, failures, messages);
            threads.add(config.virtual() ? Thread.ofVirtual().name("soak-" + t).start(body)
                    : Thread.ofPlatform().name("soak-" + t).start(body));
        }
        for (Thread th : threads) {
            th.join();
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        List<String> kept;
        synchronized (messages) {
            kept = List.copyOf(messages);
        }
        return new Result(cycles.get(), (long) config.threads() * config.cycles(), new TreeMap<>(failures), kept,
                wrong.sum(), allocsStart, bytesStart, gpu.liveAllocCount(), gpu.liveBytes(), gpu.fault().isPresent(), millis);
    }

    private static void worker(Gpu gpu, KernelHandle addI32, Config config, long seed, long deadline, AtomicBoolean stop,
                               AtomicLong cycles, LongAdder wrong, Map<String, Long> failures, List<String> messages) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Stream s;
        try {
            s = gpu.createStream();
        } catch (RuntimeException e) {
            fail(e, failures, messages, stop, gpu);
            return;
        }
        // Shared, not confined: another thread's sync may run this stream's pending copy on the simulator.
        try (Arena arena = Arena.ofShared(); KernelArgs args = new KernelArgs()) {
            MemorySegment src = arena.allocate(config.maxBytes(), 8);
            MemorySegment dst = arena.allocate(config.maxBytes(), 8);
            for (int c = 0; c < config.cycles() && !stop.get() && System.nanoTime() < deadline; c++) {
                int n = 1 + rnd.nextInt(config.maxBytes());
                int v = rnd.nextInt();
                for (long off = 0; off < n; off += 8) {
                    long word = rnd.nextLong();
                    for (int b = 0; b < 8 && off + b < n; b++) {
                        src.set(ValueLayout.JAVA_BYTE, off + b, (byte) (word >>> (8 * b)));
                    }
                }
                if (cycle(gpu, addI32, config, s, args, src, dst, n, v, failures, messages, stop) && !matches(src, dst, n, v)) {
                    wrong.increment();
                    record("wrong result: " + n + "-byte block, addend " + v, messages);
                }
                cycles.incrementAndGet();
            }
        } catch (RuntimeException e) {
            fail(e, failures, messages, stop, gpu);
        } finally {
            try {
                gpu.synchronize(s);
                gpu.destroyStream(s);
            } catch (RuntimeException e) {
                fail(e, failures, messages, stop, gpu);
            }
        }
    }

    /** One cycle; {@return whether {@code dst} holds the copy back} */
    private static boolean cycle(Gpu gpu, KernelHandle addI32, Config config, Stream s, KernelArgs args, MemorySegment src,
                                 MemorySegment dst, int n, int v, Map<String, Long> failures, List<String> messages,
                                 AtomicBoolean stop) {
        DevicePtr p = null;
        boolean copied = false;
        try {
            p = config.streamOrdered() ? gpu.alloc(n, s) : gpu.alloc(n);
            gpu.copyH2DAsync(src.asSlice(0, n), p, s);
            int ints = n / 4;
            gpu.launch(addI32, ints == 0 ? LaunchConfig.of(1, 128) : LaunchConfig.forElements(ints, 128), s,
                    args.clear().ptr(p).i32(v).i32(ints));
            gpu.copyD2HOnStream(p, dst.asSlice(0, n), s);
            copied = true;
        } catch (RuntimeException e) {
            fail(e, failures, messages, stop, gpu);
        } finally {
            if (p != null) {
                try {
                    if (config.streamOrdered()) {
                        gpu.free(p, s);
                    } else {
                        gpu.free(p);
                    }
                } catch (RuntimeException e) {
                    fail(e, failures, messages, stop, gpu);
                }
            }
        }
        return copied;
    }

    /** {@return whether {@code dst} is {@code src} with {@code v} added to each whole int, the tail bytes unchanged} */
    static boolean matches(MemorySegment src, MemorySegment dst, int n, int v) {
        int ints = n / 4;
        for (int i = 0; i < ints; i++) {
            int want = src.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * i) + v;
            if (dst.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * i) != want) {
                return false;
            }
        }
        for (long b = 4L * ints; b < n; b++) {
            if (src.get(ValueLayout.JAVA_BYTE, b) != dst.get(ValueLayout.JAVA_BYTE, b)) {
                return false;
            }
        }
        return true;
    }

    private static void fail(RuntimeException e, Map<String, Long> failures, List<String> messages, AtomicBoolean stop, Gpu gpu) {
        String kind = e.getClass().getSimpleName() + (e instanceof GpuException g ? ":" + g.error().name() : "");
        failures.merge(kind, 1L, Long::sum);
        record(e.getMessage(), messages);
        if (gpu.fault().isPresent() || gpu.isClosed()) {
            // The context is lost (or gone): every later call fails the same way.
            stop.set(true);
        }
    }

    private static void record(String message, List<String> messages) {
        synchronized (messages) {
            if (messages.size() < KEPT_MESSAGES) {
                messages.add(message);
            }
        }
    }
}
