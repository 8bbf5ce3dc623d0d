// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.internal.ParamDoor;

/**
 * A kernel argument of a {@link CapturedStep}'s region that the application changes between runs
 * without the region running again: a time step, a scale, a pointer swapped on the host.
 *
 * <p>The region appends it with {@link KernelArgs#param(StepParam)} where it would append a
 * plain value; the launch gets the parameter's current value, and the step's trace records which
 * argument of which launch came from it. {@link CapturedStep#set} then changes the value, and the
 * next run sets exactly the graph's kernel nodes that took it, one node-parameter set per node:
 * <pre>{@code
 * StepParam<Float> dt = StepParam.f32("dt", 0.01f);
 * try (CapturedStep step = gpu.capturedStep("advance", (g, s) ->
 *         g.launch(advance, cfg, s, args.clear().ptr(state).param(dt).i32(n)))) {
 *     for (int i = 0; i < steps; i++) {
 *         step.set(dt, nextDt(i));   // at the next run: one cuGraphExecKernelNodeSetParams
 *         step.run(stream);
 *     }
 * }
 * }</pre>
 *
 * <p>A parameter belongs to the first captured step whose region passes it to a launch (or that
 * sets it before its first run), until that step closes; another step's region passing it, or
 * another step setting it, is refused. Its value is read with {@link #get()} and changed only
 * through its step. Thread-safe: the value is published to every thread once {@code set} returns.
 *
 * @param <T> the value's type: {@link Integer}, {@link Long}, {@link Float}, {@link Double},
 *            {@link DevicePtr} or {@code byte[]}
 */
public final class StepParam<T> {

    static {
        ParamDoor.install(new ParamDoor.Door() {
            @Override
            public long bits(StepParam<?> p) {
                return p.bits;
            }

            @Override
            public byte[] wide(StepParam<?> p) {
                return p.wide;
            }

            @Override
            public void store(StepParam<?> p, Object value) {
                p.store(value);
            }

            @Override
            public Object claim(StepParam<?> p, Object owner) {
                Object had = p.owner.compareAndExchange(null, owner);
                return had == null ? owner : had;
            }

            @Override
            public Object owner(StepParam<?> p) {
                return p.owner.get();
            }

            @Override
            public void release(StepParam<?> p, Object owner) {
                p.owner.compareAndSet(owner, null);
            }
        });
    }

    private final String name;
    private final KernelArgs.Kind kind;
    private final Class<T> type;
    private final int size;
    /** See {@link ParamDoor.Door#bits}. */
    private volatile long bits;
    /** A bytes parameter's value; replaced, never written. */
    private volatile byte[] wide;
    /** The captured step that owns this parameter, or {@code null}. */
    private final AtomicReference<Object> owner = new AtomicReference<>();

    private StepParam(String name, KernelArgs.Kind kind, Class<T> type, int size, Object initial) {
        this.name = Objects.requireNonNull(name, "name");
        this.kind = kind;
        this.type = type;
        this.size = size;
        store(initial);
    }

    /**
     * {@return a 32-bit integer parameter, as {@link KernelArgs#i32}}
     *
     * @param name    a name for messages
     * @param initial the value until a step sets another
     */
    public static StepParam<Integer> i32(String name, int initial) {
        return new StepParam<>(name, KernelArgs.Kind.I32, Integer.class, 4, initial);
    }

    /**
     * {@return a 64-bit integer parameter, as {@link KernelArgs#i64}}
     *
     * @param name    a name for messages
     * @param initial the value until a step sets another
     */
    public static StepParam<Long> i64(String name, long initial) {
        return new StepParam<>(name, KernelArgs.Kind.I64, Long.class, 8, initial);
    }

    /**
     * {@return a 32-bit float parameter, as {@link KernelArgs#f32}}
     *
     * @param name    a name for messages
     * @param initial the value until a step sets another
     */
    public static StepParam<Float> f32(String name, float initial) {
        return new StepParam<>(name, KernelArgs.Kind.F32, Float.class, 4, initial);
    }

    /**
     * {@return a 64-bit float parameter, as {@link KernelArgs#f64}}
     *
     * @param name    a name for messages
     * @param initial the value until a step sets another
     */
    public static StepParam<Double> f64(String name, double initial) {
        return new StepParam<>(name, KernelArgs.Kind.F64, Double.class, 8, initial);
    }

    /**
     * {@return a device pointer parameter, as {@link KernelArgs#ptr(DevicePtr)}}
     *
     * @param name    a name for messages
     * @param initial the pointer until a step sets another; not {@code null}
     */
    public static StepParam<DevicePtr> ptr(String name, DevicePtr initial) {
        return new StepParam<>(name, KernelArgs.Kind.PTR, DevicePtr.class, 8, initial);
    }

    /**
     * {@return a by-value parameter of fixed size given as raw bytes (a struct), as
     * {@link KernelArgs#bytes(byte[])}; every value set later has this many bytes}
     *
     * @param name    a name for messages
     * @param initial the bytes until a step sets others, copied; not empty
     */
    public static StepParam<byte[]> bytes(String name, byte[] initial) {
        if (initial.length == 0) {
            throw new IllegalArgumentException("StepParam.bytes(" + name + "): a parameter needs at least one byte");
        }
        return new StepParam<>(name, KernelArgs.Kind.BYTES, byte[].class, initial.length, initial);
    }

    /** {@return the name it was made with} */
    public String name() {
        return name;
    }

    /** {@return how {@link KernelArgs#param} appends it} */
    public KernelArgs.Kind kind() {
        return kind;
    }

    /** {@return the type of its values} */
    public Class<T> type() {
        return type;
    }

    /** {@return its size as a kernel argument, in bytes} */
    public int size() {
        return size;
    }

    /** {@return the current value (a copy, for a bytes parameter)} */
    public T get() {
        long b = bits;
        return type.cast(switch (kind) {
            case I32 -> (int) b;
            case I64 -> b;
            case F32 -> Float.intBitsToFloat((int) b);
            case F64 -> Double.longBitsToDouble(b);
            case PTR -> new DevicePtr(b);
            case BYTES -> wide.clone();
        });
    }

    /** The current bits, for {@link KernelArgs#param}. */
    long bitsNow() {
        return bits;
    }

    /** The current bytes of a bytes parameter, not copied, for {@link KernelArgs#param}. */
    byte[] wideNow() {
        return wide;
    }

    private void store(Object value) {
        Objects.requireNonNull(value, () -> "parameter '" + name + "': value");
        if (!type.isInstance(value)) {
            throw new IllegalArgumentException("parameter '" + name + "' (" + kind.name().toLowerCase(Locale.ROOT)
                    + ") takes a value of type " + type.getSimpleName() + ", not " + value.getClass().getName());
        }
        switch (value) {
            case Integer i -> bits = i;
            case Long l -> bits = l;
            case Float f -> bits = Float.floatToRawIntBits(f);
            case Double d -> bits = Double.doubleToRawLongBits(d);
            case DevicePtr p -> bits = p.address();
            case byte[] b -> {
                if (b.length != size) {
                    throw new IllegalArgumentException("parameter '" + name + "' holds " + size + " bytes; the value has "
                            + b.length);
                }
                wide = b.clone();
            }
            default -> throw new AssertionError(value.getClass());
        }
    }

    /** {@return the name, kind and current value, as {@code "dt (f32) = 0.01"}} */
    @Override
    public String toString() {
        Object v = kind == KernelArgs.Kind.BYTES ? Arrays.toString(wide) : get();
        return name + " (" + kind.name().toLowerCase(Locale.ROOT) + ") = " + v;
    }
}
