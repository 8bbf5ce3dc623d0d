// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.LeakDetection;
import metrale.gpu.PoolSnapshot;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.sim.SimTwinMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulator opened with no options, as a test that does not use the kit opens it: every
 * diagnostic names the {@code File.java:line} the guide promises, since the simulator's defaults
 * are the kit's ({@code leakDetection=all}, a 64 MiB quarantine). Only a fresh simulated process
 * is asked for, so that a fault stays in its test.
 */
class SimDefaultsNameSitesTest {

    private static GpuBuilder plain() {
        return Gpu.builder().backend("sim").backendOption(SimOptions.PROCESS, SimOptions.PROCESS_FRESH);
    }

    @Test
    void theResolvedOptionsAreTheKitsAndCudaKeepsTheFastOnes() {
        try (Gpu gpu = plain().open()) {
            assertThat(gpu.options().leakDetection()).isEqualTo(LeakDetection.ALL);
            assertThat(gpu.options().quarantineBytes()).isEqualTo(64L << 20);
        }
        assertThat(Gpu.builder().backend("cuda").options().leakDetection()).isEqualTo(LeakDetection.SAMPLED);
        assertThat(Gpu.builder().backend("cuda").options().quarantineBytes()).isZero();
        assertThat(plain().leakDetection(LeakDetection.SAMPLED).quarantineBytes(0).options())
                .as("what the user sets wins").satisfies(o -> {
                    assertThat(o.leakDetection()).isEqualTo(LeakDetection.SAMPLED);
                    assertThat(o.quarantineBytes()).isZero();
                });
    }

    @Test
    void aDoubleFreeNamesWhereTheBufferWasAllocatedAndFreed() {
        try (Gpu gpu = plain().open()) {
            DevicePtr p = gpu.alloc(64); String allocated = here();
            gpu.free(p); String freed = here();
            assertThatThrownBy(() -> gpu.free(p)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                assertThat(e.getMessage()).contains("allocated at " + allocated, "freed at " + freed);
            });
        }
    }

    @Test
    void aCopyFromFreedMemoryIsRefusedNamingBothSitesThoughThePoolReusesAddresses() {
        try (Gpu gpu = plain().open()) {
            DevicePtr p = gpu.alloc(256); String allocated = here();
            gpu.free(p); String freed = here();
            DevicePtr next = gpu.alloc(256);
            assertThatThrownBy(() -> gpu.copyD2H(p, new byte[256])).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                assertThat(e.getMessage()).contains("freed memory", "allocated at " + allocated, "freed at " + freed);
            });
            gpu.free(next);
        }
    }

    @Test
    void aKernelOnFreedMemoryTheQuarantineHoldsFaultsNamingBothSites() {
        for (String allocator : new String[] {"caching", "driver"}) {
            try (Gpu gpu = plain().allocator(allocator).backendOption(SimOptions.TWINS, SimTwinMode.OFF.option()).open();
                 KernelArgs args = new KernelArgs()) {
                gpu.loadModule("pool_reuse", PoolReuseTest.ptx());
                DevicePtr p = gpu.alloc(512); String allocated = here();
                gpu.free(p); String freed = here();
                gpu.launch(gpu.kernel("pool_reuse", "touch"), LaunchConfig.of(1, 32), Stream.DEFAULT,
                        args.clear().ptr(p).i32(1));
                assertThatThrownBy(gpu::synchronize).as(allocator).isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS);
                    assertThat(e.getMessage()).contains("held in the runtime's quarantine", "allocated at " + allocated,
                            "freed at " + freed);
                });
            }
        }
    }

    @Test
    void outOfMemoryNamesTheRequestAndTheLiveAllocationsSites() {
        try (Gpu gpu = plain().backendOption("sim.capacity", Long.toString(1 << 20)).allocator("driver").open()) {
            DevicePtr held = gpu.alloc(600_000); String site = here();
            assertThatThrownBy(() -> gpu.alloc(600_000)).isInstanceOfSatisfying(GpuException.class, e -> {
                assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY);
                assertThat(e.getMessage()).contains("SimDefaultsNameSitesTest.java:");
            });
            assertThat(gpu.allocReport(10, 0)).contains(site);
            gpu.free(held);
        }
    }

    @Test
    void aRedZoneViolationNamesItsAllocationSite() {
        try (Gpu gpu = plain().redZoneBytes(64).open()) {
            DevicePtr p = gpu.alloc(100); String site = here();
            gpu.copyH2D(new byte[] {1}, new DevicePtr(p.address() + 100));
            assertThat(gpu.findRedzoneViolations()).singleElement()
                    .satisfies(v -> assertThat(v.allocation().site()).isEqualTo(site));
            gpu.free(p);
        }
    }

    @Test
    void aPoolRaceNamesTheBlocksSite() {
        // The race needs the address handed out again at once: no quarantine.
        try (Gpu gpu = plain().quarantineBytes(0).open(); KernelArgs args = new KernelArgs()) {
            gpu.loadModule("pool_reuse", PoolReuseTest.ptx());
            Stream a = gpu.createStream(true);
            Stream b = gpu.createStream(true);
            DevicePtr p = gpu.alloc(4096, a);
            gpu.launch(gpu.kernel("pool_reuse", "touch"), LaunchConfig.forElements(4096, 256), a, args.clear().ptr(p).i32(4096));
            gpu.pool().free(p, b);
            DevicePtr q = gpu.alloc(4096, b); String site = here();
            assertThat(gpu.pool().races()).isNotEmpty().allSatisfy(r -> assertThat(r.site()).isEqualTo(site));
            gpu.synchronize();
            gpu.free(q, b);
            gpu.synchronize();
            gpu.destroyStream(a);
            gpu.destroyStream(b);
        }
    }

    @Test
    void aLeakAtCloseNamesItsSite() {
        String site;
        try (RuntimeTestSupport.LogCapture log = new RuntimeTestSupport.LogCapture()) {
            try (Gpu gpu = plain().open()) {
                gpu.alloc(64); site = here();
            }
            assertThat(log.warnings()).anySatisfy(w -> assertThat(w).contains("leak:", "allocated at " + site));
        }
    }

    @Test
    void thePoolSnapshotNamesEachLiveBlocksSite() {
        try (Gpu gpu = plain().open()) {
            DevicePtr p = gpu.alloc(3000); String site = here();
            PoolSnapshot snap = gpu.pool().snapshot();
            assertThat(snap.chunks()).flatMap(PoolSnapshot.Chunk::blocks).filteredOn(PoolSnapshot.Block::allocated)
                    .singleElement().satisfies(b -> assertThat(b.site()).isEqualTo(site));
            gpu.free(p);
        }
    }

    @Test
    void theJfrAllocEventNamesItsSite(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("alloc.jfr");
        String site;
        try (Recording rec = new Recording(); Gpu gpu = plain().open()) {
            rec.enable("metrale.Alloc");
            rec.start();
            DevicePtr p = gpu.alloc(3000); site = here();
            gpu.free(p);
            rec.stop();
            rec.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Alloc")).singleElement()
                .satisfies(e -> assertThat(e.getString("site")).isEqualTo(site));
    }
}
