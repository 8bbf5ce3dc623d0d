// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Each slot remembers which method filled it, for a backend that checks argument types. */
class KernelArgsKindTest {

    @Test
    void everySlotKnowsItsKindAndClearForgetsThem() {
        try (KernelArgs a = new KernelArgs()) {
            a.i32(1).i64(2).f32(3f).f64(4.0).ptr(5L).ptr(new DevicePtr(6)).bytes(new byte[3]);
            assertThat(a.kind(0)).isEqualTo(KernelArgs.Kind.I32);
            assertThat(a.kind(1)).isEqualTo(KernelArgs.Kind.I64);
            assertThat(a.kind(2)).isEqualTo(KernelArgs.Kind.F32);
            assertThat(a.kind(3)).isEqualTo(KernelArgs.Kind.F64);
            assertThat(a.kind(4)).isEqualTo(KernelArgs.Kind.PTR);
            assertThat(a.kind(5)).isEqualTo(KernelArgs.Kind.PTR);
            assertThat(a.kind(6)).isEqualTo(KernelArgs.Kind.BYTES);
            a.clear().f32(1f);
            assertThat(a.kind(0)).isEqualTo(KernelArgs.Kind.F32);
            assertThatThrownBy(() -> a.kind(1)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void theTracesViewIsTheWordsAndKindCodesCopiedNothing() {
        try (KernelArgs a = new KernelArgs()) {
            a.i32(-1).i64(2).f32(3f).f64(4.0).ptr(5L).bytes(new byte[] {6, 7, 8});
            metrale.telemetry.TraceArgs view = a;
            assertThat(view.argc()).isEqualTo(6).isEqualTo(a.count());
            long[] words = new long[view.argc()];
            StringBuilder kinds = new StringBuilder();
            for (int i = 0; i < view.argc(); i++) {
                words[i] = view.argWord(i);
                kinds.append(view.argKind(i));
            }
            assertThat(words).containsExactly(a.words()).startsWith(0xffff_ffffL, 2L);
            assertThat(kinds.toString()).isEqualTo(a.argKinds()).isEqualTo("ilfdpb");
            assertThatThrownBy(() -> view.argKind(6)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> view.argWord(-1)).isInstanceOf(IndexOutOfBoundsException.class);
            a.clear();
            assertThat(view.argc()).isZero();
            a.close();
            assertThatThrownBy(() -> view.argKind(0)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> view.argWord(0)).isInstanceOf(IllegalStateException.class);
        }
    }
}
