// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.core;

import static metrale.gpu.core.CoreTestSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import metrale.gpu.Allocation;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/** The ledger against a model: any sequence of allocs and frees, legal or not, keeps it exact. */
class LedgerProperties {

    /** One step: allocate {@code bytes}, or free live entry {@code pick} (at an offset), or free a dead one. */
    record Op(int kind, long bytes, int pick, int offset) {
    }

    @Provide
    Arbitrary<Op> ops() {
        return net.jqwik.api.Combinators.combine(Arbitraries.integers().between(0, 3), Arbitraries.longs().between(1, 5000),
                Arbitraries.integers().between(0, 1000), Arbitraries.integers().between(0, 3)).as(Op::new);
    }

    @Property(tries = 60)
    void ledgerMatchesTheModel(@ForAll @Size(max = 60) List<@From("ops") Op> ops) {
        try (Gpu gpu = scripted().open()) {
            List<Allocation> model = new ArrayList<>();
            List<DevicePtr> dead = new ArrayList<>();
            for (Op op : ops) {
                switch (op.kind()) {
                    case 0, 1 -> {
                        DevicePtr p = gpu.alloc(op.bytes());
                        Allocation added = gpu.liveAllocations().getLast();
                        assertThat(added.ptr()).isEqualTo(p);
                        assertThat(added.bytes()).isEqualTo(op.bytes());
                        for (Allocation other : model) {
                            assertThat(added.index()).as("creation indices grow").isGreaterThan(other.index());
                            boolean apart = p.address() >= other.ptr().address() + other.bytes()
                                    || other.ptr().address() >= p.address() + op.bytes();
                            assertThat(apart).as("%s does not overlap the live %s", added, other).isTrue();
                        }
                        model.add(added);
                        dead.remove(p);
                    }
                    case 2 -> {
                        if (model.isEmpty()) {
                            continue;
                        }
                        Allocation a = model.get(op.pick() % model.size());
                        if (op.offset() == 0 || a.bytes() <= op.offset()) {
                            gpu.free(a.ptr());
                            model.remove(a);
                            dead.add(a.ptr());
                        } else {
                            assertThatThrownBy(() -> gpu.free(a.ptr().plus(op.offset())))
                                    .isInstanceOfSatisfying(GpuException.class, e -> {
                                        assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                                        assertThat(e.getMessage()).contains("interior");
                                    });
                        }
                    }
                    default -> {
                        if (dead.isEmpty()) {
                            continue;
                        }
                        DevicePtr p = dead.get(op.pick() % dead.size());
                        assertThatThrownBy(() -> gpu.free(p)).isInstanceOfSatisfying(GpuException.class,
                                e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
                    }
                }
                assertThat(gpu.liveAllocations()).isEqualTo(model);
                assertThat(gpu.liveBytes()).isEqualTo(model.stream().mapToLong(Allocation::bytes).sum());
            }
            assertThat(gpu.sweepUnreleased()).isEqualTo(model.size());
        }
    }

    @Example
    void concurrentFreesOfOnePointerFreeItExactlyOnce() throws Exception {
        try (Gpu gpu = scripted().open(); ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int round = 0; round < 50; round++) {
                DevicePtr p = gpu.alloc(256);
                int threads = 8;
                CountDownLatch go = new CountDownLatch(1);
                AtomicInteger ok = new AtomicInteger();
                ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
                List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    fs.add(pool.submit(() -> {
                        go.await();
                        try {
                            gpu.free(p);
                            ok.incrementAndGet();
                        } catch (GpuException e) {
                            errors.add(e);
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (var f : fs) {
                    f.get();
                }
                assertThat(ok.get()).isEqualTo(1);
                assertThat(errors).hasSize(threads - 1)
                        .allSatisfy(e -> assertThat(((GpuException) e).error()).isEqualTo(CudaError.INVALID_VALUE));
            }
            assertThat(gpu.liveAllocCount()).isZero();
        }
    }

    @Example
    void concurrentAllocAndFreeKeepTheLedgerExact() throws Exception {
        try (Gpu gpu = scripted().open(); ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            DevicePtr keep = gpu.alloc(1);
            List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int seed = t;
                fs.add(pool.submit(() -> {
                    List<DevicePtr> mine = new ArrayList<>();
                    for (int i = 0; i < 200; i++) {
                        mine.add(gpu.alloc(64 + seed));
                        if (i % 3 == 2) {
                            gpu.free(mine.removeFirst());
                        }
                    }
                    mine.forEach(gpu::free);
                    return null;
                }));
            }
            for (var f : fs) {
                f.get();
            }
            assertThat(gpu.liveAllocations()).extracting(Allocation::ptr).containsExactly(keep);
            assertThat(gpu.liveBytes()).isEqualTo(1);
            gpu.free(keep);
        }
    }
}
