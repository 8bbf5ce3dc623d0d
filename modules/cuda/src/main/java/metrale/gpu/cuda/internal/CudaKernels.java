// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import metrale.gpu.DeviceInfo;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;

/**
 * One {@link CudaDevice}'s kernel signatures: the parameter sizes of each function it looked up,
 * recorded from its module, and the check of a launch's arguments against them. The caller has
 * made the context current.
 */
final class CudaKernels {

    private static final String ARCH_OPTION_PREFIX_1 = "--gpu-architecture";
    private static final String ARCH_OPTION_PREFIX_2 = "-arch";

    /** Each loaded PTX module's entry parameter counts, where the driver cannot count them itself. */
    private final ConcurrentHashMap<Long, Map<String, Integer>> ptxParamCounts = new ConcurrentHashMap<>();
    private final ParamSizes params = new ParamSizes();

    /** Records what {@code module}, just loaded from {@code image}, says about its entries' parameters. */
    void loaded(long module, byte[] image) {
        if (CudaLib.HAS_FUNC_GET_PARAM_INFO && !CudaLib.HAS_FUNC_GET_PARAM_COUNT) {
            ptxParamCounts.put(module, PtxEntries.paramCounts(image));
        }
    }

    /** Forgets {@code module}'s functions, just unloaded. */
    void unloaded(long module) {
        params.removeModule(module);
        ptxParamCounts.remove(module);
    }

    /** Records the parameter sizes of {@code f}, function {@code func} of {@code module}, where the driver reports them. */
    void lookedUp(long module, String func, long f) {
        if (CudaLib.HAS_FUNC_GET_PARAM_INFO) {
            try {
                Integer count = CudaLib.HAS_FUNC_GET_PARAM_COUNT
                        ? Integer.valueOf(CuModule.paramCount(f))
                        : ptxParamCounts.getOrDefault(module, Map.of()).get(func);
                params.put(f, module, count != null ? CuModule.paramSizes(f, count) : CuModule.paramSizesProbing(f));
            } catch (GpuException e) {
                // A kernel whose image carries no parameter info (old cubins) is launched unchecked.
            }
        }
    }

    /**
     * Checks {@code args} against {@code func}'s recorded signature; allocates nothing unless it fails.
     *
     * @throws GpuException {@code INVALID_VALUE} when the count or a size differs
     */
    void check(long func, KernelArgs args) {
        // Only functions this driver looked up are checked: asking the driver about any other
        // handle (an unloaded module's, say) could itself read freed memory.
        int[] sizes = params.get(func);
        if (sizes != null) {
            checkArgs(func, sizes, args);
        }
    }

    /** {@return how this driver counts a kernel's parameters: {@code cuFuncGetParamCount}, {@code ptx} (falling back to probing for binaries), or {@code none}} */
    static String paramCountSource() {
        return !CudaLib.HAS_FUNC_GET_PARAM_INFO ? "none" : CudaLib.HAS_FUNC_GET_PARAM_COUNT ? "cuFuncGetParamCount" : "ptx";
    }

    /** Compiles with NVRTC, adding {@code --gpu-architecture=compute_XY} of {@code info} where {@code options} name no architecture. */
    static byte[] compileToPtx(DeviceInfo info, String name, String source, String... options) {
        List<String> opts = new ArrayList<>(List.of(options));
        boolean hasArch = opts.stream().anyMatch(o -> o.startsWith(ARCH_OPTION_PREFIX_1) || o.startsWith(ARCH_OPTION_PREFIX_2));
        if (!hasArch) {
            opts.add(ARCH_OPTION_PREFIX_1 + "=compute_" + info.computeMajor() + info.computeMinor());
        }
        return NvrtcLib.compile(name, source, opts);
    }

    private static void checkArgs(long func, int[] sizes, KernelArgs args) {
        int n = args.count();
        if (n != sizes.length) {
            throw argsError(func, sizes, args, "the kernel takes " + sizes.length + " parameters, got " + n);
        }
        for (int i = 0; i < n; i++) {
            if (args.size(i) != sizes[i]) {
                throw argsError(func, sizes, args, "parameter " + i + " is " + sizes[i] + " bytes, got " + args.size(i));
            }
        }
    }

    private static GpuException argsError(long func, int[] sizes, KernelArgs args, String what) {
        List<Integer> got = new ArrayList<>();
        for (int i = 0; i < args.count(); i++) {
            got.add(args.size(i));
        }
        return CudaDevice.invalid("cuLaunchKernel", "f=" + CudaLib.hex(func) + ": " + what + " (parameter sizes "
                + Arrays.toString(sizes) + ", argument sizes " + got + ")");
    }
}
