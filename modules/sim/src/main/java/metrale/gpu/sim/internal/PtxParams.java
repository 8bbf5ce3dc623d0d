package metrale.gpu.sim.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.KernelArgs;

/**
 * The parameter lists of a PTX module's {@code .entry} functions, and the check of a launch's
 * {@link KernelArgs} against them. CUDA checks only count and sizes (the CUDA backend does, with
 * {@code cuFuncGetParamInfo}); the PTX also has the type, so a {@code .f32} parameter given an
 * {@code i32} slot is refused here too, though on a GPU it would run with a wrong value.
 */
final class PtxParams {

    /** One parameter: its PTX type class ({@code u s b f}), element bits, array length and name. */
    record Param(char cls, int bits, int count, String name) {

        /** {@return the size in bytes} */
        int size() {
            return bits / 8 * count;
        }

        /** {@return the type as the PTX spells it, with the array length if any} */
        String type() {
            return "." + cls + bits + (count > 1 ? "[" + count + "]" : "");
        }
    }

    private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+([A-Za-z_$%][\\w$%]*)\\s*\\(([^)]*)\\)");
    private static final Pattern TYPE = Pattern.compile("\\.([usbf])(8|16|32|64)\\b");
    private static final Pattern NAME = Pattern.compile("([A-Za-z_$%][\\w$%]*)\\s*(?:\\[\\s*(\\d+)\\s*\\])?\\s*$");

    private PtxParams() {
    }

    /**
     * {@return each entry's parameters, in declaration order} An entry whose parameter list this
     * parser cannot read maps to {@code null}, and its launches are not checked.
     *
     * @param ptx PTX text without comments
     */
    static Map<String, List<Param>> parse(String ptx) {
        Map<String, List<Param>> out = new LinkedHashMap<>();
        Matcher m = ENTRY.matcher(ptx);
        while (m.find()) {
            out.put(m.group(1), params(m.group(2)));
        }
        return out;
    }

    private static List<Param> params(String list) {
        List<Param> ps = new ArrayList<>();
        if (list.isBlank()) {
            return ps;
        }
        for (String decl : list.split(",")) {
            Matcher t = TYPE.matcher(decl);
            Matcher n = NAME.matcher(decl.strip());
            if (!decl.contains(".param") || !t.find() || !n.find()) {
                return null;
            }
            int count = n.group(2) == null ? 1 : Integer.parseInt(n.group(2));
            ps.add(new Param(t.group(1).charAt(0), Integer.parseInt(t.group(2)), count, n.group(1)));
        }
        return ps;
    }

    /**
     * {@return why {@code args} do not fit {@code params}, naming the argument index, the PTX type
     * and the KernelArgs slot; or {@code null} when they fit}
     *
     * @param kernel the kernel's name, for the message
     */
    static String mismatch(String kernel, List<Param> params, KernelArgs args) {
        int n = args.count();
        if (n != params.size()) {
            return kernel + " takes " + params.size() + " parameter" + (params.size() == 1 ? "" : "s") + " "
                    + signature(params) + " but the launch passed " + n + " argument" + (n == 1 ? "" : "s") + " "
                    + slots(args);
        }
        for (int i = 0; i < n; i++) {
            Param p = params.get(i);
            KernelArgs.Kind k = args.kind(i);
            int size = args.size(i);
            String why = size != p.size() ? "is " + size + " bytes, the parameter " + p.size()
                    : fits(k, p) ? null : "is the wrong type: a " + p.type() + " parameter takes " + expected(p);
            if (why != null) {
                return kernel + " argument " + i + ": the PTX parameter " + p.name() + " is " + p.type() + " ("
                        + p.size() + " bytes) but KernelArgs slot " + i + " is " + slot(k, size) + ", which " + why;
            }
        }
        return null;
    }

    private static boolean fits(KernelArgs.Kind k, Param p) {
        return switch (k) {
            // A pointer is a .u64 (or .b64/.s64) in PTX; so is a long long.
            case I32, I64, PTR -> p.cls != 'f';
            case F32, F64 -> p.cls == 'f' || p.cls == 'b';
            case BYTES -> true;
        };
    }

    private static String expected(Param p) {
        if (p.cls == 'f') {
            return p.bits == 64 ? "KernelArgs.f64" : "KernelArgs.f32";
        }
        return p.bits == 64 ? "KernelArgs.i64 or KernelArgs.ptr" : p.bits == 32 ? "KernelArgs.i32" : "KernelArgs.bytes";
    }

    private static String slot(KernelArgs.Kind k, int size) {
        return k.name().toLowerCase(Locale.ROOT) + " (" + size + " bytes)";
    }

    private static String signature(List<Param> params) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < params.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(params.get(i).type());
        }
        return sb.append(')').toString();
    }

    private static String slots(KernelArgs args) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < args.count(); i++) {
            sb.append(i == 0 ? "" : ", ").append(slot(args.kind(i), args.size(i)));
        }
        return sb.append(')').toString();
    }
}
