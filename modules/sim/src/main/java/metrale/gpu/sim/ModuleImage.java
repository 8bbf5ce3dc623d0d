package metrale.gpu.sim;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;

/**
 * Classifies a module image as {@code cuModuleLoadData} would: PTX text (its {@code .entry} names
 * are kept, so a twin must match a real kernel), an ELF cubin, a fatbin, or a
 * {@link SimKernels#image} marker; anything else is {@code INVALID_IMAGE}, and text that looks like
 * PTX but has no {@code .version} is {@code INVALID_PTX}.
 *
 * @param kind    a label for messages
 * @param entries the PTX entry names, or {@code null} when the image does not list them
 */
record ModuleImage(String kind, Set<String> entries) {

    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z_$%][\\w$%]*)");
    private static final String OP = "cuModuleLoadData";

    static ModuleImage parse(String name, byte[] image) {
        if (image == null || image.length == 0 || (image.length == 1 && image[0] == 0)) {
            throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ": the image is empty");
        }
        if (image.length >= 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F') {
            return new ModuleImage("cubin", null);
        }
        if (image.length >= 4 && (image[0] & 0xff) == 0x50 && (image[1] & 0xff) == 0xED
                && (image[2] & 0xff) == 0x55 && (image[3] & 0xff) == 0xBA) {
            return new ModuleImage("fatbin", null);
        }
        int n = image.length;
        while (n > 0 && image[n - 1] == 0) {
            n--;
        }
        String text = new String(image, 0, n, StandardCharsets.ISO_8859_1);
        if (text.startsWith(SimKernels.IMAGE_MAGIC)) {
            String expected = "module=" + name + "\n";
            if (!text.substring(SimKernels.IMAGE_MAGIC.length()).equals(expected)) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name
                        + ": the image is SimKernels.image of another module ("
                        + text.substring(SimKernels.IMAGE_MAGIC.length()).trim() + "); load it under that name");
            }
            return new ModuleImage("simulator image", null);
        }
        for (int i = 0; i < n; i++) {
            int c = image[i] & 0xff;
            if (c < 9 || (c > 13 && c < 32) || c > 126) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length
                        + " bytes: not PTX text, an ELF cubin, a fatbin or SimKernels.image(\"" + name + "\")");
            }
        }
        if (!text.contains(".version")) {
            if (text.contains(".entry")) {
                throw new GpuException(CudaError.INVALID_PTX, OP, "module=" + name
                        + ": PTX text without a .version directive");
            }
            throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name
                    + ": text that is not PTX (no .version directive)");
        }
        Set<String> entries = new LinkedHashSet<>();
        Matcher m = ENTRY.matcher(text);
        while (m.find()) {
            entries.add(m.group(1));
        }
        return new ModuleImage("PTX", Set.copyOf(entries));
    }
}
