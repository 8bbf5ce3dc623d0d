package metrale.gpu.internal;

import metrale.gpu.LaunchConfig;
import metrale.telemetry.GpuAllocEvent;
import metrale.telemetry.GpuCopyEvent;
import metrale.telemetry.GpuFreeEvent;
import metrale.telemetry.GpuLaunchEvent;
import metrale.telemetry.GpuSyncEvent;
import metrale.telemetry.LaunchTrace;

/**
 * Emits the runtime's JFR events. Each method is small so it inlines into its caller and, with
 * no recording enabling the event, escape analysis removes the event object: nothing is allocated.
 */
final class Jfr {

    private Jfr() {
    }

    static void launch(LaunchTrace names, long func, LaunchConfig c, long stream) {
        GpuLaunchEvent e = new GpuLaunchEvent();
        if (e.shouldCommit()) {
            e.kernel = names.nameOf(func);
            e.function = func;
            e.gridX = c.grid().x();
            e.gridY = c.grid().y();
            e.gridZ = c.grid().z();
            e.blockX = c.block().x();
            e.blockY = c.block().y();
            e.blockZ = c.block().z();
            e.sharedMemBytes = c.sharedMemBytes();
            e.stream = stream;
            e.commit();
        }
    }

    static void alloc(long address, long bytes, String site, boolean managed) {
        GpuAllocEvent e = new GpuAllocEvent();
        if (e.shouldCommit()) {
            e.address = address;
            e.bytes = bytes;
            e.site = site;
            e.managed = managed;
            e.commit();
        }
    }

    static void free(long address, long bytes) {
        GpuFreeEvent e = new GpuFreeEvent();
        if (e.shouldCommit()) {
            e.address = address;
            e.bytes = bytes;
            e.commit();
        }
    }

    static void copy(String direction, long bytes, boolean async, long stream) {
        GpuCopyEvent e = new GpuCopyEvent();
        if (e.shouldCommit()) {
            e.direction = direction;
            e.bytes = bytes;
            e.async = async;
            e.stream = stream;
            e.commit();
        }
    }

    static void sync(String what, long handle) {
        GpuSyncEvent e = new GpuSyncEvent();
        if (e.shouldCommit()) {
            e.what = what;
            e.stream = handle;
            e.commit();
        }
    }
}
