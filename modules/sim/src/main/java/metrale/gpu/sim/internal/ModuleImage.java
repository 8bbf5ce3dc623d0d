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
import metrale.gpu.sim.SimKernels;

/**
 * Classifies a module image as {@code cuModuleLoadData} would: PTX text (its {@code .entry} names
 * are kept, so a twin must match a real kernel), an ELF cubin, a fatbin, or a
 * {@link SimKernels#image} marker; anything else is {@code INVALID_IMAGE}, including text without a
 * {@code .version} header (as an H200 answers). PTX whose body is not PTX (an unknown instruction,
 * unbalanced braces) is {@code INVALID_PTX}, as the JIT would refuse it.
 *
 * @param kind    a label for messages
 * @param entries the PTX entry names, or {@code null} when the image does not list them
 * @param params  each PTX entry's parameters ({@code null} for an entry the parser cannot read), or
 *                {@code null} when the image does not list them
 */
public record ModuleImage(String kind, Set<String> entries, Map<String, List<PtxParams.Param>> params) {

    /** The first bytes of every image {@link SimKernels#image} makes. */
    public static final String IMAGE_MAGIC = "METRALE-SIM-IMAGE\n";

    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z_$%][\\w$%]*)");
    private static final String OP = "cuModuleLoadData";
    private static final int ELF64_HEADER = 64;
    private static final int EM_CUDA = 190;
    private static final long FATBIN_MAGIC = 0xBA55ED50L;

    private static int u16(byte[] b, int at) {
        return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8;
    }

    private static long u32(byte[] b, int at) {
        return (b[at] & 0xffL) | (b[at + 1] & 0xffL) << 8 | (b[at + 2] & 0xffL) << 16 | (b[at + 3] & 0xffL) << 24;
    }

    private static long u64(byte[] b, int at) {
        return u32(b, at) | u32(b, at + 4) << 32;
    }

    /**
     * {@return why an ELF64 image's tables do not fit in it, or {@code null}} Checks the header size,
     * the program and section header tables, each section's and segment's file extent, and the
     * section-name table index: what a truncated or cut cubin breaks. Not checked: the contents of
     * the sections (SASS, relocations, symbols) and whether the code suits the device.
     */
    private static String elfProblem(byte[] b) {
        long n = b.length;
        int ehsize = u16(b, 0x34);
        if (ehsize != ELF64_HEADER) {
            return "e_ehsize=" + ehsize + ", not " + ELF64_HEADER;
        }
        long phoff = u64(b, 0x20);
        long shoff = u64(b, 0x28);
        int phentsize = u16(b, 0x36);
        int phnum = u16(b, 0x38);
        int shentsize = u16(b, 0x3A);
        int shnum = u16(b, 0x3C);
        int shstrndx = u16(b, 0x3E);
        if (phnum > 0 && (phentsize != 56 || !within(phoff, (long) phnum * phentsize, n))) {
            return "the program header table (" + phnum + " entries of " + phentsize + " bytes at " + phoff
                    + ") does not fit in the image";
        }
        if (shnum > 0 && (shentsize != 64 || !within(shoff, (long) shnum * shentsize, n))) {
            return "the section header table (" + shnum + " entries of " + shentsize + " bytes at " + shoff
                    + ") does not fit in the image";
        }
        if (shnum > 0 && shstrndx >= shnum) {
            return "e_shstrndx=" + shstrndx + " is not a section (there are " + shnum + ")";
        }
        for (int i = 0; i < shnum; i++) {
            int at = (int) (shoff + (long) i * shentsize);
            long type = u32(b, at + 4);
            long off = u64(b, at + 0x18);
            long size = u64(b, at + 0x20);
            // SHT_NULL (0) and SHT_NOBITS (8) occupy no file space.
            if (type != 8 && type != 0 && !within(off, size, n)) {
                return "section " + i + " (" + size + " bytes at " + off + ") runs past the end";
            }
        }
        for (int i = 0; i < phnum; i++) {
            int at = (int) (phoff + (long) i * phentsize);
            long off = u64(b, at + 0x08);
            long filesz = u64(b, at + 0x20);
            if (!within(off, filesz, n)) {
                return "program segment " + i + " (" + filesz + " bytes at " + off + ") runs past the end";
            }
        }
        return null;
    }

    private static boolean within(long off, long size, long n) {
        return off >= 0 && size >= 0 && off <= n && size <= n - off;
    }

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
        if (image.length >= 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F') {
            // A cubin is a 64-bit little-endian ELF for EM_CUDA (190): at least its 64-byte header.
            if (image.length < ELF64_HEADER || image[4] != 2 || image[5] != 1 || u16(image, 18) != EM_CUDA) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length
                        + " bytes: an ELF image but not a CUDA cubin (needs a 64-byte ELF64 little-endian header with e_machine "
                        + EM_CUDA + ")");
            }
            String problem = elfProblem(image);
            if (problem != null) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length
                        + " bytes: a truncated or malformed cubin: " + problem);
            }
            return new ModuleImage("cubin", null, null);
        }
        if (image.length >= 4 && u32(image, 0) == FATBIN_MAGIC) {
            // Header: magic (4), version (2), header size (2), payload size (8); the payload follows it.
            long headerSize = image.length >= 8 ? u16(image, 6) : 0;
            long payload = image.length >= 16 ? u32(image, 8) | (u32(image, 12) << 32) : -1;
            if (image.length < 16 || headerSize < 16 || payload < 0 || headerSize + payload > image.length) {
                throw new GpuException(CudaError.INVALID_IMAGE, OP, "module=" + name + ", " + image.length
                        + " bytes: a truncated or malformed fatbin");
            }
            return new ModuleImage("fatbin", null, null);
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
            return new ModuleImage("simulator image", null, null);
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
        return new ModuleImage("PTX", Set.copyOf(entries), PtxParams.parse(PtxCheck.stripComments(text)));
    }
}
