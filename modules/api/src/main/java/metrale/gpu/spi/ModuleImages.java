// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.spi;

/**
 * Structural checks of module images that can be made before a driver sees them. The CUDA driver
 * does not check them all itself: on an H200 (driver 580) {@code cuModuleLoadData} of a cubin cut
 * in half read past the buffer and crashed the JVM (SIGSEGV in {@code libcuda}), so the runtime
 * refuses such an image with {@code INVALID_IMAGE} first, and the simulator applies the same rules.
 *
 * <p>What is checked: an ELF image is a 64-bit little-endian ELF of {@code EM_CUDA} whose program
 * and section header tables, every section's and segment's file extent and the section-name index
 * lie inside the image; a fatbin's header and payload size fit in the image. Not checked: the
 * contents of sections (SASS, relocations, symbols), the images embedded in a fatbin, and whether
 * the code suits the device.
 */
public final class ModuleImages {

    /** {@code e_machine} of a CUDA cubin. */
    public static final int EM_CUDA = 190;
    /** The fatbin header's magic number. */
    public static final long FATBIN_MAGIC = 0xBA55ED50L;

    private static final int ELF64_HEADER = 64;

    private ModuleImages() {
    }

    /**
     * {@return whether {@code image} starts with the ELF magic}
     *
     * @param image the bytes
     */
    public static boolean isElf(byte[] image) {
        return image.length >= 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F';
    }

    /**
     * {@return whether {@code image} starts with the fatbin magic}
     *
     * @param image the bytes
     */
    public static boolean isFatbin(byte[] image) {
        return image.length >= 4 && u32(image, 0) == FATBIN_MAGIC;
    }

    /**
     * {@return why an ELF image is not a whole CUDA cubin, or {@code null} when its tables fit}
     *
     * @param b an image for which {@link #isElf} holds
     */
    public static String elfProblem(byte[] b) {
        if (b.length < ELF64_HEADER || b[4] != 2 || b[5] != 1 || u16(b, 18) != EM_CUDA) {
            return "an ELF image but not a CUDA cubin (needs a 64-byte ELF64 little-endian header with e_machine "
                    + EM_CUDA + ")";
        }
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

    /**
     * {@return why a fatbin's header does not fit, or {@code null}} Header: magic (4), version (2),
     * header size (2), payload size (8); the payload follows it.
     *
     * @param image an image for which {@link #isFatbin} holds
     */
    public static String fatbinProblem(byte[] image) {
        long headerSize = image.length >= 8 ? u16(image, 6) : 0;
        long payload = image.length >= 16 ? u32(image, 8) | (u32(image, 12) << 32) : -1;
        if (image.length < 16 || headerSize < 16 || payload < 0 || headerSize + payload > image.length) {
            return "a truncated or malformed fatbin (header " + headerSize + " + payload " + payload + " bytes, image "
                    + image.length + ")";
        }
        return null;
    }

    private static boolean within(long off, long size, long n) {
        return off >= 0 && size >= 0 && off <= n && size <= n - off;
    }

    private static int u16(byte[] b, int at) {
        return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8;
    }

    private static long u32(byte[] b, int at) {
        return (b[at] & 0xffL) | (b[at + 1] & 0xffL) << 8 | (b[at + 2] & 0xffL) << 16 | (b[at + 3] & 0xffL) << 24;
    }

    private static long u64(byte[] b, int at) {
        return u32(b, at) | u32(b, at + 4) << 32;
    }
}
