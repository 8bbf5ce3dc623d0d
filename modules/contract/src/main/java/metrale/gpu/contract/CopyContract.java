// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every copy form: arrays of each type, heap and native segments, interior pointers, the
 * stream-ordered and asynchronous forms, device-to-device copies in one and two dimensions, and
 * memsets. Stale-before-sync results are asserted only where {@link #observableAsync()} says the
 * backend guarantees them.
 */
public abstract class CopyContract extends GpuContract {

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected CopyContract() {
    }

    /** float[] round trip. */
    @Test
    public void floatArraysRoundTrip() {
        float[] src = new float[333];
        for (int i = 0; i < src.length; i++) {
            src[i] = i * 0.25f - 7f;
        }
        src[5] = Float.NaN;
        src[6] = -0.0f;
        src[7] = Float.NEGATIVE_INFINITY;
        DevicePtr p = gpu.alloc(4L * src.length);
        gpu.copyH2D(src, p);
        float[] out = new float[src.length];
        gpu.copyD2H(p, out);
        for (int i = 0; i < src.length; i++) {
            assertThat(Float.floatToRawIntBits(out[i])).as("float %d", i).isEqualTo(Float.floatToRawIntBits(src[i]));
        }
        gpu.free(p);
    }

    /** int[] round trip. */
    @Test
    public void intArraysRoundTrip() {
        int[] src = iota(257, Integer.MIN_VALUE + 3);
        DevicePtr p = gpu.alloc(4L * src.length);
        gpu.copyH2D(src, p);
        assertThat(readInts(p, src.length)).containsExactly(src);
        gpu.free(p);
    }

    /** long[] round trip. */
    @Test
    public void longArraysRoundTrip() {
        long[] src = new long[100];
        for (int i = 0; i < src.length; i++) {
            src[i] = 0x0123_4567_89ab_cdefL * (i + 1);
        }
        DevicePtr p = gpu.alloc(8L * src.length);
        gpu.copyH2D(src, p);
        long[] out = new long[src.length];
        gpu.copyD2H(p, out);
        assertThat(out).containsExactly(src);
        gpu.free(p);
    }

    /** double[] round trip. */
    @Test
    public void doubleArraysRoundTrip() {
        double[] src = new double[77];
        for (int i = 0; i < src.length; i++) {
            src[i] = Math.PI * i - 1e300;
        }
        DevicePtr p = gpu.alloc(8L * src.length);
        gpu.copyH2D(src, p);
        double[] out = new double[src.length];
        gpu.copyD2H(p, out);
        assertThat(out).containsExactly(src);
        gpu.free(p);
    }

    /** byte[] round trip, with an odd length. */
    @Test
    public void byteArraysRoundTrip() {
        byte[] src = new byte[1001];
        for (int i = 0; i < src.length; i++) {
            src[i] = (byte) (i * 31);
        }
        DevicePtr p = gpu.alloc(src.length);
        gpu.copyH2D(src, p);
        assertThat(readBytes(p, src.length)).containsExactly(src);
        gpu.free(p);
    }

    /** Arrays and the device agree on little-endian layout: ints written read back as bytes. */
    @Test
    public void arraysAreLittleEndianOnTheDevice() {
        DevicePtr p = gpu.alloc(8);
        gpu.copyH2D(new int[] {0x04030201, 0x08070605}, p);
        assertThat(readBytes(p, 8)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        long[] l = new long[1];
        gpu.copyD2H(p, l);
        assertThat(l[0]).isEqualTo(0x0807060504030201L);
        gpu.free(p);
    }

    /** Heap and native segments as source and destination; the segment's size is the count. */
    @Test
    public void segmentsRoundTrip() {
        DevicePtr p = gpu.alloc(512);
        gpu.memset(p, 0xEE, 512);
        byte[] heap = new byte[200];
        for (int i = 0; i < heap.length; i++) {
            heap[i] = (byte) i;
        }
        gpu.copyH2D(MemorySegment.ofArray(heap), p);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nat = arena.allocate(512);
            gpu.copyD2H(p, nat);
            for (int i = 0; i < 512; i++) {
                byte expected = i < 200 ? (byte) i : (byte) 0xEE;
                assertThat(nat.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(expected);
            }
            MemorySegment src = arena.allocate(64);
            src.fill((byte) 0x42);
            gpu.copyH2D(src, p.plus(300));
            byte[] out = new byte[512];
            gpu.copyD2H(p, MemorySegment.ofArray(out));
            assertThat(out[299]).isEqualTo((byte) 0xEE);
            assertThat(out[300]).isEqualTo((byte) 0x42);
            assertThat(out[363]).isEqualTo((byte) 0x42);
            assertThat(out[364]).isEqualTo((byte) 0xEE);
        }
        gpu.free(p);
    }

    /** Copies to and from interior pointers touch exactly their range. */
    @Test
    public void interiorPointersCopyTheirRangeOnly() {
        DevicePtr p = gpu.alloc(400);
        gpu.copyH2D(ints(100, -1), p);
        gpu.copyH2D(iota(10, 500), p.plus(40));
        int[] all = readInts(p, 100);
        for (int i = 0; i < 100; i++) {
            assertThat(all[i]).as("int %d", i).isEqualTo(i >= 10 && i < 20 ? 500 + i - 10 : -1);
        }
        int[] slice = new int[5];
        gpu.copyD2H(p.plus(48), slice);
        assertThat(slice).containsExactly(502, 503, 504, 505, 506);
        gpu.free(p);
    }

    /** Empty copies and memsets (count 0) do nothing. */
    @Test
    public void zeroLengthCopiesDoNothing() {
        DevicePtr a = gpu.alloc(64);
        DevicePtr b = gpu.alloc(64);
        gpu.copyH2D(ints(16, 1), a);
        gpu.copyH2D(ints(16, 2), b);
        gpu.copyH2D(new int[0], a);
        gpu.copyD2H(a, new int[0]);
        gpu.copyD2D(a, b, 0);
        gpu.memset(a, 0, 0);
        Stream s = gpu.createStream();
        gpu.copyD2DAsync(a, b, 0, s);
        gpu.memsetAsync(a, 0, 0, s);
        gpu.synchronize(s);
        assertThat(readInts(a, 16)).containsOnly(1);
        assertThat(readInts(b, 16)).containsOnly(2);
        gpu.destroyStream(s);
        gpu.free(a);
        gpu.free(b);
    }

    /** A blocking device-to-device copy, ordered after earlier work on the legacy stream. */
    @Test
    public void copyD2DFollowsEarlierLegacyWork() {
        DevicePtr a = gpu.alloc(1024);
        DevicePtr b = gpu.alloc(1024);
        fill(a, 4f, 256, Stream.DEFAULT);
        gpu.copyD2D(a, b, 1024);
        assertThat(readFloats(b, 256)).containsOnly(4f);
        gpu.memset(b, 0, 1024);
        gpu.copyD2D(a.plus(16), b.plus(512), 64);
        float[] out = readFloats(b, 256);
        for (int i = 0; i < 256; i++) {
            assertThat(out[i]).as("float %d", i).isEqualTo(i >= 128 && i < 144 ? 4f : 0f);
        }
        gpu.free(a);
        gpu.free(b);
    }

    /** An asynchronous device-to-device copy runs in stream order. */
    @Test
    public void copyD2DAsyncRunsInStreamOrder() {
        Stream s = gpu.createStream();
        DevicePtr a = gpu.alloc(400);
        DevicePtr b = gpu.alloc(400);
        gpu.memsetAsync(b, 0, 400, s);
        fill(a, 1f, 100, s);
        gpu.copyD2DAsync(a, b, 200, s);
        fill(a, 2f, 100, s);
        gpu.synchronize(s);
        float[] out = readFloats(b, 100);
        for (int i = 0; i < 100; i++) {
            assertThat(out[i]).as("float %d", i).isEqualTo(i < 50 ? 1f : 0f);
        }
        assertThat(readFloats(a, 100)).containsOnly(2f);
        gpu.destroyStream(s);
        gpu.free(a);
        gpu.free(b);
    }

    /** Memset sets bytes, at interior pointers too, and takes the low byte of values 0 to 255. */
    @Test
    public void memsetSetsBytes() {
        DevicePtr p = gpu.alloc(300);
        gpu.memset(p, 0, 300);
        gpu.memset(p.plus(7), 0xAB, 100);
        gpu.memset(p.plus(200), 255, 1);
        byte[] out = readBytes(p, 300);
        for (int i = 0; i < 300; i++) {
            byte expected = i >= 7 && i < 107 ? (byte) 0xAB : i == 200 ? (byte) 0xFF : 0;
            assertThat(out[i]).as("byte %d", i).isEqualTo(expected);
        }
        gpu.free(p);
    }

    /** An async memset runs in stream order: after the kernel before it, before the kernel after it. */
    @Test
    public void memsetAsyncRunsInStreamOrder() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(400);
        fill(p, 9f, 100, s);
        gpu.memsetAsync(p, 0, 200, s);
        addI32(p, 3, 10, s);
        gpu.synchronize(s);
        int[] out = readInts(p, 100);
        for (int i = 0; i < 100; i++) {
            assertThat(out[i]).as("int %d", i).isEqualTo(i < 10 ? 3 : i < 50 ? 0 : Float.floatToRawIntBits(9f));
        }
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** copyD2HOnStream orders the copy on the stream and waits for it: it sees the stream's work. */
    @Test
    public void copyD2HOnStreamSeesTheStreamsWork() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(256);
        gpu.memsetAsync(p, 0, 256, s);
        fill(p, 6f, 64, s);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(256);
            gpu.copyD2HOnStream(p, out, s);
            for (int i = 0; i < 64; i++) {
                assertThat(out.getAtIndex(ValueLayout.JAVA_FLOAT, i)).isEqualTo(6f);
            }
        }
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /**
     * copyD2HOnStream into page-locked memory, where the copy itself is asynchronous, has landed
     * when it returns, and every byte of a heap destination too.
     */
    @Test
    public void copyD2HOnStreamIntoPinnedMemoryHasLandedOnReturn() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(256);
        MemorySegment pinned = gpu.allocHostPinned(256);
        pinned.fill((byte) 0);
        gpu.memsetAsync(p, 0, 256, s);
        fill(p, 7f, 64, s);
        gpu.copyD2HOnStream(p, pinned, s);
        for (int i = 0; i < 64; i++) {
            assertThat(pinned.getAtIndex(ValueLayout.JAVA_FLOAT, i)).as("float %d", i).isEqualTo(7f);
        }
        fill(p, 8f, 64, s);
        float[] heap = new float[64];
        gpu.copyD2HOnStream(p, MemorySegment.ofArray(heap), s);
        assertThat(heap).containsOnly(8f);
        gpu.freeHostPinned(pinned);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /**
     * copyH2DAsync from page-locked memory has read its source when it returns, so the caller may
     * refill it at once; copyH2DAsyncRetained reads it when the copy runs, where that is observable.
     */
    @Test
    public void copyH2DAsyncFromPinnedMemoryHasReadItsSourceOnReturn() {
        Stream s = gpu.createStream(true);
        DevicePtr p = gpu.alloc(256);
        MemorySegment pin = gpu.allocHostPinned(256);
        pin.fill((byte) 5);
        gpu.copyH2DAsync(pin, p, s);
        pin.fill((byte) 6);
        gpu.synchronize(s);
        assertThat(readBytes(p, 256)).as("what copyH2DAsync copied").containsOnly((byte) 5);
        gpu.copyH2DAsyncRetained(pin, p, s);
        pin.fill((byte) 7);
        gpu.synchronize(s);
        if (observableAsync()) {
            assertThat(readBytes(p, 256)).as("a retained source is read when the copy runs").containsOnly((byte) 7);
        }
        gpu.freeHostPinned(pin);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** An async D2H lands after the stream is synchronized; before that it is stale where observable. */
    @Test
    public void copyD2HAsyncLandsAfterSync() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(256);
        MemorySegment host = gpu.allocHostPinned(256);
        host.fill((byte) 0x11);
        gpu.memsetAsync(p, 0, 256, s);
        fill(p, 8f, 64, s);
        gpu.copyD2HAsync(p, host, s);
        if (observableAsync()) {
            for (int i = 0; i < 256; i++) {
                assertThat(host.get(ValueLayout.JAVA_BYTE, i)).as("byte %d before the sync", i).isEqualTo((byte) 0x11);
            }
        }
        gpu.synchronize(s);
        for (int i = 0; i < 64; i++) {
            assertThat(host.getAtIndex(ValueLayout.JAVA_FLOAT, i)).as("float %d after the sync", i).isEqualTo(8f);
        }
        gpu.freeHostPinned(host);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** An async D2H into ordinary native memory works too once the stream is synchronized. */
    @Test
    public void copyD2HAsyncIntoPageableMemory() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(128);
        gpu.copyH2D(iota(32, 40), p);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment host = arena.allocate(128);
            gpu.copyD2HAsync(p, host, s);
            gpu.synchronize(s);
            for (int i = 0; i < 32; i++) {
                assertThat(host.getAtIndex(ValueLayout.JAVA_INT, i)).isEqualTo(40 + i);
            }
        }
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** copyH2DAsync from page-locked memory waits before returning, so the caller may reuse the source. */
    @Test
    public void copyH2DAsyncFromPinnedSourceMayBeReusedOnReturn() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(400);
        MemorySegment src = gpu.allocHostPinned(400);
        for (int i = 0; i < 100; i++) {
            src.setAtIndex(ValueLayout.JAVA_INT, i, i + 1);
        }
        fill(p, 0f, 100, s);
        gpu.copyH2DAsync(src, p, s);
        src.fill((byte) 0x7F);
        gpu.synchronize(s);
        assertThat(readInts(p, 100)).containsExactly(iota(100, 1));
        gpu.freeHostPinned(src);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** copyH2DAsync from ordinary native memory: the caller may overwrite and drop the source on return. */
    @Test
    public void copyH2DAsyncFromPageableSourceMayBeDroppedOnReturn() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(400);
        fill(p, 0f, 100, s);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(400);
            for (int i = 0; i < 100; i++) {
                src.setAtIndex(ValueLayout.JAVA_INT, i, 1000 + i);
            }
            gpu.copyH2DAsync(src, p, s);
            src.fill((byte) 0x7F);
        }
        gpu.synchronize(s);
        assertThat(readInts(p, 100)).containsExactly(iota(100, 1000));
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Async copies take native memory only: a heap segment (which may move) is refused before the device. */
    @Test
    public void asyncCopiesRefuseHeapSegments() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(40);
        gpu.copyH2D(ints(10, 3), p);
        MemorySegment heap = MemorySegment.ofArray(new int[10]);
        assertLedgerUnchanged(() -> {
            assertThatThrownBy(() -> gpu.copyH2DAsync(heap, p, s)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> gpu.copyH2DAsyncRetained(heap, p, s)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> gpu.copyD2HAsync(p, heap, s)).isInstanceOf(IllegalArgumentException.class);
        });
        gpu.synchronize(s);
        assertThat(readInts(p, 10)).containsOnly(3);
        assertThat(heap.toArray(ValueLayout.JAVA_INT)).containsOnly(0);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /**
     * copyH2DAsyncRetained does not wait: from page-locked memory the copy reads the source when it
     * executes, so a change made before the sync is what lands where asynchrony is observable.
     */
    @Test
    public void copyH2DAsyncRetainedReadsThePinnedSourceWhenItRuns() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.memset(p, 0, 64);
        gpu.synchronize();
        MemorySegment src = gpu.allocHostPinned(64);
        src.fill((byte) 1);
        gpu.copyH2DAsyncRetained(src, p, s);
        if (observableAsync()) {
            src.fill((byte) 2);
            gpu.synchronize(s);
            assertThat(readBytes(p, 64)).as("the source as it was when the copy ran").containsOnly(2);
        } else {
            gpu.synchronize(s);
            assertThat(readBytes(p, 64)).containsOnly(1);
        }
        gpu.freeHostPinned(src);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** Where asynchrony is observable, work on a non-blocking stream is not seen by a legacy D2H before a sync. */
    @Test
    public void nonBlockingStreamWorkIsStaleToLegacyReadsBeforeSync() {
        Stream nb = gpu.createStream(true);
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 5), p);
        addI32(p, 1, 16, nb);
        if (observableAsync()) {
            assertThat(readInts(p, 16)).as("a legacy read does not wait for a non-blocking stream").containsOnly(5);
        }
        gpu.synchronize(nb);
        assertThat(readInts(p, 16)).containsOnly(6);
        gpu.destroyStream(nb);
        gpu.free(p);
    }

    /** A blocking D2H on the legacy stream waits for earlier work on blocking streams. */
    @Test
    public void legacyD2HWaitsForBlockingStreams() {
        Stream s = gpu.createStream();
        DevicePtr p = gpu.alloc(64);
        gpu.copyH2D(ints(16, 5), p);
        addI32(p, 2, 16, s);
        assertThat(readInts(p, 16)).containsOnly(7);
        gpu.destroyStream(s);
        gpu.free(p);
    }

    /** An async copy ordered after another stream's kernel by an event sees that kernel's result. */
    @Test
    public void asyncCopiesFollowEventDependencies() {
        Stream producer = gpu.createStream(true);
        Stream consumer = gpu.createStream(true);
        Event done = gpu.createEvent();
        DevicePtr a = gpu.alloc(400);
        DevicePtr b = gpu.alloc(400);
        gpu.memsetAsync(b, 0, 400, consumer);
        fill(a, 5f, 100, producer);
        gpu.recordEvent(done, producer);
        gpu.streamWaitEvent(consumer, done);
        gpu.copyD2DAsync(a, b, 400, consumer);
        gpu.synchronize(consumer);
        assertThat(readFloats(b, 100)).containsOnly(5f);
        gpu.destroyEvent(done);
        gpu.destroyStream(producer);
        gpu.destroyStream(consumer);
        gpu.free(a);
        gpu.free(b);
    }

    /** 2D copy: rows land at the destination pitch, padding is untouched (conformance case 11). */
    @Test
    public void copy2DHonoursPitches() {
        Stream s = gpu.createStream();
        DevicePtr src = gpu.alloc(64 * 8);
        DevicePtr dst = gpu.alloc(128 * 8);
        byte[] pattern = new byte[64 * 8];
        for (int i = 0; i < pattern.length; i++) {
            pattern[i] = (byte) (i % 251 + 1);
        }
        gpu.copyH2D(pattern, src);
        gpu.memset(dst, 0xEE, 128 * 8);
        gpu.copyD2D2DAsync(src, 64, dst, 128, 48, 8, s);
        gpu.synchronize(s);
        byte[] out = readBytes(dst, 128 * 8);
        for (int row = 0; row < 8; row++) {
            for (int col = 0; col < 128; col++) {
                byte expected = col < 48 ? pattern[row * 64 + col] : (byte) 0xEE;
                assertThat(out[row * 128 + col]).as("row %d col %d", row, col).isEqualTo(expected);
            }
        }
        gpu.destroyStream(s);
        gpu.free(src);
        gpu.free(dst);
    }

    /** Copy counters see each blocking copy and its bytes. */
    @Test
    public void copiesAreCounted() {
        var c = gpu.telemetry().counters();
        DevicePtr a = gpu.alloc(100);
        DevicePtr b = gpu.alloc(100);
        long h2d = c.h2dCopies();
        long bh2d = c.bytesH2D();
        long d2h = c.d2hCopies();
        long bd2h = c.bytesD2H();
        long d2d = c.d2dCopies();
        long bd2d = c.bytesD2D();
        gpu.copyH2D(new byte[100], a);
        gpu.copyD2D(a, b, 60);
        gpu.copyD2H(b, new byte[40]);
        assertThat(c.h2dCopies() - h2d).isEqualTo(1);
        assertThat(c.bytesH2D() - bh2d).isEqualTo(100);
        assertThat(c.d2dCopies() - d2d).isEqualTo(1);
        assertThat(c.bytesD2D() - bd2d).isEqualTo(60);
        assertThat(c.d2hCopies() - d2h).isEqualTo(1);
        assertThat(c.bytesD2H() - bd2h).isEqualTo(40);
        gpu.free(a);
        gpu.free(b);
    }
}
