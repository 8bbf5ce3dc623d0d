// SPDX-License-Identifier: Apache-2.0
package metrale.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Compiles every {@code ```java} block of {@code README.md} and {@code docs/*.md} against the
 * modules' jars on the module path, so a doc example that no longer compiles fails the build and
 * names its file and line.
 *
 * <p>How a block is compiled depends on what it is:
 * <ul>
 * <li>A {@code module NAME { ... }} block, together with every block of the same file that has a
 *     {@code package} line, is one module, compiled as written (no imports added). The README's
 *     minimal program is such a module; this test also runs it on the simulator.</li>
 * <li>A block that declares a top-level class, record, interface or enum is one compilation unit.</li>
 * <li>A block that starts with an annotation is class members (a test method, say).</li>
 * <li>Anything else is statements, compiled as the body of a method.</li>
 * </ul>
 * Blocks without a {@code package} line get the imports in {@link #IMPORTS} (the API, the
 * simulator, telemetry, the demo's classes, JUnit 5, jqwik, AssertJ). A fragment that uses names
 * it does not declare says so in an HTML comment on the line before its fence:
 * {@code <!-- java: with Gpu gpu; int n; -->} adds those declarations to the class around it, and
 * {@code <!-- java: skip REASON -->} leaves a block out (say why).
 */
class DocCodeBlocksTest {

    /** The imports every block without its own {@code package} line gets. */
    static final String IMPORTS = """
            import metrale.gpu.*;
            import metrale.gpu.sim.*;
            import metrale.gpu.nccl.*;
            import metrale.gpu.testing.*;
            import metrale.telemetry.*;
            import metrale.examples.*;
            import java.util.*;
            import java.nio.file.*;
            import java.lang.foreign.*;
            import jdk.jfr.Recording;
            import jdk.jfr.consumer.RecordingFile;
            import org.junit.jupiter.api.*;
            import net.jqwik.api.*;
            import net.jqwik.api.constraints.*;
            import net.jqwik.api.lifecycle.*;
            import static org.assertj.core.api.Assertions.*;
            """;

    private static final Pattern FENCE_OPEN = Pattern.compile("^(\\s*)```java\\s*$");
    private static final Pattern FENCE_CLOSE = Pattern.compile("^\\s*```\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*java:\\s*(skip|with)\\b(.*?)-->\\s*$");
    private static final Pattern MODULE = Pattern.compile("(?m)^\\s*(open\\s+)?module\\s+([\\w.]+)\\s*\\{");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^\\s*package\\s+([\\w.]+)\\s*;");
    private static final Pattern TYPE = Pattern.compile(
            "(?m)^(public\\s+|final\\s+|abstract\\s+|sealed\\s+|non-sealed\\s+)*(class|record|interface|enum)\\s+(\\w+)");

    /** One {@code ```java} block: where it is, what it holds, and its marker. */
    record Block(Path file, int line, String code, String marker, String markerText) {

        String where() {
            return Docs.root().relativize(file) + ":" + line;
        }
    }

    /** The markdown files whose java blocks are compiled. */
    static List<Path> documents() throws IOException {
        Path root = Docs.root();
        List<Path> out = new ArrayList<>();
        out.add(root.resolve("README.md"));
        try (Stream<Path> s = Files.list(root.resolve("docs"))) {
            s.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(out::add);
        }
        return out;
    }

    static List<Block> blocks(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<Block> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE_OPEN.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int indent = open.group(1).length();
            String marker = "";
            String markerText = "";
            for (int k = i - 1; k >= 0; k--) {
                if (lines.get(k).isBlank()) {
                    continue;
                }
                Matcher m = MARKER.matcher(lines.get(k));
                if (m.matches()) {
                    marker = m.group(1);
                    markerText = m.group(2).trim();
                }
                break;
            }
            StringBuilder code = new StringBuilder();
            int j = i + 1;
            for (; j < lines.size() && !FENCE_CLOSE.matcher(lines.get(j)).matches(); j++) {
                String l = lines.get(j);
                int cut = 0;
                while (cut < indent && cut < l.length() && l.charAt(cut) == ' ') {
                    cut++;
                }
                code.append(l.substring(cut)).append('\n');
            }
            assertThat(j).as(file + ":" + (i + 1) + ": a ```java block without its closing fence").isLessThan(lines.size());
            out.add(new Block(file, i + 2, code.toString(), marker, markerText));
            i = j;
        }
        return out;
    }

    @Test
    void theDocumentsHaveJavaBlocks() throws IOException {
        // Guards the extraction itself: the README alone has the module, the program and a twin.
        assertThat(blocks(Docs.root().resolve("README.md"))).hasSizeGreaterThanOrEqualTo(2);
        for (Path d : documents()) {
            for (Block b : blocks(d)) {
                if (b.marker().equals("skip")) {
                    assertThat(b.markerText()).as(b.where() + ": a skipped block says why").isNotBlank();
                }
            }
        }
    }

    @TestFactory
    List<DynamicTest> everyJavaBlockCompiles() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path doc : documents()) {
            List<Block> all = blocks(doc);
            List<Block> moduleParts = new ArrayList<>();
            Block moduleInfo = null;
            for (Block b : all) {
                if (b.marker().equals("skip")) {
                    continue;
                }
                if (MODULE.matcher(b.code()).find()) {
                    moduleInfo = b;
                } else if (PACKAGE.matcher(b.code()).find()) {
                    moduleParts.add(b);
                } else {
                    tests.add(DynamicTest.dynamicTest(b.where(), () -> compileAlone(b)));
                }
            }
            if (moduleInfo != null) {
                Block mi = moduleInfo;
                tests.add(DynamicTest.dynamicTest(mi.where() + " (module, with " + moduleParts.size() + " unit(s))",
                        () -> compileAndRunModule(mi, moduleParts)));
            } else {
                for (Block b : moduleParts) {
                    tests.add(DynamicTest.dynamicTest(b.where(), () -> compileAlone(b)));
                }
            }
        }
        return tests;
    }

    /** A unit, class members or statements, on the class path with the modules readable. */
    private static void compileAlone(Block b) throws IOException {
        String cls = "Block" + b.line();
        String with = b.marker().equals("with") ? b.markerText() : "";
        String head;
        String tail;
        String code = b.code();
        boolean ownImports = PACKAGE.matcher(code).find() || code.contains("import ");
        if (TYPE.matcher(code).find()) {
            head = ownImports ? "" : IMPORTS;
            tail = with.isEmpty() ? "" : "\nclass " + cls + "Given {\n" + with + "\n}\n";
        } else if (code.strip().startsWith("@")) {
            head = IMPORTS + "class " + cls + " {\n" + with + "\n";
            tail = "}\n";
        } else {
            head = IMPORTS + "class " + cls + " {\n" + with + "\nvoid run() throws Exception {\n";
            tail = "}\n}\n";
        }
        String source = head + code + tail;
        Path dir = Files.createTempDirectory("docblock");
        String name = TYPE.matcher(code).find() && code.contains("public ") ? publicTypeName(code) : cls;
        Path src = dir.resolve(name + ".java");
        Files.writeString(src, source, StandardCharsets.UTF_8);
        int firstCodeLine = (int) head.lines().count() + 1;
        List<String> options = new ArrayList<>(List.of("-proc:none", "-d", dir.resolve("out").toString(),
                "--module-path", Docs.modulePath(), "--add-modules", String.join(",", Docs.MODULES),
                "-classpath", Docs.libraryClassPath()));
        compile(b, List.of(src), options, firstCodeLine);
    }

    private static String publicTypeName(String code) {
        Matcher m = Pattern.compile("(?m)^public\\s+(final\\s+|abstract\\s+|sealed\\s+)*(class|record|interface|enum)\\s+(\\w+)")
                .matcher(code);
        return m.find() ? m.group(3) : "Block";
    }

    /** The module block and its package blocks, compiled as written, then run on the simulator. */
    private static void compileAndRunModule(Block moduleInfo, List<Block> parts) throws IOException, InterruptedException,
            URISyntaxException {
        Path dir = Files.createTempDirectory("docmodule");
        Path src = dir.resolve("src");
        Files.createDirectories(src);
        List<Path> files = new ArrayList<>();
        Path mi = src.resolve("module-info.java");
        Files.writeString(mi, moduleInfo.code(), StandardCharsets.UTF_8);
        files.add(mi);
        String mainClass = null;
        for (Block b : parts) {
            Matcher p = PACKAGE.matcher(b.code());
            assertThat(p.find()).isTrue();
            Matcher t = TYPE.matcher(b.code());
            assertThat(t.find()).as(b.where() + ": a block with a package line declares a type").isTrue();
            Path f = src.resolve(p.group(1).replace('.', '/')).resolve(t.group(3) + ".java");
            Files.createDirectories(f.getParent());
            Files.writeString(f, b.code(), StandardCharsets.UTF_8);
            files.add(f);
            if (b.code().contains("static void main(")) {
                mainClass = p.group(1) + "." + t.group(3);
            }
        }
        Path out = dir.resolve("out");
        // As written: no imports added, only the module path a reader is told to use.
        compile(moduleInfo, files, List.of("-proc:none", "-d", out.toString(), "--module-path", Docs.modulePath()), 1);
        if (mainClass == null) {
            return;
        }
        Matcher m = MODULE.matcher(moduleInfo.code());
        assertThat(m.find()).isTrue();
        String module = m.group(2);
        // Run it as the README says, on the simulator, with the test module's saxpy PTX.
        Path ptx = Docs.root().resolve("modules/cuda/src/test/resources/ptx/kernels.ptx");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dmetrale.backend=sim", "--show-module-resolution",
                "-p", Docs.modulePath() + java.io.File.pathSeparator + out, "-m", module + "/" + mainClass, ptx.toString());
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String text = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as(moduleInfo.where() + ": the program runs:\n" + text).isZero();
        assertThat(text).as("the program prints y[0] = 2 * 1 + 0").contains("y[0] = 2.0");
        // What the README says of service binding: metrale.gpu's `uses` binds the backends on the
        // module path, so neither needs --add-modules.
        assertThat(text).as("service binding resolves the CUDA backend").contains("metrale.gpu binds metrale.gpu.cuda");
        assertThat(text).as("service binding resolves the simulator").containsPattern("metrale.gpu binds metrale.gpu.sim");
    }

    private static void compile(Block b, List<Path> files, List<String> options, int firstCodeLine) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(diags, Locale.ROOT, StandardCharsets.UTF_8)) {
            StringWriter log = new StringWriter();
            boolean ok = javac.getTask(log, fm, diags, options, null, fm.getJavaFileObjectsFromPaths(files)).call();
            StringBuilder why = new StringBuilder();
            for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
                if (d.getKind() != Diagnostic.Kind.ERROR) {
                    continue;
                }
                long docLine = d.getSource() != null && d.getSource().getName().endsWith("module-info.java")
                        ? b.line() + d.getLineNumber() - 1
                        : b.line() + d.getLineNumber() - firstCodeLine;
                why.append("\n  ").append(Docs.root().relativize(b.file())).append(':').append(docLine)
                        .append(": ").append(d.getMessage(Locale.ROOT));
            }
            assertThat(ok).as(b.where() + ": the java block does not compile" + why + log
                    + "\n  (a fragment may declare what it uses: <!-- java: with Gpu gpu; int n; --> before its fence)").isTrue();
        }
    }
}
