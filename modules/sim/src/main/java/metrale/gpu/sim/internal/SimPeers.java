// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import metrale.gpu.CudaError;
import metrale.gpu.GpuDevice;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;

/**
 * One simulated context's peers: the topology a device listing reports (every device of a
 * simulated process a peer of every other), which peer contexts it may address, the rules of
 * {@code cuDeviceCanAccessPeer} and {@code cuCtxEnablePeerAccess}, and the copy between two
 * contexts' memories. A peer must be a simulated device of the same simulated process: contexts of
 * two processes cannot share memory. The enabled set is guarded by the device lock.
 */
final class SimPeers {

    private final SimProcess process;
    private final int ordinal;
    private final SimLock lock;
    private final DeviceMemory memory;
    private final Engine engine;
    /** The device's check that it is usable (not closed, nothing sticky), under its lock. */
    private final Consumer<String> check;
    private final Set<SimPeers> enabled = Collections.newSetFromMap(new IdentityHashMap<>());

    SimPeers(SimProcess process, int ordinal, SimLock lock, DeviceMemory memory, Engine engine, Consumer<String> check) {
        this.process = process;
        this.ordinal = ordinal;
        this.lock = lock;
        this.memory = memory;
        this.engine = engine;
        this.check = check;
    }

    /**
     * {@return the simulated devices {@code config} describes} Every device can access every other.
     *
     * @param config the options: {@code sim.devices}, {@code sim.capacity}
     */
    static List<GpuDevice> devices(DriverConfig config) {
        int n = SimSettings.deviceCount(config);
        long capacity = SimSettings.listedCapacity(config);
        List<GpuDevice> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            List<Integer> peers = new ArrayList<>(n - 1);
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    peers.add(j);
                }
            }
            out.add(new GpuDevice(i, "sim", "metrale simulator", capacity, 9, 0, pciBusId(i), peers));
        }
        return out;
    }

    private static String pciBusId(int ordinal) {
        return String.format(Locale.ROOT, "0000:%02x:00.0", ordinal + 1);
    }

    /** {@return {@code d} as a simulated device of this process, else the CUDA error for a context it cannot use} */
    SimDevice peer(Driver d, String op) {
        if (!(d instanceof SimDevice p)) {
            throw err(CudaError.INVALID_CONTEXT, op, "the peer is a " + d.getClass().getName() + ", not a simulated device");
        }
        SimPeers q = p.peers();
        if (q.process != process) {
            throw err(CudaError.INVALID_CONTEXT, op, "the peer device " + q.ordinal + " lives in " + q.process
                    + " and this one in " + process + ": contexts of two processes cannot share memory");
        }
        return p;
    }

    /** {@code cuDeviceCanAccessPeer}: every other device of the process, not the context's own. */
    boolean canAccess(SimPeers p) {
        return p.ordinal != ordinal;
    }

    /** {@code cuCtxEnablePeerAccess}, under this device's lock: this context's kernels may then address {@code p}'s memory. */
    void enable(SimPeers p, String op) {
        if (p.ordinal == ordinal) {
            throw err(CudaError.INVALID_DEVICE, op, "the peer context is on this context's own device " + ordinal);
        }
        if (!enabled.add(p)) {
            throw err(CudaError.PEER_ACCESS_ALREADY_ENABLED, op, "device " + ordinal + " -> device " + p.ordinal);
        }
        engine.peers.add(p.memory);
    }

    /**
     * Copies {@code bytes} from this context's {@code src} to {@code p}'s {@code dst} now, under both
     * devices' locks taken in serial order, so two threads copying between the same two devices
     * cannot deadlock.
     */
    void copy(String op, long dst, SimPeers p, long src, long bytes) {
        if (bytes == 0) {
            return;
        }
        SimLock first = SimLock.first(lock, p.lock);
        SimLock second = first == lock ? p.lock : lock;
        try (var _ = first.hold(); var _ = second.hold()) {
            check.accept(op);
            p.check.accept(op);
            String d = "dst=" + hex(dst) + " (device " + p.ordinal + "), src=" + hex(src) + " (device " + ordinal
                    + "), bytes=" + bytes;
            memory.checkRange(src, bytes, op, d, "source");
            p.memory.checkRange(dst, bytes, op, d, "destination");
            MemorySegment from = memory.rangeOrFault(src, bytes, op);
            MemorySegment to = p.memory.rangeOrFault(dst, bytes, op);
            MemorySegment.copy(from, 0, to, 0, bytes);
        }
    }

    private static GpuException err(CudaError e, String op, String details) {
        return new GpuException(e, op, details);
    }

    private static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
