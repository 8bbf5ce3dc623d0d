// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import metrale.gpu.KernelArgs;
import metrale.telemetry.TraceEntry;
import org.junit.jupiter.api.Test;

/** A step recorder keeps each op's trace entry and a kernel's arguments as given, to refill them later. */
class StepRecorderTest {

    @Test
    void everyKindOfArgumentIsKeptAndRefilled() {
        try (KernelArgs a = new KernelArgs(); KernelArgs into = new KernelArgs()) {
            a.i32(-7).f32(1.5f).f64(-2.25).i64(1L << 40).ptr(0x7000_0000_1000L).bytes(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
            StepRecorder.Args kept = StepRecorder.Args.of(a);
            assertThat(kept.kinds()).containsExactly(KernelArgs.Kind.I32, KernelArgs.Kind.F32, KernelArgs.Kind.F64,
                    KernelArgs.Kind.I64, KernelArgs.Kind.PTR, KernelArgs.Kind.BYTES);
            assertThat(kept.wide()[5]).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
            assertThat(kept.wide()[0]).isNull();
            a.clear().i32(99);
            into.i32(1).i32(2).i32(3).i32(4).i32(5).i32(6).i32(7);
            assertThat(kept.fill(into)).isSameAs(into);
            assertThat(into.count()).isEqualTo(6);
            assertThat(into.getInt(0)).isEqualTo(-7);
            assertThat(into.getFloat(1)).isEqualTo(1.5f);
            assertThat(into.getDouble(2)).isEqualTo(-2.25);
            assertThat(into.getLong(3)).isEqualTo(1L << 40);
            assertThat(into.kind(4)).isEqualTo(KernelArgs.Kind.PTR);
            assertThat(into.getLong(4)).isEqualTo(0x7000_0000_1000L);
            assertThat(into.getBytes(5)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
        }
    }

    @Test
    void opsAreKeptInOrderWithArgumentsOnlyForKernels() {
        StepRecorder r = new StepRecorder();
        TraceEntry memset = TraceEntry.memset(0x1000, 7, 64);
        try (KernelArgs a = new KernelArgs()) {
            a.i32(3);
            TraceEntry k = TraceEntry.kernel(5, 1, 1, 1, 32, 1, 1, 0, a.words(), a.argKinds());
            r.add(memset, null);
            r.add(k, a);
            assertThat(r.entries).containsExactly(memset, k);
            assertThat(r.args.get(0)).isNull();
            assertThat(r.args.get(1).values()).containsExactly(3L);
        }
    }
}
