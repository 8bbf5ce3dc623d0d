// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.spi.ModuleImages;
import metrale.gpu.sim.SimKernels;

/**
 * Classifies a module image as {@code cuModuleLoadData} would: PTX text (its {@code .entry} names
 * are kept, so a twin must match a real kernel), an ELF cubin, a fatbin, or a
 * {@link SimKernels#image} marker; anything else is {@code INVALID_IMAGE}, including text without a
 * {@code .version} header (as an H200 answers). PTX whose body is not PTX (an unknown instruction
 * or instruction suffix, an undeclared register, unbalanced braces, a file cut off inside an
 * {@code .entry}) is {@code INVALID_PTX} naming the line, as the JIT would refuse it ({@link PtxCheck}).
 *
 * @param kind    a label for messages
 * @param entries the PTX entry names, or {@code null} when the image does not list them
 * @param params  each PTX entry's parameters ({@code null} for an entry the parser cannot read), or
 *                {@code null} when the image does not list them
 * @param ptx     the module as the PTX engine runs it, or {@code null} when the image is not PTX or
 *                the engine could not read it ({@code ptxProblem} says why)
 * @param ptxProblem why the engine cannot read the PTX, or {@code null}
 */
public record ModuleImage(String kind, Set<String> entries, Map<String, List<PtxParams.Param>> params,
                          metrale.gpu.sim.internal.ptx.PtxModule ptx, String ptxProblem) {

    /** The first bytes of every image {@link SimKernels#image} makes. */
    public static final String IMAGE_MAGIC = "METRALE-SIM-IMAGE\n";

    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z_$%][\\w$%]*)");
    private static final String OP = "cuModuleLoadData";

    /**
     * Classifies {@code image} as {@code cuModuleLoadData} would.
     *
     * @param name  the module's load name, for messages
     * @param image the image bytes
     * @return what the image is
     * @throws GpuException {@code INVALID_IMAGE} or {@code INVALID_PTX} when the driver would refuse it
     */
    public static ModuleImage parse(String name, byte[] image) {
        if (image == null || image.length == 0 || (image.length == 1 && image[0] == 0)) {
            throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ": the image is empty");
        }
        if (ModuleImages.isElf(image)) {
            String problem = ModuleImages.elfProblem(image);
            if (problem != null) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length
                        + " bytes: a truncated or malformed cubin: " + problem);
            }
            return new ModuleImage("cubin", null, null, null, null);
        }
        if (ModuleImages.isFatbin(image)) {
            String problem = ModuleImages.fatbinProblem(image);
            if (problem != null) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length + " bytes: " + problem);
            }
            return new ModuleImage("fatbin", null, null, null, null);
        }
        int n = image.length;
        while (n > 0 && image[n - 1] == 0) {
            n--;
        }
        String text = new String(image, 0, n, StandardCharsets.ISO_8859_1);
        if (text.startsWith(IMAGE_MAGIC)) {
            String expected = "module=" + name + "\n";
            if (!text.substring(IMAGE_MAGIC.length()).equals(expected)) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name
                        + ": the image is SimKernels.image of another module ("
                        + text.substring(IMAGE_MAGIC.length()).trim() + "); load it under that name");
            }
            return new ModuleImage("simulator image", null, null, null, null);
        }
        for (int i = 0; i < n; i++) {
            int c = image[i] & 0xff;
            if (c < 9 || (c > 13 && c < 32) || c > 126) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length
                        + " bytes: not PTX text, an ELF cubin, a fatbin or SimKernels.image(\"" + name + "\")");
            }
        }
        if (!text.contains(".version")) {
            // An H200 answers INVALID_IMAGE here even when the text has a .entry.
            throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name
                    + ": text that is not PTX (no .version directive)");
        }
        String problem = PtxCheck.problem(text);
        if (problem != null) {
            throw new GpuException(CudaError.INVALID_PTX, OP, "module=" + name + ": the PTX JIT would refuse it: " + problem);
        }
        Set<String> entries = new LinkedHashSet<>();
        Matcher m = ENTRY.matcher(text);
        while (m.find()) {
            entries.add(m.group(1));
        }
        String plain = PtxCheck.stripComments(text);
        metrale.gpu.sim.internal.ptx.PtxModule ptx = null;
        String ptxProblem = null;
        try {
            ptx = metrale.gpu.sim.internal.ptx.PtxModule.parse(plain);
        } catch (RuntimeException e) {
            // The JIT's checks above passed, so a twin may still run it; the engine says why it cannot.
            ptxProblem = "the simulator's PTX engine could not read the module: " + e;
        }
        return new ModuleImage("PTX", Set.copyOf(entries), PtxParams.parse(plain), ptx, ptxProblem);
    }
}
