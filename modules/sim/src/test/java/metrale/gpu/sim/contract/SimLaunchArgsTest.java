package metrale.gpu.sim.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.Consumer;
import metrale.gpu.CaptureStatus;
import metrale.gpu.CudaError;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator checks a launch's arguments against the PTX {@code .entry} parameter list: count,
 * size and (what CUDA cannot see) type, as INVALID_VALUE at the launch, not sticky.
 */
class SimLaunchArgsTest {

    private Gpu gpu;
    private KernelArgs args;
    private DevicePtr p;

    @BeforeEach
    void open() {
        gpu = SimContractSupport.builder().open();
        SimContractSupport.prepareKernels(gpu);
        args = new KernelArgs();
        p = gpu.alloc(256);
    }

    @AfterEach
    void close() {
        args.close();
        gpu.close();
    }

    static java.util.stream.Stream<Arguments> mismatches() {
        // fill_f32(.u64 p, .f32 v, .u32 n); axpy_f32(.f32 a, .u64 x, .u64 y, .u32 n)
        return java.util.stream.Stream.of(
                Arguments.of("fill_f32", "too few", (Consumer<KernelArgs>) a -> a.ptr(0x10).f32(1f),
                        "takes 3 parameters (.u64, .f32, .u32) but the launch passed 2 arguments (ptr (8 bytes), f32 (4 bytes))"),
                Arguments.of("fill_f32", "too many", (Consumer<KernelArgs>) a -> a.ptr(0x10).f32(1f).i32(1).i32(2),
                        "takes 3 parameters"),
                Arguments.of("fill_f32", "4 bytes for a pointer", (Consumer<KernelArgs>) a -> a.i32(0).f32(1f).i32(1),
                        "argument 0: the PTX parameter fill_f32_param_0 is .u64 (8 bytes) but KernelArgs slot 0 is i32 (4 bytes)"),
                Arguments.of("fill_f32", "an 8-byte int for an int", (Consumer<KernelArgs>) a -> a.ptr(0x10).f32(1f).i64(1),
                        "argument 2: the PTX parameter fill_f32_param_2 is .u32 (4 bytes) but KernelArgs slot 2 is i64 (8 bytes)"),
                Arguments.of("fill_f32", "a double for a float", (Consumer<KernelArgs>) a -> a.ptr(0x10).f64(2.0).i32(1),
                        "argument 1: the PTX parameter fill_f32_param_1 is .f32 (4 bytes) but KernelArgs slot 1 is f64 (8 bytes)"),
                Arguments.of("fill_f32", "an int for a float", (Consumer<KernelArgs>) a -> a.ptr(0x10).i32(2).i32(1),
                        "argument 1: the PTX parameter fill_f32_param_1 is .f32 (4 bytes) but KernelArgs slot 1 is i32 (4 bytes), "
                                + "which is the wrong type: a .f32 parameter takes KernelArgs.f32"),
                Arguments.of("fill_f32", "a float for an int", (Consumer<KernelArgs>) a -> a.ptr(0x10).f32(1f).f32(1f),
                        "argument 2: the PTX parameter fill_f32_param_2 is .u32 (4 bytes) but KernelArgs slot 2 is f32 (4 bytes), "
                                + "which is the wrong type: a .u32 parameter takes KernelArgs.i32"),
                Arguments.of("axpy_f32", "a double for a pointer", (Consumer<KernelArgs>) a -> a.f32(1f).f64(1.0).ptr(0x10).i32(1),
                        "argument 1: the PTX parameter axpy_f32_param_1 is .u64 (8 bytes) but KernelArgs slot 1 is f64 (8 bytes)"),
                Arguments.of("noop", "an argument for none", (Consumer<KernelArgs>) a -> a.i32(1),
                        "takes 0 parameters () but the launch passed 1 argument (i32 (4 bytes))"));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("mismatches")
    void aMismatchIsInvalidValueAtTheLaunchNamingIndexTypeAndSlot(String func, String what, Consumer<KernelArgs> fill,
                                                                  String message) {
        KernelHandle k = gpu.kernel("contract", func);
        fill.accept(args.clear());
        assertThatThrownBy(() -> gpu.launch(k, LaunchConfig.of(1, 32), Stream.DEFAULT, args))
                .isInstanceOfSatisfying(GpuException.class, e -> {
                    assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE);
                    assertThat(e.getMessage()).contains("contract::" + func, message);
                });
        // Not sticky, nothing was enqueued, and the runtime works on.
        gpu.synchronize();
        assertThat(gpu.fault()).isEmpty();
        gpu.launch(gpu.kernel("contract", "fill_f32"), LaunchConfig.of(1, 64), Stream.DEFAULT, args.clear().ptr(p).f32(4f).i32(64));
        float[] out = new float[64];
        gpu.copyD2H(p, out);
        assertThat(out).containsOnly(4f);
    }

    @Test
    void aMismatchDuringCaptureInvalidatesItAndACorrectGraphReplaysItsValues() {
        Stream s = gpu.createStream();
        KernelHandle fill = gpu.kernel("contract", "fill_f32");
        gpu.beginCapture(s);
        assertThatThrownBy(() -> gpu.launch(fill, LaunchConfig.of(1, 64), s, args.clear().ptr(p).i32(1).i32(64)))
                .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_VALUE));
        assertThat(gpu.captureStatus(s)).isEqualTo(CaptureStatus.INVALIDATED);
        assertThatThrownBy(() -> gpu.endCapture(s)).isInstanceOfSatisfying(GpuException.class,
                e -> assertThat(e.error()).isEqualTo(CudaError.STREAM_CAPTURE_INVALIDATED));
        gpu.beginCapture(s);
        gpu.launch(fill, LaunchConfig.of(1, 64), s, args.clear().ptr(p).f32(6f).i32(64));
        var graph = gpu.endCapture(s);
        gpu.launchGraph(graph, s);
        gpu.synchronize(s);
        float[] out = new float[64];
        gpu.copyD2H(p, out);
        assertThat(out).containsOnly(6f);
        gpu.destroyGraph(graph);
        gpu.destroyStream(s);
    }
}
