// SPDX-License-Identifier: Apache-2.0

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the raw FFM bindings of libcuda, NVRTC and NCCL from their prototype lists, as jextract
 * writes its own libclang binding: one class a library, one downcall holder a function, each
 * function returning its raw result. The generated classes are checked in; the build never runs
 * this. Run it from the repository root with JDK 25:
 *
 * <pre>
 *   java scripts/GenBindings.java           # regenerate from every modules/&#42;/src/main/bindings/&#42;.txt
 *   java scripts/GenBindings.java --check   # exit 1, naming the files, if any generated file is stale
 *   java scripts/GenBindings.java [--check] LIST...
 * </pre>
 *
 * A list {@code M/src/main/bindings/NAME.txt} makes {@code M/src/main/java/PACKAGE/CLASS.java}.
 *
 * <p><b>The grammar of a list</b>, one item a line; blank lines and lines starting {@code #} are
 * skipped:
 * <ul>
 * <li>{@code @class metrale.gpu.cuda.internal.LibCuda}: the class to write.</li>
 * <li>{@code @title}, {@code @setting}, {@code @default}, {@code @install}, {@code @hint}: the
 *     library for the loader ({@code NativeLibrary.Spec}): what it is in messages, the constant of
 *     {@code metrale.gpu.Setting} that names it, the names tried without the setting (separated by
 *     spaces), what to install, and why a symbol may be missing.</li>
 * <li>{@code @int TYPE...}, {@code @long TYPE...}: typedefs passed as {@code int} or {@code long}
 *     (enums, handles). A pointer type such as {@code void*} may be listed too.</li>
 * <li>{@code @struct TYPE BYTES}: a struct of {@code BYTES} bytes passed by value.</li>
 * <li>A C prototype, {@code RET NAME(TYPE NAME, ...);} as the header has it, with an optional
 *     trailing {@code // TAG; TAG...}: {@code optional} (the binding works without it; a
 *     {@code NAME$PRESENT} flag says whether it is there), {@code since VERSION} (for messages),
 *     {@code or OTHER} (another exported name of the function, bound where {@code NAME} is missing;
 *     {@code NAME$SYMBOL} says which) and {@code unless OTHER} (required only where {@code OTHER}
 *     is missing).</li>
 * </ul>
 * Built in: {@code int}, {@code unsigned int} ({@code int}), {@code size_t},
 * {@code unsigned long long} ({@code long}), {@code char}, {@code unsigned char} ({@code byte}),
 * {@code float}, {@code void}; every other pointer is a {@code MemorySegment}. {@code const} is
 * ignored.
 */
public class GenBindings {

    private static final String SELF = "scripts/GenBindings.java";
    private static final Pattern PROTO = Pattern.compile("^(.+?)\\b(\\w+)\\s*\\(([^()]*)\\)\\s*;\\s*(?://\\s*(.*))?$");
    private static final Pattern PARAM = Pattern.compile("^(.*?)(\\w+)$");
    private static final Set<String> KEYWORDS = Set.of("abstract", "assert", "boolean", "break", "byte", "case", "catch",
            "char", "class", "const", "continue", "default", "do", "double", "else", "enum", "extends", "final", "finally",
            "float", "for", "goto", "if", "implements", "import", "instanceof", "int", "interface", "long", "native", "new",
            "package", "private", "protected", "public", "return", "short", "static", "strictfp", "super", "switch",
            "synchronized", "this", "throw", "throws", "transient", "try", "void", "volatile", "while", "_");

    /** How a C type travels: the Java type and the layout, or a struct's byte count. */
    record Carrier(String java, String layout, int structBytes) {
        static final Carrier INT = new Carrier("int", "JAVA_INT", 0);
        static final Carrier LONG = new Carrier("long", "JAVA_LONG", 0);
        static final Carrier BYTE = new Carrier("byte", "JAVA_BYTE", 0);
        static final Carrier FLOAT = new Carrier("float", "JAVA_FLOAT", 0);
        static final Carrier ADDRESS = new Carrier("MemorySegment", "ADDRESS", 0);
        static final Carrier VOID = new Carrier("void", null, 0);
    }

    record Param(String type, String name, Carrier carrier) {
    }

    record Proto(String text, Carrier ret, String name, List<Param> params, boolean optional, String since,
                 List<String> or, List<String> unless) {
    }

    /** One list, parsed. */
    static final class Lib {
        final Map<String, String> directives = new LinkedHashMap<>();
        final Map<String, Carrier> types = new LinkedHashMap<>();
        final List<Proto> protos = new ArrayList<>();

        String need(String key, Path list) {
            String v = directives.get(key);
            if (v == null) {
                throw new IllegalArgumentException(list + ": no @" + key);
            }
            return v;
        }
    }

    public static void main(String[] args) throws IOException {
        boolean check = args.length > 0 && args[0].equals("--check");
        List<Path> lists = new ArrayList<>();
        for (int i = check ? 1 : 0; i < args.length; i++) {
            lists.add(Path.of(args[i]));
        }
        if (lists.isEmpty()) {
            if (!Files.isDirectory(Path.of("modules"))) {
                System.err.println("no modules/ here: run java " + SELF + " from the repository root, or name the lists");
                System.exit(2);
            }
            try (Stream<Path> s = Files.list(Path.of("modules"))) {
                for (Path m : s.sorted().toList()) {
                    Path dir = m.resolve("src/main/bindings");
                    if (Files.isDirectory(dir)) {
                        try (Stream<Path> t = Files.list(dir)) {
                            t.filter(p -> p.toString().endsWith(".txt")).sorted().forEach(lists::add);
                        }
                    }
                }
            }
        }
        List<String> stale = new ArrayList<>();
        for (Path list : lists) {
            Lib lib = parse(list);
            String cls = lib.need("class", list);
            Path out = list.toAbsolutePath().getParent().getParent().resolve("java")
                    .resolve(cls.replace('.', '/') + ".java");
            Path root = root(list);
            String text = generate(lib, root.relativize(list.toAbsolutePath()).toString().replace('\\', '/'));
            String shown = root.relativize(out).toString();
            String old = Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : null;
            if (text.equals(old)) {
                continue;
            }
            if (check) {
                stale.add(shown + firstDifference(old, text));
            } else {
                Files.writeString(out, text, StandardCharsets.UTF_8);
                System.out.println("wrote " + shown);
            }
        }
        if (!stale.isEmpty()) {
            System.out.println("stale generated bindings (run java " + SELF + " from the repository root):");
            stale.forEach(s -> System.out.println("  " + s));
            System.exit(1);
        }
    }

    /** {@return the repository root above a list: where this script is, so the output does not depend on the working directory} */
    private static Path root(Path list) {
        for (Path d = list.toAbsolutePath().getParent(); d != null; d = d.getParent()) {
            if (Files.exists(d.resolve(SELF))) {
                return d;
            }
        }
        throw new IllegalArgumentException(list + " is not below a directory holding " + SELF);
    }

    private static String firstDifference(String old, String text) {
        if (old == null) {
            return ": missing";
        }
        List<String> a = old.lines().toList();
        List<String> b = text.lines().toList();
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            String x = i < a.size() ? a.get(i) : "<end>";
            String y = i < b.size() ? b.get(i) : "<end>";
            if (!x.equals(y)) {
                return ":" + (i + 1) + ": has  " + x.strip() + "\n    wants " + y.strip();
            }
        }
        return ": line endings differ";
    }

    // ---- parsing ------------------------------------------------------------------------------

    static Lib parse(Path list) {
        Lib lib = new Lib();
        List<String> lines;
        try {
            lines = Files.readAllLines(list, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            String where = list + ":" + (i + 1);
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("@")) {
                String[] kv = line.substring(1).split("\\s+", 2);
                String value = kv.length > 1 ? kv[1].strip() : "";
                switch (kv[0]) {
                    case "int" -> words(value).forEach(t -> lib.types.put(normalize(t), Carrier.INT));
                    case "long" -> words(value).forEach(t -> lib.types.put(normalize(t), Carrier.LONG));
                    case "struct" -> {
                        String[] w = value.split("\\s+");
                        lib.types.put(w[0], new Carrier("MemorySegment", w[0] + "$LAYOUT", Integer.parseInt(w[1])));
                    }
                    case "class", "title", "setting", "default", "install", "hint" -> lib.directives.put(kv[0], value);
                    default -> throw new IllegalArgumentException(where + ": unknown directive @" + kv[0]);
                }
                continue;
            }
            lib.protos.add(proto(lib, line, where));
        }
        return lib;
    }

    private static List<String> words(String s) {
        return List.of(s.split("\\s+"));
    }

    /** {@code const char * const *} becomes {@code char**}: what a type is, for the table. */
    static String normalize(String type) {
        return type.replaceAll("\\bconst\\b", " ").replaceAll("\\s*\\*\\s*", "*").replaceAll("\\s+", " ").strip();
    }

    static Proto proto(Lib lib, String line, String where) {
        Matcher m = PROTO.matcher(line);
        if (!m.matches()) {
            throw new IllegalArgumentException(where + ": not a prototype: " + line);
        }
        String text = line.replaceAll("\\s*//.*$", "");
        Carrier ret = carrier(lib, m.group(1), where, true);
        List<Param> params = new ArrayList<>();
        String ps = m.group(3).strip();
        if (!ps.equals("void") && !ps.isEmpty()) {
            for (String p : ps.split(",")) {
                Matcher pm = PARAM.matcher(p.strip());
                if (!pm.matches() || pm.group(1).isBlank()) {
                    throw new IllegalArgumentException(where + ": a parameter needs a type and a name: " + p.strip());
                }
                String name = KEYWORDS.contains(pm.group(2)) ? pm.group(2) + "_" : pm.group(2);
                params.add(new Param(pm.group(1).strip(), name, carrier(lib, pm.group(1), where, false)));
            }
        }
        boolean optional = false;
        String since = null;
        List<String> or = new ArrayList<>();
        List<String> unless = new ArrayList<>();
        if (m.group(4) != null) {
            for (String tag : m.group(4).split(";")) {
                String[] w = tag.strip().split("\\s+", 2);
                switch (w[0]) {
                    case "optional" -> optional = true;
                    case "since" -> since = w[1];
                    case "or" -> or.add(w[1]);
                    case "unless" -> unless.add(w[1]);
                    default -> throw new IllegalArgumentException(where + ": unknown tag '" + tag.strip() + "'");
                }
            }
        }
        return new Proto(text, ret, m.group(2), params, optional, since, or, unless);
    }

    static Carrier carrier(Lib lib, String type, String where, boolean isReturn) {
        String t = normalize(type);
        Carrier c = lib.types.get(t);
        if (c != null) {
            return c;
        }
        if (t.endsWith("*")) {
            return Carrier.ADDRESS;
        }
        return switch (t) {
            case "int", "unsigned int", "unsigned" -> Carrier.INT;
            case "size_t", "unsigned long long", "long long" -> Carrier.LONG;
            case "char", "unsigned char" -> Carrier.BYTE;
            case "float" -> Carrier.FLOAT;
            case "void" -> {
                if (!isReturn) {
                    throw new IllegalArgumentException(where + ": a void parameter");
                }
                yield Carrier.VOID;
            }
            default -> throw new IllegalArgumentException(where + ": unknown type '" + t
                    + "': declare it with @int, @long or @struct");
        };
    }

    // ---- writing ------------------------------------------------------------------------------

    static String generate(Lib lib, String listPath) {
        String cls = lib.directives.get("class");
        String pkg = cls.substring(0, cls.lastIndexOf('.'));
        String simple = cls.substring(cls.lastIndexOf('.') + 1);
        Set<String> layouts = new TreeSet<>();
        boolean segments = false;
        boolean structs = false;
        for (Proto p : lib.protos) {
            List<Carrier> all = new ArrayList<>(p.params().stream().map(Param::carrier).toList());
            all.add(p.ret());
            for (Carrier c : all) {
                if (c.structBytes() > 0) {
                    structs = true;
                    segments = true;
                } else if (c.layout() != null) {
                    layouts.add(c.layout());
                    segments |= c == Carrier.ADDRESS;
                }
            }
        }
        if (structs) {
            layouts.add("JAVA_BYTE");
        }
        StringBuilder o = new StringBuilder();
        o.append("// SPDX-License-Identifier: Apache-2.0\n");
        o.append("// Generated by ").append(SELF).append(" from ").append(listPath).append(". Do not edit: edit the\n");
        o.append("// list and run `java ").append(SELF).append("` from the repository root.\n");
        o.append("package ").append(pkg).append(";\n\n");
        for (String l : layouts) {
            o.append("import static java.lang.foreign.ValueLayout.").append(l).append(";\n");
        }
        o.append("\n");
        o.append("import java.lang.foreign.Arena;\n");
        o.append("import java.lang.foreign.FunctionDescriptor;\n");
        o.append("import java.lang.foreign.Linker;\n");
        if (structs) {
            o.append("import java.lang.foreign.MemoryLayout;\n");
        }
        if (segments) {
            o.append("import java.lang.foreign.MemorySegment;\n");
        }
        if (structs) {
            o.append("import java.lang.foreign.StructLayout;\n");
        }
        o.append("import java.lang.foreign.SymbolLookup;\n");
        o.append("import java.lang.invoke.MethodHandle;\n");
        o.append("import java.util.List;\n");
        o.append("import java.util.Map;\n");
        o.append("import metrale.gpu.Setting;\n");
        o.append("import metrale.gpu.internal.ffi.Generated;\n");
        o.append("import metrale.gpu.internal.ffi.NativeLibrary;\n\n");
        o.append("/**\n");
        o.append(" * ").append(capitalize(lib.directives.get("title"))).append(", raw: one downcall for each prototype of {@code ")
                .append(listPath.substring(listPath.lastIndexOf('/') + 1)).append("},\n");
        o.append(" * linked on its first call, returning what the function returns. Status codes are not checked here.\n");
        o.append(" */\n");
        o.append("@Generated(value = \"").append(SELF).append("\", from = \"").append(listPath).append("\")\n");
        o.append("final class ").append(simple).append(" {\n\n");
        o.append("    private static final Linker LINKER = Linker.nativeLinker();\n\n");
        o.append("    /** The library, opened as this class initializes; what keeps it from use is {@link NativeLibrary#failure()}. */\n");
        o.append("    static final NativeLibrary LIB = NativeLibrary.open(new NativeLibrary.Spec(\n");
        o.append("            ").append(quote(lib.directives.get("title"))).append(",\n");
        o.append("            Setting.").append(lib.directives.get("setting")).append(",\n");
        o.append("            List.of(").append(String.join(", ", words(lib.directives.get("default")).stream()
                .map(GenBindings::quote).toList())).append("),\n");
        o.append("            ").append(quote(lib.directives.get("install"))).append(",\n");
        o.append("            ").append(quote(lib.directives.get("hint"))).append(",\n");
        List<String> required = new ArrayList<>();
        for (Proto p : lib.protos) {
            if (!p.optional()) {
                List<String> any = new ArrayList<>(List.of(p.name()));
                any.addAll(p.or());
                any.addAll(p.unless());
                required.add("List.of(" + String.join(", ", any.stream().map(GenBindings::quote).toList()) + ")");
            }
        }
        o.append("            List.of(\n");
        o.append(String.join(",\n", required.stream().map(r -> "                    " + r).toList())).append("),\n");
        List<String> since = new ArrayList<>();
        for (Proto p : lib.protos) {
            if (p.since() != null) {
                since.add("Map.entry(" + quote(p.name()) + ", " + quote(p.since()) + ")");
            }
        }
        if (since.isEmpty()) {
            o.append("            Map.of()),\n");
        } else {
            o.append("            Map.ofEntries(\n");
            o.append(String.join(",\n", since.stream().map(r -> "                    " + r).toList())).append(")),\n");
        }
        o.append("            ").append(simple).append(".class.getModule(),\n");
        o.append("            name -> SymbolLookup.libraryLookup(name, Arena.global()),\n");
        o.append("            (symbol, descriptor) -> LINKER.downcallHandle(symbol, descriptor));\n");
        for (Map.Entry<String, Carrier> t : lib.types.entrySet()) {
            if (t.getValue().structBytes() > 0) {
                o.append("\n    /** {@code ").append(t.getKey()).append("}, ").append(t.getValue().structBytes())
                        .append(" bytes passed by value. */\n");
                o.append("    static final StructLayout ").append(t.getValue().layout())
                        .append(" = MemoryLayout.structLayout(MemoryLayout.sequenceLayout(").append(t.getValue().structBytes())
                        .append(", JAVA_BYTE)).withName(").append(quote(t.getKey())).append(");\n");
            }
        }
        for (Proto p : lib.protos) {
            if (p.optional()) {
                o.append("\n    /** Whether the library exports {@code ").append(p.name()).append("}")
                        .append(p.since() != null ? " (" + p.since() + "+)" : "").append(". */\n");
                o.append("    static final boolean ").append(p.name()).append("$PRESENT = LIB.has(").append(quote(p.name()))
                        .append(");\n");
            }
            if (!p.or().isEmpty()) {
                List<String> names = new ArrayList<>(List.of(p.name()));
                names.addAll(p.or());
                o.append("\n    /** The exported name {@link #").append(p.name()).append("} calls: the first of ")
                        .append(String.join(", ", names.stream().map(n -> "{@code " + n + "}").toList()))
                        .append(" the library has. */\n");
                o.append("    static final String ").append(p.name()).append("$SYMBOL = LIB.firstPresent(")
                        .append(String.join(", ", names.stream().map(GenBindings::quote).toList())).append(");\n");
            }
        }
        o.append("\n    private ").append(simple).append("() {\n    }\n");
        for (Proto p : lib.protos) {
            method(o, p);
        }
        o.append("}\n");
        return o.toString();
    }

    private static void method(StringBuilder o, Proto p) {
        String params = String.join(", ", p.params().stream().map(x -> x.carrier().java() + " " + x.name()).toList());
        String args = String.join(", ", p.params().stream().map(Param::name).toList());
        List<String> layouts = new ArrayList<>(p.params().stream().map(x -> x.carrier().layout()).toList());
        String descriptor = p.ret() == Carrier.VOID
                ? "FunctionDescriptor.ofVoid(" + String.join(", ", layouts) + ")"
                : "FunctionDescriptor.of(" + String.join(", ", prepend(p.ret().layout(), layouts)) + ")";
        o.append("\n    /**\n");
        o.append("     * {@snippet lang=c : ").append(p.text()).append(" }\n");
        if (p.optional()) {
            o.append("     * Optional").append(p.since() != null ? " (" + p.since() + "+)" : "").append(": see {@link #")
                    .append(p.name()).append("$PRESENT}.\n");
        } else if (p.since() != null) {
            o.append("     * Since ").append(p.since()).append(".\n");
        }
        if (!p.or().isEmpty()) {
            o.append("     * Calls {@link #").append(p.name()).append("$SYMBOL}.\n");
        }
        if (!p.unless().isEmpty()) {
            o.append("     * Required only where the library lacks ")
                    .append(String.join(" and ", p.unless().stream().map(n -> "{@code " + n + "}").toList())).append(".\n");
        }
        o.append("     */\n");
        o.append("    static ").append(p.ret().java()).append(" ").append(p.name()).append("(").append(params).append(") {\n");
        o.append("        try {\n");
        String call = p.name() + ".HANDLE.invokeExact(" + args + ")";
        if (p.ret() == Carrier.VOID) {
            o.append("            ").append(call).append(";\n");
        } else {
            o.append("            return (").append(p.ret().java()).append(") ").append(call).append(";\n");
        }
        o.append("        } catch (Error | RuntimeException e) {\n");
        o.append("            throw e;\n");
        o.append("        } catch (Throwable t) {\n");
        o.append("            throw new AssertionError(\"should not reach here\", t);\n");
        o.append("        }\n");
        o.append("    }\n\n");
        o.append("    private static final class ").append(p.name()).append(" {\n");
        String symbol = p.or().isEmpty() ? quote(p.name()) : p.name() + "$SYMBOL";
        o.append("        static final MethodHandle HANDLE = LIB.link(").append(symbol).append(",\n");
        o.append("                ").append(descriptor).append(");\n");
        o.append("    }\n");
    }

    private static List<String> prepend(String first, List<String> rest) {
        List<String> l = new ArrayList<>(List.of(first));
        l.addAll(rest);
        return l;
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String capitalize(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
