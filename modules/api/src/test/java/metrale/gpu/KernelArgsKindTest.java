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
}
