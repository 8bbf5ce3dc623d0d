// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.GpuException;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Blocking copies of Java heap memory: every array door ({@code byte[]}, {@code int[]},
 * {@code long[]}, {@code float[]}, {@code double[]}) both ways and heap segment slices, at sizes
 * around the runtime's 64 KiB staging buffers and its 256 KiB staging limit, with interior
 * pointers; a copy that has read its source when it returns; bad ranges refused naming the call
 * and the argument; eight threads copying at once; and a bounded set of page-locked buffers
 * behind it all. Each direction is checked against the other kind of memory (a heap copy to the
 * device is read back into native memory, a heap copy from the device reads what native memory
 * wrote), so an error common to both directions does not cancel out. Close racing heap copies is
 * in {@link LifetimeContract}.
 */
public abstract class HeapCopyContract extends GpuContract {

    /** Bytes before and after each copy's range on the device, which no copy may touch. */
    private static final int GUARD = 64;
    private static final byte GUARD_BYTE = 0x5a;
    private static final int KIB = 1024;

    /** Sizes in bytes around the staging boundaries (64 KiB chunks, 256 KiB limit), multiples of 8 so every type fits. */
    private static final int[] SIZES = {8, 4 * KIB, 64 * KIB - 8, 64 * KIB, 64 * KIB + 8, 128 * KIB + 8,
        256 * KIB - 8, 256 * KIB, 256 * KIB + 8, 1024 * KIB + 8};

    /** The element types of the array doors. */
    private enum Kind {
        BYTE, INT, LONG, FLOAT, DOUBLE
    }

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected HeapCopyContract() {
    }

    // ---- helpers -------------------------------------------------------------------------------

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** {@return an array of {@code kind} holding exactly {@code bytes}} */
    private static Object array(Kind kind, byte[] bytes) {
        Object a = switch (kind) {
            case BYTE -> new byte[bytes.length];
            case INT -> new int[bytes.length / 4];
            case LONG -> new long[bytes.length / 8];
            case FLOAT -> new float[bytes.length / 4];
            case DOUBLE -> new double[bytes.length / 8];
        };
        // Raw bytes, so float and double NaN payloads survive as they are.
        view(a).copyFrom(MemorySegment.ofArray(bytes));
        return a;
    }

    private static MemorySegment view(Object array) {
        return switch (array) {
            case byte[] b -> MemorySegment.ofArray(b);
            case int[] i -> MemorySegment.ofArray(i);
            case long[] l -> MemorySegment.ofArray(l);
            case float[] f -> MemorySegment.ofArray(f);
            case double[] d -> MemorySegment.ofArray(d);
            default -> throw new IllegalArgumentException(array.getClass().getName());
        };
    }

    /** Copies through the array door of the array's own type. */
    private void toDevice(Object array, DevicePtr p) {
        switch (array) {
            case byte[] b -> gpu.copyH2D(b, p);
            case int[] i -> gpu.copyH2D(i, p);
            case long[] l -> gpu.copyH2D(l, p);
            case float[] f -> gpu.copyH2D(f, p);
            case double[] d -> gpu.copyH2D(d, p);
            default -> throw new IllegalArgumentException(array.getClass().getName());
        }
    }

    /** Copies through the array door of the array's own type. */
    private void fromDevice(DevicePtr p, Object array) {
        switch (array) {
            case byte[] b -> gpu.copyD2H(p, b);
            case int[] i -> gpu.copyD2H(p, i);
            case long[] l -> gpu.copyD2H(p, l);
            case float[] f -> gpu.copyD2H(p, f);
            case double[] d -> gpu.copyD2H(p, d);
            default -> throw new IllegalArgumentException(array.getClass().getName());
        }
    }

