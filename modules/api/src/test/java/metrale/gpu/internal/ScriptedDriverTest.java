// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.StickyFaultException;
import metrale.gpu.spi.BackendProvider;
import org.junit.jupiter.api.Test;

/** The core's test driver itself: a runtime opens over it, its bytes are the runtime's, its failures are scripted. */
class ScriptedDriverTest {

    @Test
    void aRuntimeOpensOverItAndItsCopiesMoveBytes() {
        ScriptedDriver d = new ScriptedDriver();
        try (Gpu gpu = d.open()) {
            assertThat(gpu.backendName()).isEqualTo(ScriptedDriver.BACKEND);
            DevicePtr p = gpu.alloc(1000);
            assertThat(p.address() % 256).isZero();
            gpu.copyH2D(new byte[] {1, 2, 3}, p.plus(500));
            assertThat(d.read(p.address() + 499, 5)).containsExactly(0, 1, 2, 3, 0);
            gpu.memset(p, 9, 4);
            byte[] back = new byte[4];
            gpu.copyD2H(p, back);
            assertThat(back).containsOnly(9);
            assertThat(d.count("memAlloc")).isEqualTo(1);
            gpu.free(p);
            assertThat(d.allocations()).isEmpty();
        }
        assertThat(d.isClosed()).isTrue();
        assertThat(d.calls()).endsWith("close");
    }

    @Test
    void theBackendIsAvailableOnlyToAThreadOpeningIt() {
        BackendProvider p = new ScriptedDriver.Provider();
        assertThat(p.availability().available()).isFalse();
        assertThat(Gpu.backends()).anySatisfy(b -> {
            assertThat(b.name()).isEqualTo(ScriptedDriver.BACKEND);
            assertThat(b.available()).isFalse();
        });
        assertThatThrownBy(() -> p.open(metrale.gpu.spi.DriverConfig.empty())).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aScriptedFailureFailsTheNextCallOnlyAndAStickyOneEveryCall() {
        ScriptedDriver d = new ScriptedDriver();
        try (Gpu gpu = d.open()) {
            d.failNext("memAlloc", CudaError.OUT_OF_MEMORY);
            assertThatThrownBy(() -> gpu.alloc(64)).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.OUT_OF_MEMORY));
            gpu.free(gpu.alloc(64));
            d.failNext("ctxSynchronize", CudaError.ILLEGAL_ADDRESS);
            assertThatThrownBy(gpu::synchronize).isInstanceOfSatisfying(GpuException.class,
                    e -> assertThat(e.error()).isEqualTo(CudaError.ILLEGAL_ADDRESS));
            assertThatThrownBy(() -> gpu.alloc(64)).isInstanceOf(StickyFaultException.class);
        }
    }

    @Test
    void aCallNoTestScriptsSaysSo() {
        ScriptedDriver d = new ScriptedDriver();
        assertThatThrownBy(() -> d.compileToPtx("p", "src")).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("compileToPtx");
    }
}
