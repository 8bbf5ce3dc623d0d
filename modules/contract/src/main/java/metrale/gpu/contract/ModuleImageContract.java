// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.DevicePtr;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * Module images the driver refuses: a cubin cut short behind a valid ELF header is INVALID_IMAGE
 * (200), PTX using a register it never declared is INVALID_PTX (218); neither is sticky.
 */
public abstract class ModuleImageContract extends GpuContract {

    /** The classpath resource holding {@code contract.cu} compiled to an sm_90 cubin. */
    public static final String CUBIN_RESOURCE = "/metrale/gpu/contract/contract.sm_90.cubin";

    /** PTX whose only fault is a use of {@code %r7} where {@code %r<2>} declares {@code %r0} and {@code %r1}. */
    public static final String UNDECLARED_REGISTER_PTX = ".version 8.0\n.target sm_90\n.address_size 64\n"
            + ".visible .entry undeclared(\n\t.param .u32 undeclared_param_0\n)\n{\n\t.reg .b32 \t%r<2>;\n"
            + "\tld.param.u32 \t%r1, [undeclared_param_0];\n\tadd.s32 \t%r7, %r1, 1;\n\tret;\n}\n";

    /** {@link #UNDECLARED_REGISTER_PTX} with its register declared, cut off inside the entry's parameter list. */
    public static final String TRUNCATED_ENTRY_PTX = ".version 8.0\n.target sm_90\n.address_size 64\n"
            + ".visible .entry undeclared(\n\t.param .u32 undeclared_";

    /** {@link #UNDECLARED_REGISTER_PTX} with its register declared, and {@code ld.parm} for {@code ld.param}. */
    public static final String UNKNOWN_SUFFIX_PTX = UNDECLARED_REGISTER_PTX.replace("%r<2>", "%r<8>")
            .replace("ld.param.u32", "ld.parm.u32");

    /** Creates the contract; a backend's subclass is instantiated by JUnit. */
    protected ModuleImageContract() {
    }

    /** {@return the sm_90 cubin of {@code contract.cu}, a resource of this module} */
    public static byte[] contractCubin() {
        try (InputStream in = ModuleImageContract.class.getResourceAsStream(CUBIN_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(CUBIN_RESOURCE + " is missing from the metrale-gpu-contract jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@return whether the backend runs a kernel loaded from a cubin} The simulator runs a cubin's
     * kernels through their twins only: with twins off ({@code sim.twins=off}) it has no code to run.
     */
    protected boolean runsCubinKernels() {
        return true;
    }

    /** The whole cubin loads and its kernel runs. */
    @Test
    public void theWholeCubinLoadsAndRuns() {
        org.junit.jupiter.api.Assumptions.assumeTrue(runsCubinKernels(),
                "a cubin's kernels run through twins on this backend, and twins are off");
        gpu.loadModule(SECOND_MODULE, contractCubin());
        DevicePtr p = gpu.alloc(256);
        gpu.launch(gpu.kernel(SECOND_MODULE, "fill_f32"), LaunchConfig.of(1, 64), Stream.DEFAULT,
                args.clear().ptr(p).f32(1.5f).i32(64));
        assertThat(readFloats(p, 64)).containsOnly(1.5f);
        gpu.free(p);
    }

    /** A cubin cut short, its 64-byte ELF header intact, is INVALID_IMAGE at the load; not sticky. */
    @Test
    public void aTruncatedCubinIsInvalidImage() {
        byte[] cubin = contractCubin();
        // Cut inside the section data. (A cubin cut by its last byte loaded on the H200, driver 580:
        // the driver does not check every table; the simulator refuses that too.)
        for (int keep : new int[] {64, cubin.length / 2}) {
            byte[] cut = Arrays.copyOf(cubin, keep);
            assertThatThrownBy(() -> gpu.loadModule(SECOND_MODULE, cut)).as("a cubin cut to %d of %d bytes", keep, cubin.length)
                    .isInstanceOfSatisfying(GpuException.class, e -> assertThat(e.error()).isEqualTo(CudaError.INVALID_IMAGE));
        }
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }

    /** PTX that uses an undeclared register is INVALID_PTX at the load; not sticky. */
    @Test
    public void ptxUsingAnUndeclaredRegisterIsInvalidPtx() {
        assertCuda(CudaError.INVALID_PTX,
                () -> gpu.loadModule(SECOND_MODULE, UNDECLARED_REGISTER_PTX.getBytes(StandardCharsets.US_ASCII)));
        // The same text with the register declared loads.
        gpu.loadModule(SECOND_MODULE, UNDECLARED_REGISTER_PTX.replace("%r<2>", "%r<8>").getBytes(StandardCharsets.US_ASCII));
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }

    /** PTX that ends inside an {@code .entry}'s parameter list is INVALID_PTX at the load; not sticky. */
    @Test
    public void ptxCutOffInsideAnEntryIsInvalidPtx() {
        assertCuda(CudaError.INVALID_PTX,
                () -> gpu.loadModule(SECOND_MODULE, TRUNCATED_ENTRY_PTX.getBytes(StandardCharsets.US_ASCII)));
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }

    /** PTX with an instruction suffix that PTX does not have ({@code ld.parm.u32}) is INVALID_PTX at the load; not sticky. */
    @Test
    public void ptxWithAnUnknownInstructionSuffixIsInvalidPtx() {
        assertCuda(CudaError.INVALID_PTX,
                () -> gpu.loadModule(SECOND_MODULE, UNKNOWN_SUFFIX_PTX.getBytes(StandardCharsets.US_ASCII)));
        // The same text with ld.param loads.
        gpu.loadModule(SECOND_MODULE, UNKNOWN_SUFFIX_PTX.replace("ld.parm", "ld.param").getBytes(StandardCharsets.US_ASCII));
        assertThat(gpu.fault()).isEmpty();
        assertStillWorks();
    }
}