    /** {@return the device's bytes, read into native memory} */
    private byte[] deviceBytes(DevicePtr p, int n) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(Math.max(n, 1)).asSlice(0, n);
            gpu.copyD2H(p, s);
            return s.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /** Writes the device from native memory. */
    private void setDevice(DevicePtr p, byte[] bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(Math.max(bytes.length, 1)).asSlice(0, bytes.length);
            s.copyFrom(MemorySegment.ofArray(bytes));
            gpu.copyH2D(s, p);
        }
    }

    private static void assertGuards(byte[] all, int from, int to, String what) {
        for (int i = 0; i < all.length; i++) {
            if (i < from || i >= to) {
                assertThat(all[i]).as("%s: byte %d, outside the copied range [%d, %d)", what, i, from, to).isEqualTo(GUARD_BYTE);
            }
        }
    }

    // ---- every door, every size ----------------------------------------------------------------

    /** Each array type to the device at each size: exactly its bytes land at the interior pointer, nothing around them. */
    @Test
    public void everyArrayTypeReachesTheDeviceAtSizesAroundTheStagingBoundaries() {
        int max = SIZES[SIZES.length - 1];
        DevicePtr p = gpu.alloc(max + 2L * GUARD);
        byte[] guards = new byte[max + 2 * GUARD];
        Arrays.fill(guards, GUARD_BYTE);
        for (Kind kind : Kind.values()) {
            for (int n : SIZES) {
                String what = kind + "[" + n + " B]";
                setDevice(p, Arrays.copyOf(guards, n + 2 * GUARD));
                byte[] src = random(n, 31L * n + kind.ordinal());
                Object a = array(kind, src);
                toDevice(a, p.plus(GUARD));
                byte[] all = deviceBytes(p, n + 2 * GUARD);
                assertThat(Arrays.copyOfRange(all, GUARD, GUARD + n)).as(what).isEqualTo(src);
                assertGuards(all, GUARD, GUARD + n, what);
                assertThat(view(a).toArray(ValueLayout.JAVA_BYTE)).as("%s: the source is unchanged", what).isEqualTo(src);
            }
        }
        gpu.free(p);
    }

    /** Each array type from the device at each size: the array holds exactly what the device held. */
    @Test
    public void everyArrayTypeIsFilledFromTheDeviceAtSizesAroundTheStagingBoundaries() {
        int max = SIZES[SIZES.length - 1];
        DevicePtr p = gpu.alloc(max + 2L * GUARD);
        for (Kind kind : Kind.values()) {
            for (int n : SIZES) {
                String what = kind + "[" + n + " B]";
                byte[] dev = random(n + 2 * GUARD, 17L * n + kind.ordinal());
                setDevice(p, dev);
                Object a = array(kind, new byte[n]);
                view(a).fill((byte) 0x33);
                fromDevice(p.plus(GUARD), a);
                assertThat(view(a).toArray(ValueLayout.JAVA_BYTE)).as(what).isEqualTo(Arrays.copyOfRange(dev, GUARD, GUARD + n));
                assertThat(deviceBytes(p, n + 2 * GUARD)).as("%s: the device is unchanged", what).isEqualTo(dev);
            }
        }
        gpu.free(p);
    }

    /** Slices of heap segments at odd offsets and lengths copy their own bytes, and a slice filled from the device leaves the rest of its array alone. */
    @Test
    public void heapSegmentSlicesCopyTheirBytesOnly() {
        int[][] cases = {{3, 65_537}, {1, 7}, {5, 262_139}, {8, 262_144}, {4093, 300_001}};
        DevicePtr p = gpu.alloc(400 * KIB);
        for (int[] c : cases) {
            int off = c[0];
            int len = c[1];
            String what = "slice at " + off + " of " + len + " B";
            byte[] backing = random(off + len + 16, off * 7L + len);
            long[] longs = new long[(backing.length + 7) / 8];
            MemorySegment.ofArray(longs).asSlice(0, backing.length).copyFrom(MemorySegment.ofArray(backing));
            gpu.memset(p, GUARD_BYTE & 0xff, 400 * KIB);
            gpu.copyH2D(MemorySegment.ofArray(longs).asSlice(off, len), p.plus(5));
            byte[] all = deviceBytes(p, len + 5 + GUARD);
            assertThat(Arrays.copyOfRange(all, 5, 5 + len)).as(what).isEqualTo(Arrays.copyOfRange(backing, off, off + len));
            assertGuards(all, 5, 5 + len, what);

            byte[] dev = random(len, len * 3L);
            setDevice(p.plus(9), dev);
            int[] ints = new int[(off + len + 3) / 4 + 4];
            Arrays.fill(ints, 0x11223344);
            byte[] before = MemorySegment.ofArray(ints).toArray(ValueLayout.JAVA_BYTE);
            gpu.copyD2H(p.plus(9), MemorySegment.ofArray(ints).asSlice(off, len));
            byte[] got = MemorySegment.ofArray(ints).toArray(ValueLayout.JAVA_BYTE);
            assertThat(Arrays.copyOfRange(got, off, off + len)).as(what).isEqualTo(dev);
            assertThat(Arrays.copyOfRange(got, 0, off)).as("%s: the array before the slice", what)
                    .isEqualTo(Arrays.copyOfRange(before, 0, off));
            assertThat(Arrays.copyOfRange(got, off + len, got.length)).as("%s: the array after the slice", what)
                    .isEqualTo(Arrays.copyOfRange(before, off + len, before.length));
        }
        gpu.free(p);
    }

    /** The stream-ordered copy into heap memory, around the staging boundaries, after work on its stream. */
    @Test
    public void copyD2HOnStreamFillsHeapMemoryAfterTheStreamsWork() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(300 * KIB);
        for (int n : new int[] {100, 64 * KIB + 1, 256 * KIB, 256 * KIB + 1}) {
            byte[] dev = random(n, n);
            setDevice(p, dev);
            gpu.memsetAsync(p, 0x7e, 4, s);
            byte[] out = new byte[n];
            gpu.copyD2HOnStream(p, MemorySegment.ofArray(out), s);
            assertThat(Arrays.copyOfRange(out, 0, 4)).as("%d B: the memset before it on its stream", n)
                    .containsOnly((byte) 0x7e);
            assertThat(Arrays.copyOfRange(out, 4, n)).as("%d B", n).isEqualTo(Arrays.copyOfRange(dev, 4, n));
        }
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /**
     * A copy from a heap array has read it when it returns, and copies one after another do not
     * share what they copy: each device range keeps its own copy's bytes after the source array is
     * overwritten and later copies have run.
     */
    @Test
    public void aHeapCopyHasReadItsSourceWhenItReturns() {
        int n = 100 * KIB;
        DevicePtr[] dst = new DevicePtr[6];
        byte[][] sent = new byte[dst.length][];
        int[] src = new int[n / 4];
        for (int k = 0; k < dst.length; k++) {
            dst[k] = gpu.alloc(n);
            sent[k] = random(n, 1000 + k);
            MemorySegment.ofArray(src).copyFrom(MemorySegment.ofArray(sent[k]));
            gpu.copyH2D(src, dst[k]);
        }
        Arrays.fill(src, -1);
        for (int k = 0; k < dst.length; k++) {
            assertThat(deviceBytes(dst[k], n)).as("copy %d", k).isEqualTo(sent[k]);
            gpu.free(dst[k]);
        }
    }

    // ---- bad input -----------------------------------------------------------------------------

    private static void refused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String op, String param) {
        assertThatThrownBy(call).isInstanceOfSatisfying(GpuException.class, e -> {
            assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
            assertThat(e.operation()).isEqualTo(op);
            assertThat(e.getMessage()).contains(param + ": [0x").contains("nothing was copied");
        });
    }

    /** Overlong, freed and unknown ranges are refused naming the call and the argument, at every size, and touch nothing. */
    @Test
    public void badRangesNameTheCallAndTheArgumentAndTouchNothing() {
        DevicePtr p = gpu.alloc(300 * KIB);
        gpu.memset(p, 0x66, 300 * KIB);
        for (int n : new int[] {8, 64 * KIB, 256 * KIB}) {
            int over = 300 * KIB - n + 8;
            refused(() -> gpu.copyH2D(new byte[n], p.plus(over)), "copyH2D", "dst");
            refused(() -> gpu.copyH2D(new long[n / 8], p.plus(over)), "copyH2D", "dst");
            refused(() -> gpu.copyH2D(MemorySegment.ofArray(new float[n / 4]), p.plus(over)), "copyH2D", "dst");
            byte[] keep = new byte[n];
            Arrays.fill(keep, (byte) 0x21);
            refused(() -> gpu.copyD2H(p.plus(over), keep), "copyD2H", "src");
            refused(() -> gpu.copyD2H(p.plus(over), MemorySegment.ofArray(keep)), "copyD2H", "src");
            refused(() -> gpu.copyD2HOnStream(p.plus(over), MemorySegment.ofArray(keep), Stream.DEFAULT),
                    "copyD2HOnStream", "src");
            assertThat(keep).as("the array after refused copies").containsOnly((byte) 0x21);
        }
        assertThat(deviceBytes(p, 300 * KIB)).as("the device after refused copies").containsOnly((byte) 0x66);
        DevicePtr freed = gpu.alloc(4 * KIB);
        gpu.free(freed);
        refused(() -> gpu.copyH2D(new int[16], freed), "copyH2D", "dst");
        refused(() -> gpu.copyD2H(freed, new double[8]), "copyD2H", "src");
        refused(() -> gpu.copyH2D(new byte[8], new DevicePtr(0x10)), "copyH2D", "dst");
        assertThatThrownBy(() -> gpu.copyH2D((double[]) null, p)).isInstanceOf(NullPointerException.class).hasMessage("src");
        assertThatThrownBy(() -> gpu.copyD2H(p, (byte[]) null)).isInstanceOf(NullPointerException.class).hasMessage("dst");
        assertThatThrownBy(() -> gpu.copyD2H(p, MemorySegment.ofArray(new int[4]).asReadOnly()))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("dst: the segment is read-only");
        assertThat(gpu.fault()).isEmpty();
        gpu.free(p);
        assertStillWorks();
    }

    // ---- threads and buffers -------------------------------------------------------------------

    /**
     * Eight threads, platform and virtual, copy arrays of their own to and from ranges of their own
     * at once, at sizes staged and not: every thread reads back exactly what it wrote, so no two
     * copies shared a staging buffer.
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void eightThreadsCopyHeapArraysAtOnce() throws Exception {
        int threads = 8;
        int[] sizes = {4 * KIB, 70 * KIB, 256 * KIB, 300 * KIB};
        int span = 300 * KIB;
        DevicePtr p = gpu.alloc((long) threads * span);
        CyclicBarrier start = new CyclicBarrier(threads);
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            DevicePtr mine = p.plus((long) id * span);
            Runnable body = () -> {
                try {
                    start.await(60, TimeUnit.SECONDS);
                    for (int round = 0; round < 24; round++) {
                        int n = sizes[(round + id) % sizes.length];
                        byte[] src = random(n, id * 100_000L + round);
                        long[] out = new long[n / 8];
                        if (round % 2 == 0) {
                            gpu.copyH2D(src, mine);
                            gpu.copyD2H(mine, out);
                        } else {
                            long[] asLongs = new long[n / 8];
                            MemorySegment.ofArray(asLongs).copyFrom(MemorySegment.ofArray(src));
                            gpu.copyH2D(asLongs, mine);
                            gpu.copyD2H(mine, MemorySegment.ofArray(out));
                        }
                        byte[] back = MemorySegment.ofArray(out).toArray(ValueLayout.JAVA_BYTE);
                        if (!Arrays.equals(back, src)) {
                            wrong.add(new AssertionError("thread " + id + " round " + round + " (" + n
                                    + " B) read back other bytes than it wrote"));
                        }
                    }
                } catch (Throwable x) {
                    wrong.add(x);
                }
            };
            all.add(t % 2 == 0 ? Thread.ofPlatform().start(body) : Thread.ofVirtual().start(body));
        }
        for (Thread th : all) {
            th.join();
        }
        assertThat(wrong).isEmpty();
        gpu.free(p);
    }

    /**
     * Heap copies reuse a small set of page-locked buffers: many copies from several threads ask
     * the driver for at most eight page-locked allocations, and close gives every one back (the
     * after-test check of what the backend still holds).
     *
     * @throws Exception if waiting for a thread the test starts fails
     */
    @Test
    public void heapCopiesReuseABoundedSetOfPageLockedBuffers() throws Exception {
        CountingDriver driver = counted();
        DevicePtr p = gpu.alloc(4 * 64 * KIB);
        List<Thread> all = new ArrayList<>();
        Queue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        for (int t = 0; t < 4; t++) {
            DevicePtr mine = p.plus(t * 64L * KIB);
            all.add(Thread.ofPlatform().start(() -> {
                try {
                    byte[] b = new byte[64 * KIB];
                    for (int k = 0; k < 100; k++) {
                        gpu.copyH2D(b, mine);
                        gpu.copyD2H(mine, b);
                    }
                } catch (Throwable x) {
                    wrong.add(x);
                }
            }));
        }
        for (Thread th : all) {
            th.join();
        }
        assertThat(wrong).isEmpty();
        assertThat(driver.calls("memHostAlloc")).as("page-locked allocations for 800 heap copies").isBetween(1L, 8L);
        gpu.free(p);
    }
}
