// SPDX-License-Identifier: Apache-2.0
package metrale.bench.cuda;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed group of platform threads that run timed phases together, for throughput under
 * contention: in each phase every worker prepares (untimed), waits at a spinning start line until
 * all are ready, then runs its part; the phase's time is the first worker's start to the last
 * worker's end. One thread at a time drives the phases; the workers live from construction to
 * {@link #close}, and a worker's failure fails the phase it happened in.
 */
final class Gang implements AutoCloseable {

    /** What each worker does in a phase. */
    interface Task {
        /**
         * Called once on each worker thread before its first phase.
         *
         * @param worker the worker's index
         */
        default void start(int worker) {
        }

        /**
         * The untimed part of a phase, before the start line (a stream sync).
         *
         * @param worker  the worker's index
         * @param variant the phase's variant, as given to {@link Gang#phase}
         */
        default void prepare(int worker, int variant) {
        }

        /**
         * The timed part of a phase.
         *
         * @param worker  the worker's index
         * @param variant the phase's variant, as given to {@link Gang#phase}
         */
        void run(int worker, int variant);
    }

    /** Spins of a worker waiting for the next phase before it parks between spins. */
    private static final int SPINS = 1 << 16;
    /** How long a waiting worker parks at a time once it stopped spinning. */
    private static final long PARK_NS = 20_000;

    private final int size;
    private final Task task;
    private final Thread[] threads;
    private final long[] starts;
    private final long[] ends;
    /** The next phase: its number times 256, plus its variant. */
    private volatile long order;
    private volatile boolean stop;
    /** Workers that reached the start line, over all phases: phase p opens at {@code p * size}. */
    private final AtomicInteger ready = new AtomicInteger();
    /** Workers that finished a phase, over all phases. */
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private long phases;

    /**
     * Starts {@code size} daemon worker threads, named {@code name-0} and on.
     *
     * @param size how many workers
     * @param name the threads' name prefix
     * @param task what each worker does
     */
    Gang(int size, String name, Task task) {
        if (size < 1) {
            throw new IllegalArgumentException("a gang of " + size + " threads: at least 1");
        }
        this.size = size;
        this.task = task;
        this.threads = new Thread[size];
        this.starts = new long[size];
        this.ends = new long[size];
        for (int i = 0; i < size; i++) {
            int w = i;
            threads[i] = Thread.ofPlatform().name(name + "-" + i).daemon().start(() -> work(w));
        }
    }

    /** {@return how many workers} */
    int size() {
        return size;
    }

    private void work(int w) {
        boolean started = false;
        long seen = 0;
        while (true) {
            long o;
            int spins = 0;
            // Untimed: the clock starts at the start line, so a parked worker costs no measured time.
            while ((o = order) == seen) {
                if (stop) {
                    return;
                }
                if (++spins < SPINS) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(PARK_NS);
                }
            }
            seen = o;
            int variant = (int) (o & 0xff);
            long open = (o >>> 8) * size;
            boolean arrived = false;
            try {
                if (!started) {
                    started = true;
                    task.start(w);
                }
                task.prepare(w, variant);
                arrived = true;
                ready.incrementAndGet();
                while (ready.get() < open) {
                    Thread.onSpinWait();
                }
                long t0 = System.nanoTime();
                task.run(w, variant);
                ends[w] = System.nanoTime();
                starts[w] = t0;
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
                if (!arrived) {
                    ready.incrementAndGet();
                }
                starts[w] = Long.MAX_VALUE;
                ends[w] = Long.MIN_VALUE;
            } finally {
                done.incrementAndGet();
            }
        }
    }

    /**
     * Runs one phase on every worker and waits for all of them.
     *
     * @param variant what the task is to do, 0 to 255
     * @return the nanoseconds from the first worker's start to the last worker's end
     * @throws IllegalStateException if a worker failed in this phase, with its failure as the cause
     */
    long phase(int variant) {
        if (variant < 0 || variant > 0xff) {
            throw new IllegalArgumentException("variant " + variant + ": 0 to 255");
        }
        if (stop) {
            throw new IllegalStateException("the gang is closed");
        }
        phases++;
        long target = phases * size;
        order = phases << 8 | variant;
        while (done.get() < target) {
            Thread.onSpinWait();
        }
        Throwable t = failure.getAndSet(null);
        if (t != null) {
            throw new IllegalStateException("a worker of the gang failed", t);
        }
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (int i = 0; i < size; i++) {
            first = Math.min(first, starts[i]);
            last = Math.max(last, ends[i]);
        }
        return last - first;
    }

    /** Stops the workers and waits for them to end; idempotent. */
    @Override
    public void close() {
        stop = true;
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
