// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TraceEntryTest {

    @Test
    void equalityHashAndStringUseArgContent() {
        TraceEntry a = TraceEntry.kernel(7, 1, 2, 3, 4, 5, 6, 8, new long[] {1, 2});
        TraceEntry b = TraceEntry.kernel(7, 1, 2, 3, 4, 5, 6, 8, new long[] {1, 2});
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a).isNotEqualTo(TraceEntry.kernel(7, 1, 2, 3, 4, 5, 6, 8, new long[] {1, 3}));
        assertThat(a.toString()).isEqualTo("TraceEntry[kind=KERNEL, func=7, gridX=1, gridY=2, gridZ=3,"
                + " blockX=4, blockY=5, blockZ=6, sharedMemBytes=8, args=[1, 2], argKinds=]");
    }

    @Test
    void argsAreCopiedInAndOut() {
        long[] args = {1, 2};
        TraceEntry e = TraceEntry.kernel(7, 1, 1, 1, 1, 1, 1, 0, args);
        args[0] = 99;
        assertThat(e.arg(0)).isEqualTo(1);
        e.args()[1] = 99;
        assertThat(e.args()).containsExactly(1, 2);
        assertThat(e.argc()).isEqualTo(2);
    }

    @Test
    void factories() {
        assertThat(TraceEntry.memset(0x10, 0x1ab, 64))
                .isEqualTo(new TraceEntry(OpKind.MEMSET, 0, 0, 0, 0, 0, 0, 0, 0, new long[] {0x10, 0xab, 64}));
        assertThat(TraceEntry.d2d(0x10, 0x20, 64))
                .isEqualTo(new TraceEntry(OpKind.D2D, 0, 0, 0, 0, 0, 0, 0, 0, new long[] {0x10, 0x20, 64}));
        assertThat(TraceEntry.kernel(1, 1, 1, 1, 1, 1, 1, 0, new long[0]).kind()).isEqualTo(OpKind.KERNEL);
    }

    @Test
    void labels() {
        assertThat(OpKind.KERNEL.label()).isEqualTo("kernel");
        assertThat(OpKind.MEMSET.label()).isEqualTo("memset");
        assertThat(OpKind.D2D.label()).isEqualTo("d2d");
    }

    @Test
    void nullsAreRejected() {
        assertThatThrownBy(() -> new TraceEntry(null, 0, 0, 0, 0, 0, 0, 0, 0, new long[0]))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> TraceEntry.kernel(0, 0, 0, 0, 0, 0, 0, 0, null))
                .isInstanceOf(NullPointerException.class);
    }
}
