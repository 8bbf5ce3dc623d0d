// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import metrale.gpu.GpuException;
import metrale.gpu.RedZoneViolation;
import metrale.gpu.spi.Driver;

/**
 * Red-zone policy: which allocations get a pad, filling pads with {@link #FILL}, and reading them
 * back to find writes past the end of a buffer. The pads themselves are recorded in the
 * {@link Ledger} entries, so freeing a buffer forgets its red zone.
 *
 * <p>The fill is a {@code cuMemsetD8} on the legacy default stream followed by a sync of that
 * stream, so it is complete before the allocation is handed out: a non-blocking stream is ordered
 * after nothing on the legacy stream, and {@code cuMemsetD8} is asynchronous to the host for device
 * memory. During a capture the sync is left out (it would break the capture): the fill is then
 * ordered before blocking streams' work only. Scans read with the blocking {@code cuMemcpyDtoH};
 * a scan that must see a non-blocking stream's work is preceded by a context sync (the
 * {@link Quarantine}'s scans at free).
 */
final class RedZones {

    /** The fill pattern of every pad. */
    static final int FILL = 0xCB;

    /** The most pad bytes read back per driver call. */
    private static final int CHUNK = 1 << 20;

    private final long padBytes;
    private final long minIndex;

    /**
     * @param padBytes pad size; 0 turns red zones off
     * @param minIndex the first creation index that gets a pad
     */
    RedZones(long padBytes, long minIndex) {
        this.padBytes = padBytes;
        this.minIndex = minIndex;
    }

    /** {@return whether red zones are on} */
    boolean on() {
        return padBytes > 0;
    }

    /** {@return the pad for the allocation with this creation index} */
    long padFor(long index) {
        return index >= minIndex ? padBytes : 0;
    }

    /**
     * Fills the pad after {@code [base, base + bytes)} on the legacy stream and, outside a
     * capture, waits for the fill.
     *
     * @param capturing whether a capture is in flight: the stream is then not synchronized
     */
    void fill(Driver driver, long base, long bytes, long pad, boolean capturing) {
        fill(driver, base, bytes, pad, capturing, 0);
    }

    /**
     * Fills the pad after {@code [base, base + bytes)} in the order of {@code stream} and, outside
     * a capture, waits for that stream. A pool block is filled on the stream it was allocated on:
     * a {@code cuMemAllocAsync} block is usable only in that stream's order, and a caching block
     * reused on its stream may still be written by that stream's earlier work.
     *
     * @param capturing whether a capture is in flight: the stream is then not synchronized
     * @param stream    the driver handle of the stream; 0 is the legacy stream
     */
    void fill(Driver driver, long base, long bytes, long pad, boolean capturing, long stream) {
        if (pad > 0) {
            driver.redZone(base, bytes, pad);
            if (stream == 0) {
                driver.memsetD8(base + bytes, FILL, pad);
            } else {
                driver.memsetD8Async(base + bytes, FILL, pad, stream);
            }
            if (!capturing) {
                driver.streamSynchronize(stream);
            }
        }
    }

    /**
     * Reads every pad of {@code entries} back.
     *
     * @param stillLive whether an entry is still on the ledger; a read that fails for an entry freed meanwhile is skipped
     * @return the corrupted pads, in the order of {@code entries}
     * @throws GpuException when a read fails for a live entry
     */
    List<RedZoneViolation> find(Driver driver, List<Ledger.Entry> entries, Predicate<Ledger.Entry> stillLive) {
        List<RedZoneViolation> out = new ArrayList<>();
        byte[] buf = null;
        for (Ledger.Entry e : entries) {
            if (e.pad() == 0) {
                continue;
            }
            if (buf == null) {
                buf = new byte[(int) Math.min(CHUNK, padBytes)];
            }
            long first = -1;
            long last = -1;
            long bad = 0;
            try {
                for (long off = 0; off < e.pad(); off += buf.length) {
                    int n = (int) Math.min(buf.length, e.pad() - off);
                    driver.memcpyDtoH(MemorySegment.ofArray(buf), e.end() + off, n);
                    for (int i = 0; i < n; i++) {
                        if ((buf[i] & 0xff) != FILL) {
                            if (first < 0) {
                                first = off + i;
                            }
                            last = off + i;
                            bad++;
                        }
                    }
                }
            } catch (GpuException ex) {
                if (!stillLive.test(e)) {
                    continue;
                }
                throw ex;
            }
            if (bad > 0) {
                out.add(new RedZoneViolation(e.allocation(), first, bad, last));
            }
        }
        return out;
    }

    /**
     * Refills the pads of entries with creation index in {@code [lo, hi)}.
     *
     * @param stillLive whether an entry is still on the ledger; a fill that fails for an entry freed meanwhile is skipped
     * @param capturing whether a capture is in flight (see {@link #fill})
     */
    void poison(Driver driver, List<Ledger.Entry> entries, long lo, long hi, Predicate<Ledger.Entry> stillLive,
                boolean capturing) {
        for (Ledger.Entry e : entries) {
            long idx = e.allocation().index();
            if (e.pad() == 0 || idx < lo || idx >= hi) {
                continue;
            }
            try {
                fill(driver, e.base(), e.allocation().bytes(), e.pad(), capturing);
            } catch (GpuException ex) {
                if (stillLive.test(e)) {
                    throw ex;
                }
            }
        }
    }
}
