// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.internal;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The parameter count of each {@code .entry} of a PTX module, read from its text, so the launch
 * check can ask {@code cuFuncGetParamInfo} for exactly the parameters there are (on a driver
 * without {@code cuFuncGetParamCount}) instead of probing past the last one.
 */
final class PtxEntries {

    /** {@code .entry NAME ( ... )}; a kernel without parameters may omit the list. */
    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z_$%][\\w$%]*)\\s*(\\(([^)]*)\\))?");
    private static final Pattern PARAM = Pattern.compile("\\.param\\b");
    private static final Pattern COMMENTS = Pattern.compile("//[^\\n]*|/\\*.*?\\*/", Pattern.DOTALL);

    private PtxEntries() {
    }

    /**
     * {@return each entry's parameter count, by name; empty for an image that is not PTX text (a
     * cubin or fatbin)}
     *
     * @param image the module image as given to {@code cuModuleLoadData}
     */
    static Map<String, Integer> paramCounts(byte[] image) {
        if (!isPtx(image)) {
            return Map.of();
        }
        int n = image.length;
        while (n > 0 && image[n - 1] == 0) {
            n--;
        }
        String text = COMMENTS.matcher(new String(image, 0, n, StandardCharsets.ISO_8859_1)).replaceAll(" ");
        Map<String, Integer> out = new HashMap<>();
        Matcher m = ENTRY.matcher(text);
        while (m.find()) {
            String params = m.group(3);
            int count = 0;
            if (params != null) {
                Matcher p = PARAM.matcher(params);
                while (p.find()) {
                    count++;
                }
            }
            out.put(m.group(1), count);
        }
        return Map.copyOf(out);
    }

    /** PTX is text; a cubin starts with ELF's magic and a fatbin with {@code 0xBA55ED50} or {@code 0x466243B1}. */
    private static boolean isPtx(byte[] image) {
        if (image.length >= 4) {
            int magic = (image[0] & 0xff) | (image[1] & 0xff) << 8 | (image[2] & 0xff) << 16 | (image[3] & 0xff) << 24;
            if (magic == 0x464c457f || magic == 0xba55ed50 || magic == 0x466243b1) {
                return false;
            }
        }
        for (int i = 0; i < Math.min(image.length, 4096); i++) {
            int b = image[i] & 0xff;
            if (b == 0 && i > 0) {
                break;
            }
            if (b < 0x09 || (b > 0x0d && b < 0x20)) {
                return false;
            }
        }
        return true;
    }
}
