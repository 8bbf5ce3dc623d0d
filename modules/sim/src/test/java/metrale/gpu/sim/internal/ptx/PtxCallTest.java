// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@code call} to {@code .func}s with parameters and return values, two levels deep, and
 * functions with {@code .local} depots (the caller's and the callee's at once), from the PTX nvcc
 * writes for {@code ptx/calls.cu}.
 */
class PtxCallTest {

    static String resource(String name) {
        try (InputStream in = PtxCallTest.class.getResourceAsStream("/ptx/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long mix(int a, long b, float c) {
        return (long) a * 3 + b - (long) (c * 2.0f);
    }

    @Test
    void callsPassParametersAndReturnValuesTwoLevelsDeep() {
        String ptx = resource("calls.ptx");
        assertThat(ptx).contains("call.uni", ".func");
        int n = 300;
        HeapGlobal mem = new HeapGlobal();
        long in = mem.alloc(8 * n);
        long out = mem.alloc(8 * n);
        long out2 = mem.alloc(4 * n);
        ByteBuffer ib = mem.region(in);
        for (int i = 0; i < n; i++) {
            ib.putLong(8 * i, 1_000_000_007L * (i - 150));
        }
        PtxRig.launch(ptx, "calls", mem, 3, 128, 0, in, out, out2, n);
        for (int i = 0; i < n; i++) {
            assertThat(mem.region(out).getLong(8 * i)).as("out[%d]", i).isEqualTo(mix(i, 1_000_000_007L * (i - 150), 0.25f * i));
            assertThat(mem.region(out2).getInt(4 * i)).as("out2[%d]", i).isEqualTo((int) mix(i, 10, 1.5f) * 2);
        }
    }

    @Test
    void localDepotsOfCallerAndCalleeAreSeparate() {
        String ptx = resource("calls.ptx");
        assertThat(ptx).contains(".local .align 16 .b8 \t__local_depot2", "__local_depot4");
        int n = 200;
        for (int step : new int[] {1, 3, 7, 12}) {
            HeapGlobal mem = new HeapGlobal();
            long in = mem.alloc(4 * n);
            long out = mem.alloc(4 * n);
            for (int i = 0; i < n; i++) {
                mem.region(in).putInt(4 * i, i * 7 - 300);
            }
            PtxRig.launch(ptx, "depot", mem, 2, 128, 0, in, out, step, n);
            for (int i = 0; i < n; i++) {
                int base = i * 7 - 300;
                int[] t = new int[16];
                for (int k = 0; k < 16; k++) {
                    t[k] = base + k * k;
                }
                int s = 0;
                for (int k = 0; k < 16; k++) {
                    s += t[(k * step) & 15] * (k + 1);
                }
                int want = s + base * (((i * step) & 7) + 1);
                assertThat(mem.region(out).getInt(4 * i)).as("step %d, out[%d]", step, i).isEqualTo(want);
            }
        }
    }
}
