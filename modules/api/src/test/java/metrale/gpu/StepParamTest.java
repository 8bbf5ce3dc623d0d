// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * A {@link StepParam} appended to {@link KernelArgs} is its value, of its kind, with a mark that a
 * captured step's recorder reads; a plain value appended later into the same slot drops the mark.
 */
class StepParamTest {

    @Test
    void eachKindAppendsItsValueAndMarksTheSlot() {
        StepParam<Integer> i = StepParam.i32("i", -5);
        StepParam<Long> l = StepParam.i64("l", 1L << 40);
        StepParam<Float> f = StepParam.f32("f", 0.5f);
        StepParam<Double> d = StepParam.f64("d", -2.25);
        StepParam<DevicePtr> p = StepParam.ptr("p", new DevicePtr(0x1000));
        StepParam<byte[]> b = StepParam.bytes("b", new byte[] {1, 2, 3});
        try (KernelArgs a = new KernelArgs(); KernelArgs plain = new KernelArgs()) {
            a.param(i).param(l).param(f).param(d).param(p).param(b).i32(7);
            assertThat(a.argKinds()).isEqualTo(plain.i32(0).i64(0).f32(0).f64(0).ptr(0L).bytes(new byte[1]).i32(0).argKinds());
            assertThat(a.getInt(0)).isEqualTo(-5);
            assertThat(a.getLong(1)).isEqualTo(1L << 40);
            assertThat(a.getFloat(2)).isEqualTo(0.5f);
            assertThat(a.getDouble(3)).isEqualTo(-2.25);
            assertThat(a.getLong(4)).isEqualTo(0x1000);
            assertThat(a.getBytes(5)).containsExactly(1, 2, 3);
            assertThat(a.paramAt(0)).containsSame(i);
            assertThat(a.paramAt(5)).containsSame(b);
            assertThat(a.paramAt(6)).as("a plain value").isEmpty();
            a.clear().i32(1).param(i);
            assertThat(a.paramAt(0)).as("the slot a parameter filled before clear").isEmpty();
            assertThat(a.paramAt(1)).containsSame(i);
            assertThatThrownBy(() -> a.paramAt(2)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(plain.clear().i32(1).paramAt(0)).as("a buffer no parameter touched").isEmpty();
        }
    }

    @Test
    void aParameterKnowsItsNameKindTypeSizeAndValue() {
        StepParam<byte[]> b = StepParam.bytes("cfg", new byte[] {4, 5});
        assertThat(b.name()).isEqualTo("cfg");
        assertThat(b.kind()).isEqualTo(KernelArgs.Kind.BYTES);
        assertThat(b.type()).isEqualTo(byte[].class);
        assertThat(b.size()).isEqualTo(2);
        b.get()[0] = 99;
        assertThat(b.get()).as("get copies").containsExactly(4, 5);
        assertThat(b.toString()).isEqualTo("cfg (bytes) = [4, 5]");
        StepParam<DevicePtr> p = StepParam.ptr("in", new DevicePtr(0xab));
        assertThat(p.get()).isEqualTo(new DevicePtr(0xab));
        assertThat(p.size()).isEqualTo(8);
        assertThat(p.toString()).isEqualTo("in (ptr) = 0xab");
        assertThat(StepParam.f32("dt", 0.25f).toString()).isEqualTo("dt (f32) = 0.25");
        assertThat(StepParam.i32("n", 3).size()).isEqualTo(4);
        assertThatThrownBy(() -> StepParam.bytes("empty", new byte[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one byte");
        assertThatThrownBy(() -> StepParam.ptr("null", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> StepParam.i32(null, 1)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void theInitialBytesAreCopied() {
        byte[] initial = {1, 2};
        StepParam<byte[]> b = StepParam.bytes("b", initial);
        initial[0] = 9;
        assertThat(b.get()).containsExactly(1, 2);
    }

    @Property
    void floatsAndDoublesKeepTheirBits(@ForAll float f, @ForAll double d, @ForAll int i, @ForAll long l) {
        assertThat(Float.floatToRawIntBits(StepParam.f32("f", f).get())).isEqualTo(Float.floatToRawIntBits(f));
        assertThat(Double.doubleToRawLongBits(StepParam.f64("d", d).get())).isEqualTo(Double.doubleToRawLongBits(d));
        assertThat(StepParam.i32("i", i).get()).isEqualTo(i);
        assertThat(StepParam.i64("l", l).get()).isEqualTo(l);
        try (KernelArgs a = new KernelArgs()) {
            a.param(StepParam.f32("f", f)).param(StepParam.f64("d", d)).param(StepParam.i32("i", i));
            assertThat(a.word(0)).isEqualTo(Integer.toUnsignedLong(Float.floatToRawIntBits(f)));
            assertThat(a.word(1)).isEqualTo(Double.doubleToRawLongBits(d));
            assertThat(a.word(2)).isEqualTo(Integer.toUnsignedLong(i));
        }
    }
}
