// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import metrale.gpu.Gpu;

/**
 * One step of an op sequence over an application's own kernels and buffers, for
 * {@link GpuArbitraries#opSequences}: it applies itself to a runtime and the state the sequence
 * threads through (the application's buffers, streams, a host-side model of the expected result).
 * Its {@code toString()} is what jqwik prints for a falsified sequence, so name it.
 *
 * <pre>{@code
 * GpuOp<Model> scale = GpuOp.of("scale(x, 2.0)", (gpu, m) -> {
 *     MyKernels.scale(gpu, m.x, 2f);
 *     m.expectScaled(2f);
 * });
 * }</pre>
 *
 * @param <S> the state the sequence threads through
 */
public interface GpuOp<S> {

    /**
     * Applies the op.
     *
     * @param gpu   the runtime
     * @param state the sequence's state
     */
    void apply(Gpu gpu, S state);

    /**
     * {@return an op named {@code name} that runs {@code body}}
     *
     * @param name the name jqwik reports, with the op's arguments, e.g. {@code scale(buf 1, 2.0)}
     * @param body what it does
     * @param <S>  the state
     */
    static <S> GpuOp<S> of(String name, BiConsumer<Gpu, S> body) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(body, "body");
        return new GpuOp<>() {
            @Override
            public void apply(Gpu gpu, S state) {
                body.accept(gpu, state);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /**
     * Applies {@code ops} in order. A failure is rethrown as an {@link AssertionError} naming the
     * step and the ops up to it, with the failure as its cause.
     *
     * @param gpu   the runtime
     * @param state the state
     * @param ops   the sequence
     * @param <S>   the state
     */
    static <S> void runAll(Gpu gpu, S state, List<? extends GpuOp<S>> ops) {
        for (int i = 0; i < ops.size(); i++) {
            try {
                ops.get(i).apply(gpu, state);
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("op " + i + " (" + ops.get(i) + ") of " + ops.subList(0, i + 1) + " failed: " + e, e);
            }
        }
    }
}
